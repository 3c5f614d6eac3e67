/**
 * Webhooks and their delivery log as the dashboard shows them. Part of the contract (see README.md
 * beside this file). `EVENT_NAMES` is the one runtime value here: the server checks against it and
 * the dashboard offers it.
 */

/** SPEC's four event names. */
export const EVENT_NAMES = [
  'lead.captured',
  'conversation.started',
  'message.received',
  'conversation.escalated',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** `GET /dashboard/api/chatbots/{id}/webhooks` (one element), `GET …/webhooks/{id}`: with its secret. */
export interface Webhook {
  id: string;
  chatbot_id: string;
  url: string;
  events: EventName[];
  secret: string;
  active: boolean;
  created_at: string;
}

/** What creating a webhook and rotating its secret answer (and `webhook create` prints). */
export type WebhookWithSecret = Pick<Webhook, 'id' | 'url' | 'events' | 'secret'>;

/** `POST /dashboard/api/chatbots/{id}/webhooks` */
export interface NewWebhookBody {
  url: string;
  events: string[];
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
