import { randomUUID } from 'node:crypto';
import { EVENT_NAMES, type EventName } from '../contract/webhook.ts';
import { ValidationError } from '../errors.ts';
import {
  conversationEscalated,
  conversationReleased,
  conversationStarted,
  conversationTakenOver,
  leadCaptured,
  messageReceived,
  type WebhookEvent,
} from '../webhooks/webhook-event.ts';
import { formatTimestamp } from '../timestamp.ts';

/**
 * The dashboard's "send test event": an event of the chosen kind with made-up data (fresh UUIDs, an
 * `embed-` session, example.com contact details, an agent called Test Agent) and `"test": true` in its data, so a receiver can
 * tell it apart; SPEC lets any payload carry extra fields. It is signed and delivered like any other.
 */
export function testEvent(chatbotId: string, name: unknown, atMicros: number): WebhookEvent {
  if (typeof name !== 'string' || !(EVENT_NAMES as readonly string[]).includes(name)) {
    throw new ValidationError(`event must be one of: ${EVENT_NAMES.join(', ')}.`);
  }
  const event = build(chatbotId, name as EventName, atMicros);
  return { ...event, data: { ...event.data, test: true } };
}

/** The agent a test takeover or release names. */
const TEST_AGENT = 'Test Agent';

function build(chatbotId: string, name: EventName, atMicros: number): WebhookEvent {
  const conversation = { conversation_id: randomUUID(), session_id: `embed-${randomUUID()}` };
  switch (name) {
    case 'lead.captured':
      return leadCaptured(
        chatbotId,
        { lead_id: randomUUID(), name: 'Test Lead', email: 'lead@example.com', phone: '+1 555 0100', custom_data: {} },
        atMicros,
      );
    case 'conversation.started':
      return conversationStarted(chatbotId, { ...conversation, source: 'embed' }, atMicros);
    case 'message.received':
      return messageReceived(
        chatbotId,
        { ...conversation, content: 'This is a test message from the Switchboard dashboard.', source: 'embed' },
        atMicros,
      );
    case 'conversation.escalated':
      return conversationEscalated(
        chatbotId,
        { ...conversation, channel: 'web', escalated_at: formatTimestamp(atMicros), message_count: 1 },
        atMicros,
      );
    case 'conversation.taken_over':
      return conversationTakenOver(
        chatbotId,
        { ...conversation, channel: 'web', agent: TEST_AGENT, taken_over_at: formatTimestamp(atMicros) },
        atMicros,
      );
    case 'conversation.released':
      return conversationReleased(
        chatbotId,
        { ...conversation, channel: 'web', agent: TEST_AGENT, released_at: formatTimestamp(atMicros) },
        atMicros,
      );
  }
}
