import type { EventName } from '../contract/webhook.ts';
import { formatTimestamp } from '../timestamp.ts';

/** SPEC's envelope. `timestamp` is when the event was queued. */
export interface WebhookEvent {
  event: EventName;
  chatbot_id: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * Where events go: the webhook dispatcher. Resolves once the event is durably accepted. An event
 * emitted again under the same `key` yields no second delivery.
 */
export interface EventSink {
  emit(event: WebhookEvent, key?: string): Promise<void>;
  /**
   * Whether emitting any of `events` for the chatbot would deliver anything now; a sink without it
   * is taken to listen to everything.
   */
  listens?(chatbotId: string, events: readonly EventName[]): Promise<boolean>;
}

/** `conversation.started` */
export function conversationStarted(
  chatbotId: string,
  data: { conversation_id: string; session_id: string; source: string },
  atMicros: number,
): WebhookEvent {
  return { event: 'conversation.started', chatbot_id: chatbotId, timestamp: formatTimestamp(atMicros), data };
}

/** `message.received` */
export function messageReceived(
  chatbotId: string,
  data: { conversation_id: string; session_id: string; content: string; source: string },
  atMicros: number,
): WebhookEvent {
  return { event: 'message.received', chatbot_id: chatbotId, timestamp: formatTimestamp(atMicros), data };
}

/** `conversation.escalated`; `message_count` only for web conversations. */
export function conversationEscalated(
  chatbotId: string,
  data: { conversation_id: string; session_id: string; channel: string; escalated_at: string; message_count?: number },
  atMicros: number,
): WebhookEvent {
  return { event: 'conversation.escalated', chatbot_id: chatbotId, timestamp: formatTimestamp(atMicros), data };
}

/** `lead.captured` */
export function leadCaptured(
  chatbotId: string,
  data: { lead_id: string; name: string; email: string; phone: string; custom_data: Record<string, string> },
  atMicros: number,
): WebhookEvent {
  return { event: 'lead.captured', chatbot_id: chatbotId, timestamp: formatTimestamp(atMicros), data };
}

/** What `conversation.taken_over` and `conversation.released` carry besides their time. */
export type HoldChange = {
  conversation_id: string;
  session_id: string;
  /** From the session id's prefix, as `conversation.escalated`'s. */
  channel: string;
  /** The agent who took the conversation over, or the one whose hold ended. */
  agent: string;
};

/** `conversation.taken_over` (beyond SPEC, opt-in) */
export function conversationTakenOver(
  chatbotId: string,
  data: HoldChange & { taken_over_at: string },
  atMicros: number,
): WebhookEvent {
  return { event: 'conversation.taken_over', chatbot_id: chatbotId, timestamp: formatTimestamp(atMicros), data };
}

/** `conversation.released` (beyond SPEC, opt-in) */
export function conversationReleased(
  chatbotId: string,
  data: HoldChange & { released_at: string },
  atMicros: number,
): WebhookEvent {
  return { event: 'conversation.released', chatbot_id: chatbotId, timestamp: formatTimestamp(atMicros), data };
}
