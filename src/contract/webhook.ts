/**
 * Webhooks and their delivery log as the dashboard shows them. Part of the contract (see README.md
 * beside this file). The event name lists are the runtime values here: the server checks against
 * them and the dashboard offers them.
 */

/** SPEC's four event names: what a webhook made without choosing otherwise receives. */
export const SPEC_EVENT_NAMES = [
  'lead.captured',
  'conversation.started',
  'message.received',
  'conversation.escalated',
] as const;

/**
 * Events beyond SPEC (DESIGN.md, opt-in): a human agent took a conversation over or handed it back.
 * Only webhooks that name them receive them.
 */
export const LIFECYCLE_EVENT_NAMES = ['conversation.taken_over', 'conversation.released'] as const;

/** Every event a webhook may select: SPEC's, then those beyond it. */
export const EVENT_NAMES = [...SPEC_EVENT_NAMES, ...LIFECYCLE_EVENT_NAMES] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/**
 * `GET /dashboard/api/chatbots/{id}/webhooks` (one element), `GET` and `PATCH …/webhooks/{id}`: with
 * its secret.
 */
export interface Webhook {
  id: string;
  chatbot_id: string;
  url: string;
  events: EventName[];
  secret: string;
  /** Standard Webhooks headers (`webhook-id`, `-timestamp`, `-signature`) besides SPEC's; off by default. */
  standard_webhooks: boolean;
  /**
   * With `standard_webhooks` on: the secret as the Standard Webhooks libraries take it (`whsec_` and
   * standard base64 of the same key); `null` while it is off.
   */
  standard_webhooks_secret: string | null;
  active: boolean;
  created_at: string;
}

/** What creating a webhook, rotating its secret and changing its signing answer (and the CLI prints). */
export type WebhookWithSecret = Pick<
  Webhook,
  'id' | 'url' | 'events' | 'secret' | 'standard_webhooks' | 'standard_webhooks_secret'
>;

/** `POST /dashboard/api/chatbots/{id}/webhooks` */
export interface NewWebhookBody {
  url: string;
  events: string[];
  /** Opt in to the Standard Webhooks headers (false when left out). */
  standard_webhooks?: boolean;
}

/** `PATCH /dashboard/api/webhooks/{id}`: the settings to change. */
export interface WebhookPatchBody {
  standard_webhooks?: boolean;
}

/** `POST /dashboard/api/webhooks/{id}/test`: the event to send a sample of. */
export interface TestEventBody {
  event: string;
}

/** One attempt of a delivery. */
export interface DeliveryAttempt {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_body: string;
}

/** `GET /dashboard/api/webhooks/{id}/deliveries` (one element, newest first), and a test or redelivery. */
export interface Delivery {
  id: string;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  next_attempt_at: string | null;
  attempts: DeliveryAttempt[];
}
