import type { WhatsAppCloudConnectBody, WhatsAppCloudStatus } from '../../../contract/messaging-channels.ts';
import { ValidationError } from '../../../errors.ts';
import { formatTimestamp } from '../../../timestamp.ts';
import { TEXT_ONLY_NOTICE } from '../../channel-notices.ts';
import type { WhatsAppLinker } from '../linker.ts';
import type { CloudConnection, WhatsAppCloudStore } from './cloud-store.ts';
import { cloudWebhookPath, isGraphId, MAX_NOTICE_LENGTH, newVerifyToken } from './config.ts';
import type { GraphApi } from './graph-api.ts';
import { GraphApiError } from './graph-errors.ts';

/** What connecting takes, each field still to be checked (from the CLI's options or a dashboard body). */
export type CloudConnectInput = { readonly [K in keyof WhatsAppCloudConnectBody]?: unknown };

/** What connecting reads of the number from Meta. */
interface PhoneNumberFields {
  display_phone_number?: string;
  verified_name?: string;
}

/** A credential as pasted: no spaces, of a sensible length. */
const CREDENTIAL = /^\S{16,1024}$/;

/**
 * Connecting a chatbot's WhatsApp to the Business Cloud API and disconnecting it, for the CLI and the
 * dashboard alike. The phone number id and token are checked with Meta (the number's display number
 * and verified name are read), the app is subscribed to the business account's webhooks when its id
 * is given, a linked device is unlinked (one transport per chatbot), and the connection is stored
 * with its secrets sealed and a verify token of Switchboard's making, kept across later changes so
 * the webhook set up in Meta stays valid.
 */
export class WhatsAppCloudConnector {
  private readonly store: WhatsAppCloudStore;
  private readonly graph: GraphApi;
  private readonly linker: Pick<WhatsAppLinker, 'disconnect'>;
  private readonly publicUrl: () => Promise<string | undefined>;

  constructor(deps: {
    store: WhatsAppCloudStore;
    graph: GraphApi;
    linker: Pick<WhatsAppLinker, 'disconnect'>;
    publicUrl: () => Promise<string | undefined>;
  }) {
    this.store = deps.store;
    this.graph = deps.graph;
    this.linker = deps.linker;
    this.publicUrl = deps.publicUrl;
  }

  async connect(chatbotId: string, input: CloudConnectInput): Promise<WhatsAppCloudStatus> {
    const phoneNumberId = input.phone_number_id;
    if (!isGraphId(phoneNumberId)) {
      throw new ValidationError(
        'phone_number_id must be the phone number id (digits) from WhatsApp → API Setup in the Meta app.',
      );
    }
    const businessAccountId = optionalId(input.business_account_id);
    const current = await this.store.find(chatbotId);
    // A change of the same number may leave the secrets out: the stored ones stay.
    const same = current?.phoneNumberId === phoneNumberId ? current : undefined;
    const token = credential(input.token, same?.token, 'token', 'a system-user access token');
    const appSecret = credential(input.app_secret, same?.appSecret, 'app_secret', "the Meta app's secret");
    const number = await this.checked(() =>
      this.graph.get<PhoneNumberFields>(`/${phoneNumberId}?fields=display_phone_number,verified_name`, token),
    );
    if (businessAccountId) {
      await this.checked(() => this.graph.post(`/${businessAccountId}/subscribed_apps`, token, {}));
    }
    await this.linker.disconnect(chatbotId);
    const stored = await this.store.connect({
      chatbotId,
      phoneNumberId,
      businessAccountId,
      token,
      appSecret,
      verifyToken: current?.verifyToken ?? newVerifyToken(),
      textOnlyNotice: notice(input.text_only_notice, same?.textOnlyNotice),
      displayPhoneNumber: number.display_phone_number ?? null,
      verifiedName: number.verified_name ?? null,
    });
    return this.view(stored);
  }

  /** False when the chatbot's WhatsApp did not go through the Cloud API. */
  disconnect(chatbotId: string): Promise<boolean> {
    return this.store.disconnect(chatbotId);
  }

  /** The chatbot's Cloud API connection as shown (never its token or app secret), or null. */
  async status(chatbotId: string): Promise<WhatsAppCloudStatus | null> {
    const connection = await this.store.find(chatbotId);
    return connection ? this.view(connection) : null;
  }

  /** A Graph call made while someone waits: a refusal is the owner's input to fix (400). */
  private async checked<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof GraphApiError) throw new ValidationError(`The Cloud API refused: ${error.detail}`);
      throw error;
    }
  }

  private async view(connection: CloudConnection): Promise<WhatsAppCloudStatus> {
    const path = cloudWebhookPath(connection.chatbotId);
    const base = await this.publicUrl();
    return {
      chatbot_id: connection.chatbotId,
      transport: 'cloud',
      phone_number_id: connection.phoneNumberId,
      business_account_id: connection.businessAccountId,
      display_phone_number: connection.displayPhoneNumber,
      verified_name: connection.verifiedName,
      webhook_path: path,
      webhook_url: base ? new URL(path, base).href : null,
      verify_token: connection.verifyToken,
      text_only_notice: connection.textOnlyNotice,
      connected_at: formatTimestamp(connection.connectedAt),
    };
  }
}

function optionalId(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (!isGraphId(value)) {
    throw new ValidationError('business_account_id must be the WhatsApp Business account id (digits), or left out.');
  }
  return value;
}

/** A secret as given, or the stored one when it was left out on a change of the same number. */
function credential(value: unknown, stored: string | undefined, field: string, what: string): string {
  if ((value === undefined || value === null || value === '') && stored !== undefined) return stored;
  if (typeof value !== 'string' || !CREDENTIAL.test(value)) {
    throw new ValidationError(`${field} is required: ${what}, without spaces.`);
  }
  return value;
}

/** The notice as given (empty: the default), or the stored one when left out on a change. */
function notice(value: unknown, stored: string | undefined): string {
  if (value === undefined || value === null) return stored ?? TEXT_ONLY_NOTICE;
  if (typeof value !== 'string' || value.trim().length > MAX_NOTICE_LENGTH) {
    throw new ValidationError(`text_only_notice must be text of at most ${MAX_NOTICE_LENGTH} characters.`);
  }
  return value.trim() || TEXT_ONLY_NOTICE;
}
