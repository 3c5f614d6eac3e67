import type {
  ConversationContext,
  ConversationRef,
  ConversationSummary,
  EscalatedPush,
  HolderChange,
  LeadPush,
  MessagePush,
} from './console-protocol.ts';

/** The conversations the agent can see, kept up to date by pushes. */
export interface ConversationList {
  /** Replaces every conversation (the conversations frame, on every (re)connect). */
  replace(items: readonly ConversationSummary[]): void;
  get(conversation: ConversationRef): ConversationSummary | undefined;
  /** Each apply adds the conversation when the list does not know it yet. */
  applyMessage(push: MessagePush): void;
  applyEscalated(push: EscalatedPush): void;
  applyLead(push: LeadPush): void;
  applyHolder(change: HolderChange): void;
  /** Changes fields of a conversation the list knows; otherwise does nothing. */
  patch(conversation: ConversationRef, fields: Partial<ConversationSummary>): void;
  /** Escalated conversations first, then the most recently active. */
  sorted(): ConversationSummary[];
  /** Visitor messages that arrived while the conversation was not open, since it last was. */
  unread(conversation: ConversationRef): number;
  /** The agent has the conversation open: nothing in it is unread. */
  markRead(conversation: ConversationRef): void;
}

/** The key a conversation is stored under. */
export function conversationKey(conversation: ConversationRef): string {
  return `${conversation.chatbot_id}\n${conversation.session_id}`;
}

/**
 * Compares timestamps as instants; equal or unparsable ones by their text, which orders the gateway's
 * fixed-width ISO timestamps correctly down to the microsecond.
 */
export function compareTimes(a: string, b: string): number {
  const difference = (Date.parse(a) || 0) - (Date.parse(b) || 0);
  if (difference !== 0) return difference;
  return a < b ? -1 : a > b ? 1 : 0;
}

const later = (a: string, b: string): string => (compareTimes(a, b) >= 0 ? a : b);

function byPriority(a: ConversationSummary, b: ConversationSummary): number {
  const escalated = Number(b.escalated_at !== null) - Number(a.escalated_at !== null);
  if (escalated !== 0) return escalated;
  return compareTimes(b.last_activity_at, a.last_activity_at) || conversationKey(a).localeCompare(conversationKey(b));
}

/** Creates an empty list. */
export function createConversationList(): ConversationList {
  const items = new Map<string, ConversationSummary>();
  const unread = new Map<string, number>();

  /** The known conversation, or a new one described as far as a push can (its source comes later). */
  const upsert = (ref: ConversationRef): ConversationSummary => {
    const key = conversationKey(ref);
    const known = items.get(key);
    if (known) return known;
    // Conversations of the same chatbot share its name.
    const sibling = [...items.values()].find((item) => item.chatbot_id === ref.chatbot_id);
    const created: ConversationSummary = {
      chatbot_id: ref.chatbot_id,
      chatbot_name: sibling?.chatbot_name ?? '',
      session_id: ref.session_id,
      source: '',
      escalated_at: null,
      taken_over_by: null,
      last_message: null,
      last_activity_at: '',
      lead: null,
    };
    items.set(key, created);
    return created;
  };

  /**
   * Takes what a push tells about its conversation. A push without a lead keeps the known one (a
   * lead is never taken back); a chatbot's name, renamed since, is every one of its conversations'.
   */
  const adopt = (item: ConversationSummary, context: ConversationContext): void => {
    if (context.chatbot_name) {
      for (const other of items.values()) {
        if (other.chatbot_id === item.chatbot_id) other.chatbot_name = context.chatbot_name;
      }
    }
    if (context.last_activity_at) item.last_activity_at = later(item.last_activity_at, context.last_activity_at);
    if (context.lead) item.lead = context.lead;
  };

  return {
    replace(next) {
      items.clear();
      for (const item of next) items.set(conversationKey(item), { ...item });
    },
    get: (conversation) => items.get(conversationKey(conversation)),
    applyMessage(push) {
      const item = upsert(push);
      const message = { role: push.role, content: push.content, created_at: push.created_at };
      if (!item.last_message || compareTimes(message.created_at, item.last_message.created_at) >= 0) {
        item.last_message = message;
      }
      item.last_activity_at = later(item.last_activity_at, push.created_at);
      adopt(item, push);
      const key = conversationKey(push);
      if (push.role === 'user') unread.set(key, (unread.get(key) ?? 0) + 1);
    },
    applyEscalated(push) {
      const item = upsert(push);
      item.escalated_at = push.escalated_at || item.escalated_at || new Date().toISOString();
      // A gateway that does not tell the last activity: the escalation is the latest news.
      adopt(item, { ...push, last_activity_at: push.last_activity_at || push.escalated_at });
    },
    applyLead(push) {
      adopt(upsert(push), push);
    },
    applyHolder(change) {
      upsert(change).taken_over_by = change.taken_over_by;
    },
    patch(conversation, fields) {
      const item = items.get(conversationKey(conversation));
      if (item) Object.assign(item, fields);
    },
    sorted: () => [...items.values()].sort(byPriority),
    unread: (conversation) => unread.get(conversationKey(conversation)) ?? 0,
    markRead(conversation) {
      unread.delete(conversationKey(conversation));
    },
  };
}
