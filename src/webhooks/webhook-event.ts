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
