import { escalationChannel } from '../conversations/session.ts';
import { formatTimestamp } from '../timestamp.ts';
import {
  conversationEscalated,
  conversationReleased,
  conversationStarted,
  conversationTakenOver,
  leadCaptured,
  messageReceived,
  type WebhookEvent,
} from './webhook-event.ts';

/**
 * What happened, recorded next to the change itself (in the same Redis script or transaction), from
 * which its webhook events are made. Times are epoch microseconds as strings (Lua's numbers would
 * round them).
 */
export type PendingEntry =
  | {
      kind: 'turn';
      at: string;
      conversation_id: string;
      session_id: string;
      source: string;
      /** 1 when this message started the conversation. */
      is_new: number;
      /** The stored user message (its other fields are the transcript's). */
      message: { content: string };
    }
  | { kind: 'escalated'; at: string; conversation_id: string; session_id: string; message_count: number }
  /** An agent took the conversation over, or the hold of `agent` ended (beyond SPEC). */
  | { kind: 'taken_over' | 'released'; at: string; conversation_id: string; session_id: string; agent: string }
  | {
      kind: 'lead';
      at: string;
      lead: { lead_id: string; name: string; email: string; phone: string; custom_data: Record<string, string> };
    };

/** A pending entry as stored: its id and its JSON (a PendingEntry, as the writing script made it). */
export interface StoredPendingEntry {
  id: string;
  json: string;
}

/** An entry that is not a PendingEntry this version understands. */
export class UnreadableEntryError extends Error {
  override name = 'UnreadableEntryError';
}

/** The webhook events a stored entry stands for, in the order they are emitted. */
export function eventsOf(chatbotId: string, json: string): WebhookEvent[] {
  let entry: PendingEntry;
  try {
    entry = JSON.parse(json) as PendingEntry;
  } catch (error) {
    throw new UnreadableEntryError('a pending entry is not JSON', { cause: error });
  }
  const at = Number(entry.at);
  switch (entry.kind) {
    case 'turn': {
      const ids = { conversation_id: entry.conversation_id, session_id: entry.session_id };
      const received = messageReceived(chatbotId, { ...ids, content: entry.message.content, source: entry.source }, at);
      return entry.is_new === 1
        ? [conversationStarted(chatbotId, { ...ids, source: entry.source }, at), received]
        : [received];
    }
    case 'escalated': {
      const channel = escalationChannel(entry.session_id);
      const data = {
        conversation_id: entry.conversation_id,
        session_id: entry.session_id,
        channel,
        escalated_at: formatTimestamp(at),
        ...(channel === 'web' ? { message_count: entry.message_count } : {}),
      };
      return [conversationEscalated(chatbotId, data, at)];
    }
    case 'lead':
      return [leadCaptured(chatbotId, entry.lead, at)];
    case 'taken_over':
    case 'released': {
      const change = {
        conversation_id: entry.conversation_id,
        session_id: entry.session_id,
        channel: escalationChannel(entry.session_id),
        agent: entry.agent,
      };
      return entry.kind === 'taken_over'
        ? [conversationTakenOver(chatbotId, { ...change, taken_over_at: formatTimestamp(at) }, at)]
        : [conversationReleased(chatbotId, { ...change, released_at: formatTimestamp(at) }, at)];
    }
    default:
      throw new UnreadableEntryError(
        `a pending entry of unknown kind ${JSON.stringify((entry as { kind?: unknown }).kind)}`,
      );
  }
}

/**
 * The key that makes an event's deliveries the same deliveries however often it is emitted: the
 * entry's id and the event's place among the entry's events.
 */
export function eventKey(entryId: string, index: number): string {
  return `${entryId}/${index}`;
}
