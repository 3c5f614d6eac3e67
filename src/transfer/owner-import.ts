import { applySettingsPatch, parseSettings } from '../chatbots/chatbot-settings.ts';
import {
  checkFallback,
  checkModel,
  checkName,
  checkProvider,
  checkSystemPrompt,
  type Chatbot,
} from '../chatbots/chatbot.ts';
import type { Clock } from '../clock.ts';
import type { Account } from '../contract/account.ts';
import type { WebhookWithSecret } from '../contract/webhook.ts';
import { ConflictError, DomainError, ValidationError } from '../errors.ts';
import type { AccountStore } from '../store/account-store.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { ConnectionStore } from '../store/connection-store.ts';
import type { IngestionQueue } from '../store/ingestion-queue.ts';
import type { LeadStore } from '../store/lead-store.ts';
import type { SourceStore } from '../store/source-store.ts';
import type { TransferStore } from '../store/transfer-store.ts';
import type { WebhookStore } from '../store/webhook-store.ts';
import { checkNewSource, type NewSource } from '../sources/source.ts';
import { BACKEND_ONLY_TYPES, isConnectorType, SERVICE_LABELS } from '../sources/connectors/connector.ts';
import { connectorFor } from '../sources/connectors/connector-registry.ts';
import { parseTimestamp } from '../timestamp.ts';
import type { ExportStream } from './export-stream.ts';
import type { ChatbotRecord, ConversationExport, LeadRecord, SourceRecord, WebhookRecord } from './export-format.ts';

/** What an import writes with. */
export interface ImportDeps {
  accounts: AccountStore;
  chatbots: ChatbotStore;
  sources: SourceStore;
  connections: ConnectionStore;
  ingestion: IngestionQueue;
  transfer: TransferStore;
  leads: LeadStore;
  webhooks: WebhookStore;
  clock: Pick<Clock, 'nowMicros'>;
}

/** What `import` prints. */
export interface ImportResult {
  user_id: string;
  email: string;
  /** `created` from the export's account, or `existing` (`--user`). */
  account: 'created' | 'existing';
  imported: { chatbots: number; sources: number; conversations: number; messages: number; leads: number };
  /** Sources queued for the gateways to ingest (the CLI never ingests). */
  sources_queued: number;
  /** Sources stored failed, with why (a connector source whose connection did not come with it). */
  sources_failed: Array<{ id: string; title: string; error: string }>;
  /** The ids that were taken here already, and the new ones their records got. */
  new_ids: Record<string, string>;
  /** The webhooks made again, with their new secrets (shown here only). */
  webhooks: WebhookWithSecret[];
  /** Webhooks that could not be made here (a destination this install refuses), with why. */
  webhooks_refused: Array<{ url: string; error: string }>;
}

/**
 * Writes an export stream (checked whole by readExportStream) into this install: the account from
 * the export (or `userId`'s, an existing one), then its chatbots, sources, conversations, leads and
 * webhooks. Ids are kept unless taken here (then new ones, listed in `new_ids`); times are kept. Sources
 * are queued for the gateways to ingest; no webhook event is sent for anything imported. Every record's
 * own rules are checked before the first write, so a bad record leaves nothing half-imported.
 */
export async function importOwner(
  deps: ImportDeps,
  stream: ExportStream,
  options: { userId?: string; plan?: string },
): Promise<ImportResult> {
  checkRecords(stream);
  const { account, created } = await targetAccount(deps, stream, options);
  const result: ImportResult = {
    user_id: account.id,
    email: account.email,
    account: created ? 'created' : 'existing',
    imported: { chatbots: 0, sources: 0, conversations: 0, messages: 0, leads: 0 },
    sources_queued: 0,
    sources_failed: [],
    new_ids: {},
    webhooks: [],
    webhooks_refused: [],
  };
  if (created && account.id !== stream.header.account.id) result.new_ids[stream.header.account.id] = account.id;
  const chatbots = new Map<string, string>();
  const writer = new RecordWriter(deps, account.id, result, chatbots);
  for (const { line, record } of stream.records) {
    try {
      if (record.type === 'chatbot') chatbots.set(record.chatbot.id, (await writer.chatbot(record)).id);
      else if (record.type === 'source') await writer.source(record);
      else if (record.type === 'conversation') await writer.conversation(record);
      else if (record.type === 'lead') await writer.lead(record);
      else await writer.webhook(record);
    } catch (error) {
      if (error instanceof DomainError) throw new ValidationError(`Line ${line}: ${error.detail}`, { cause: error });
      throw error;
    }
  }
  return result;
}

/** The records' own rules (those the stores apply as they write), checked before anything is written. */
function checkRecords(stream: ExportStream): void {
  for (const { line, record } of stream.records) {
    try {
      if (record.type === 'chatbot') {
        const { chatbot } = record;
        checkName(chatbot.name);
        checkProvider(chatbot.provider);
        checkModel(chatbot.model);
        checkSystemPrompt(chatbot.system_prompt);
        checkFallback(chatbot.fallback_message);
        applySettingsPatch(parseSettings(undefined), chatbot.settings);
      } else if (record.type === 'source') {
        checkNewSource(newSource(record));
        const wanted = record.source.type === 'text' ? 'utf8' : record.source.type === 'file' ? 'base64' : null;
        if ((record.content?.encoding ?? null) !== wanted) {
          throw new ValidationError(
            wanted ? `a ${record.source.type} source needs its content (${wanted}).` : 'content must be null.',
          );
        }
      }
    } catch (error) {
      if (error instanceof DomainError) throw new ValidationError(`Line ${line}: ${error.detail}`, { cause: error });
      throw error;
    }
  }
}

/** The account the records go to: an existing one (`--user`), or the export's, created here. */
async function targetAccount(
  deps: ImportDeps,
  stream: ExportStream,
  options: { userId?: string; plan?: string },
): Promise<{ account: Account; created: boolean }> {
  if (options.userId !== undefined) return { account: await deps.accounts.get(options.userId), created: false };
  const exported = stream.header.account;
  const existing = await deps.accounts.findIdByEmail(exported.email);
  if (existing !== undefined) {
    throw new ConflictError(`A user with this email already exists: import into that account with --user ${existing}.`);
  }
  const account = await deps.accounts.restore({
    id: exported.id,
    email: exported.email,
    plan: options.plan ?? exported.plan,
    createdAtMicros: micros(exported.created_at),
    connectors: exported.connectors,
  });
  return { account, created: true };
}

/** Writes one record after another into the account, the chatbots' ids mapped to the ones they got here. */
class RecordWriter {
  private readonly deps: ImportDeps;
  private readonly userId: string;
  private readonly result: ImportResult;
  private readonly chatbotIds: Map<string, string>;

  constructor(deps: ImportDeps, userId: string, result: ImportResult, chatbotIds: Map<string, string>) {
    this.deps = deps;
    this.userId = userId;
    this.result = result;
    this.chatbotIds = chatbotIds;
  }

  async chatbot({ chatbot }: ChatbotRecord): Promise<Chatbot> {
    const restored = await this.deps.chatbots.restore(this.userId, {
      id: chatbot.id,
      name: chatbot.name,
      slug: chatbot.slug,
      provider: chatbot.provider,
      model: chatbot.model,
      systemPrompt: chatbot.system_prompt,
      fallbackMessage: chatbot.fallback_message,
      isActive: chatbot.is_active,
      createdAtMicros: micros(chatbot.created_at),
      settings: chatbot.settings,
    });
    this.renamed(chatbot.id, restored.id);
    this.result.imported.chatbots += 1;
    return restored;
  }

  async source(record: SourceRecord): Promise<void> {
    const chatbotId = this.chatbotId(record.source.chatbot_id);
    const { failed, connectionId } = await this.connectorSetup(record);
    const source = await this.deps.sources.create(
      chatbotId,
      { ...newSource(record), ...(connectionId ? { connectionId } : {}) },
      { id: record.source.id, createdAtMicros: micros(record.source.created_at), ...(failed ? { failed } : {}) },
    );
    this.renamed(record.source.id, source.id);
    this.result.imported.sources += 1;
    if (failed) {
      this.result.sources_failed.push({ id: source.id, title: source.title, error: failed });
      return;
    }
    await this.deps.ingestion.enqueue(chatbotId, source.id, this.deps.clock.nowMicros());
    this.result.sources_queued += 1;
  }

  async conversation({ conversation }: ConversationExport): Promise<void> {
    const chatbotId = this.chatbotId(conversation.chatbot_id);
    if (!(await this.deps.transfer.restore(chatbotId, { ...conversation, chatbot_id: chatbotId }))) {
      throw new ConflictError(`the chatbot has a conversation under session ${conversation.session_id} already.`);
    }
    this.result.imported.conversations += 1;
    this.result.imported.messages += conversation.messages.length;
  }

  async lead({ lead }: LeadRecord): Promise<void> {
    const chatbotId = this.chatbotId(lead.chatbot_id);
    // A session has one lead: one left already (or a lead with this id) is not written twice.
    if (await this.deps.leads.restore({ ...lead, chatbot_id: chatbotId }, micros(lead.created_at))) {
      this.result.imported.leads += 1;
    }
  }

  async webhook({ webhook }: WebhookRecord): Promise<void> {
    const chatbotId = this.chatbotId(webhook.chatbot_id);
    try {
      const created = await this.deps.webhooks.create(chatbotId, webhook.url, webhook.events, {
        standardWebhooks: webhook.standard_webhooks,
      });
      if (!webhook.active) await this.deps.webhooks.setActive(created.id, false);
      this.renamed(webhook.id, created.id);
      this.result.webhooks.push(created);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      this.result.webhooks_refused.push({ url: webhook.url, error: error.detail });
    }
  }

  /**
   * The connection a connector source reads through here, or why it cannot be read: its type is not
   * enabled for the account, or it needs a connection the account does not have (connections, with
   * their secrets, stay behind). The account's newest working connection of the service is used.
   */
  private async connectorSetup(record: SourceRecord): Promise<{ failed?: string; connectionId?: string }> {
    const type = record.source.type;
    if (!isConnectorType(type)) return {};
    if (
      BACKEND_ONLY_TYPES.includes(type) &&
      !(await this.deps.accounts.enabledConnectors(this.userId)).includes(type)
    ) {
      return { failed: `Source type ${type} is not enabled for this account.` };
    }
    const connector = await connectorFor(type);
    const service = connector.service;
    if (service === null) return {};
    const own = (await this.deps.connections.listForUser(this.userId)).filter((c) => c.service === service);
    const usable = own.find((c) => c.status === 'active') ?? own[0];
    if (usable) return { connectionId: usable.id };
    // One that read without a connection there reads without one here (a public help centre).
    if (connector.connectionOptional && record.source.connection_service === null) return {};
    return {
      failed: `Connect ${SERVICE_LABELS[service]}, then add this source again: its connection did not come with the export.`,
    };
  }

  private chatbotId(exported: string): string {
    return this.chatbotIds.get(exported)!;
  }

  private renamed(from: string, to: string): void {
    if (from !== to) this.result.new_ids[from] = to;
  }
}

/** A source record as the store takes a new source. */
function newSource(record: SourceRecord): NewSource {
  const { source, content } = record;
  const bytes =
    content === null ? undefined : content.encoding === 'utf8' ? content.data : Buffer.from(content.data, 'base64');
  return {
    type: source.type,
    title: source.title,
    ...(source.url ? { url: source.url } : {}),
    ...(bytes !== undefined ? { content: bytes } : {}),
    ...(source.reference ? { reference: source.reference } : {}),
    ...(source.refresh ? { refresh: source.refresh } : {}),
  };
}

function micros(timestamp: string): number {
  return parseTimestamp(timestamp)!;
}
