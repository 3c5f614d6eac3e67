/**
 * Conversations and their messages as the dashboard, the widget and the agent console receive them.
 * Part of the contract: type-only and browser-safe (see README.md beside this file).
 */
import type { LeadName } from './lead.ts';

/** Who wrote a message: the visitor, the chatbot, or a human agent. */
export type MessageRole = 'user' | 'assistant' | 'agent';

/**
 * A source an AI reply cites. A reply's citations are numbered by position: its `[1]` is the first.
 * A page, a video or a connector's document has its link; a text or file source only its title.
 */
export interface Citation {
  title: string;
  url?: string;
}

/** How a human agent shows to visitors: their display name and the initial of their avatar. */
export interface AgentPersona {
  name: string;
  initial: string;
}

/**
 * Who answers a conversation, as its visitor sees it: the AI; nobody yet, a human having been asked
 * for (`waiting`); or a named agent.
 */
export type HandoffState = 'ai' | 'waiting' | 'agent';

/**
 * A conversation's hand-off state, with the agent who holds it, whether any agent is online, and the
 * chatbot's office hours as they bear on it.
 */
export interface Handoff {
  state: HandoffState;
  agent: AgentPersona | null;
  agents_online: boolean;
  /** Within the chatbot's office hours (always true when it has none). */
  open: boolean;
  /** Outside office hours, when they next begin; null otherwise. */
  opens_at: string | null;
  /** The office hours' time zone (IANA); null when the chatbot has none. */
  time_zone: string | null;
  /**
   * Waiting for a person in office hours with nobody online: in how many milliseconds the contact form
   * is offered (0: now); null in every other case.
   */
  contact_in_ms: number | null;
}

/** A visitor's rating of an AI reply. */
export type Rating = 'up' | 'down';

/**
 * How far a reply sent through a messaging platform got, as the platform reported it: `accepted` by
 * the platform's API, then `sent`, `delivered`, `read`, or `failed` (final).
 */
export type DeliveryStatus = 'accepted' | 'sent' | 'delivered' | 'read' | 'failed';

/** A reply's delivery as the transcript shows it: the status, when it was reported, and why it failed. */
export interface MessageDelivery {
  status: DeliveryStatus;
  at: string;
  /** On `failed`: the platform's error code and what it means. */
  error_code?: number;
  error?: string;
}

/** One message of a transcript. */
export interface Message {
  role: MessageRole;
  content: string;
  created_at: string;
  /** On an AI reply that cites its sources (`[1]`, `[2]` in its text), those sources in order. */
  citations?: Citation[];
  /** On an AI reply the visitor rated, the rating. */
  feedback?: Rating;
  /** On an agent's message, who wrote it (messages stored before agents had personas have none). */
  agent?: AgentPersona;
  /**
   * On a visitor message the chatbot could not answer (its provider failed), why; owners, agents and
   * the CLI see it in transcripts, visitors never do.
   */
  failure?: string;
  /**
   * On a reply (the AI's or an agent's) sent through WhatsApp's Cloud API, how far it got; owners,
   * agents and the CLI see it, visitors never do.
   */
  delivery?: MessageDelivery;
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

/** A conversation with its last activity: a row of `conversation list`. */
export type ConversationSummary = Conversation & ConversationActivity;

/** A conversation with its messages (`GET …/conversations/{session_id}`, `conversation show`). */
export interface Transcript extends Conversation {
  messages: Message[];
}

/**
 * What the dashboard adds to a conversation: the lead its visitor left (the dashboard shows the
 * visitor by its name, else its email), and whether it is the owner's own widget preview.
 */
export interface VisitorOfConversation {
  lead: LeadName | null;
  preview: boolean;
}

/** `GET /dashboard/api/chatbots/{id}/conversations`: one row of the list. */
export type DashboardConversation = ConversationSummary & VisitorOfConversation;

/** `GET /dashboard/api/chatbots/{id}/conversations/{session_id}`. */
export type DashboardTranscript = Transcript & VisitorOfConversation;

/** `POST /dashboard/api/chatbots/{id}/preview-session`: the widget session the dashboard's preview talks in. */
export interface PreviewSession {
  session_id: string;
}

/** `POST …/preview-session`: `restart` starts a new preview conversation instead of resuming the last. */
export interface PreviewSessionBody {
  restart?: boolean;
}

/** `POST …/conversations/{session_id}/takeover`: who takes it over (`operator` when left out). */
export interface TakeoverBody {
  agent?: string;
}

/**
 * `DELETE …/conversations/{session_id}` and `conversation delete`: what a visitor's erasure request
 * deleted — the conversation (with `messages` messages and everything keyed by it) and the lead its
 * session left.
 */
export interface ConversationErased {
  chatbot_id: string;
  session_id: string;
  deleted: { conversation: boolean; messages: number; lead: boolean };
}
