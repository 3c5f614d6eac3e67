/**
 * Conversations and their messages as the dashboard, the widget and the agent console receive them.
 * Part of the contract: type-only and browser-safe (see README.md beside this file).
 */

/** Who wrote a message: the visitor, the chatbot, or a human agent. */
export type MessageRole = 'user' | 'assistant' | 'agent';

/** One message of a transcript. */
export interface Message {
  role: MessageRole;
  content: string;
  created_at: string;
}

/** A conversation as the CLI, the dashboard and agents see it. */
export interface Conversation {
  conversation_id: string;
  chatbot_id: string;
  session_id: string;
  /** The channel it came from: `embed`, `whatsapp`, `telegram` or `api`. */
  source: string;
  escalated_at: string | null;
  /** The agent holding it, while one does. */
  taken_over_by: string | null;
}

/** When a conversation last moved, and its last message. */
export interface ConversationActivity {
  last_message: Message | null;
  last_activity_at: string;
}

/** `GET /dashboard/api/chatbots/{id}/conversations`: one row of the list. */
export type ConversationSummary = Conversation & ConversationActivity;

/** A conversation with its messages (`GET …/conversations/{session_id}`, `conversation show`). */
export interface Transcript extends Conversation {
  messages: Message[];
}

/** `POST …/conversations/{session_id}/takeover`: who takes it over (`operator` when left out). */
export interface TakeoverBody {
  agent?: string;
}
