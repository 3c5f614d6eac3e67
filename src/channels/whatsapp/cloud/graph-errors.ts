import { UpstreamError } from '../../../errors.ts';
import { WINDOW_CLOSED } from './config.ts';

/** An error as the Graph API reports it (`{"error": {…}}`), or a status callback's `errors[]` entry. */
export interface GraphErrorBody {
  code?: number;
  message?: string;
  title?: string;
  error_data?: { details?: string };
}

/**
 * Meta refused a Cloud API call (or reported a sent message failed): its error code, and what it
 * means in words an owner or agent can act on (`detail`). The remote said no; compare
 * {@link GraphNetworkError}.
 */
export class GraphApiError extends UpstreamError {
  override name = 'GraphApiError';
  readonly code: number | undefined;
  readonly status: number;

  constructor(status: number, body: GraphErrorBody) {
    super(graphErrorMessage(body));
    this.status = status;
    this.code = body.code;
  }
}

/** Meta's Graph API could not be reached (refused, timed out, not a public address). */
export class GraphNetworkError extends UpstreamError {
  override name = 'GraphNetworkError';

  constructor(reason: string, options?: ErrorOptions) {
    super(`WhatsApp's Cloud API could not be reached: ${reason}`, options);
  }
}

/** Codes Meta sends for throttling and passing outages: the call is tried again after a wait. */
const RETRYABLE = new Set([1, 2, 4, 80007, 130429, 131000, 131016, 131056]);

/** Whether a failed call is worth trying again: throttled, or Meta was briefly unavailable. */
export function retryable(status: number, code: number | undefined): boolean {
  return status === 429 || status >= 500 || (code !== undefined && RETRYABLE.has(code));
}

/** What the codes owners and agents meet mean, and what to do. */
const MEANINGS: Record<number, string> = {
  131047: WINDOW_CLOSED,
  130429: 'WhatsApp rate limit hit: the Cloud API throughput of this number was reached; try again shortly.',
  131056: 'Too many messages to this visitor in a short time (WhatsApp pair rate limit); try again shortly.',
  131048:
    'WhatsApp spam rate limit hit: messages from this number were blocked or flagged; check its quality in WhatsApp Manager.',
  131026:
    'WhatsApp could not deliver the message: the number may not be on WhatsApp, its owner may not have accepted the latest terms, or may use an old version of WhatsApp.',
  131030: 'The visitor is not on the allowed list of the test number: add them in the Meta app, or use a live number.',
  131031: 'The WhatsApp Business account is locked: see Business Support Home in Meta.',
  131051: 'WhatsApp does not support this message type.',
  133010: 'The phone number is not registered with the Cloud API: register it in the Meta app.',
  190: 'The WhatsApp access token has expired or was revoked: connect again with a new system-user token.',
  100: 'WhatsApp refused a parameter (invalid parameter): check the phone number id.',
  10: 'The access token lacks a permission: give the system user whatsapp_business_messaging and whatsapp_business_management.',
  4: 'The Meta app hit its Graph API call limit; try again shortly.',
  80007: 'The WhatsApp Business account hit its rate limit; try again shortly.',
  368: 'The WhatsApp Business account is blocked for policy violations: see Business Support Home in Meta.',
};

/** A Graph error as a sentence: its meaning where the code is known, else Meta's own words with the code. */
export function graphErrorMessage(body: GraphErrorBody): string {
  const code = body.code;
  if (code !== undefined && MEANINGS[code]) return MEANINGS[code];
  if (code !== undefined && code >= 200 && code <= 299) return MEANINGS[10]!;
  const details = body.error_data?.details;
  const said = [body.title ?? body.message, details].filter((part) => part && part.trim()).join(': ');
  return `WhatsApp refused the message${code === undefined ? '' : ` (code ${code})`}${said ? `: ${said}` : '.'}`;
}
