/**
 * The widget's contract with the gateway: its configuration document and the socket frames both ways
 * (DESIGN.md's widget protocol). Part of the contract (see README.md beside this file).
 */
import type { CallToAction, LeadField } from './chatbot-settings.ts';
import type { AgentPersona, Citation, Handoff, Message, MessageRole, Rating } from './conversation.ts';

/** `GET /widget/v1/config?chatbot_id=…`: what the widget needs to render a chatbot, public settings only. */
export interface WidgetConfig {
  chatbot_id: string;
  name: string;
  /** The widget's title; the chatbot's name when the owner set none. */
  title: string;
  color: string;
  /** The greeting shown on top of the panel; `''` when the owner wants none. */
  welcome_message: string;
  lead_fields: LeadField[];
  ctas: CallToAction[];
  /** Whether a human agent is online now; when not, the widget offers the lead form on escalation. */
  agents_online: boolean;
}

/**
 * A reply or an agent's message, as stored (`created_at` is the stored message's time). An AI reply
 * that was streamed names its stream: it replaces what the `delta` frames showed. Its `citations`
 * are the sources its `[n]` markers name, in order.
 */
export interface WidgetMessagePush {
  type: 'message';
  role: Exclude<MessageRole, 'user'>;
  content: string;
  created_at: string;
  stream_id?: string;
  citations?: Citation[];
  /** An agent's message: who wrote it. */
  agent?: AgentPersona;
  /**
   * The chatbot found nothing relevant in its sources to answer from (it answers only from them):
   * the widget offers a human, or the lead form when none is online.
   */
  handoff?: true;
}

/**
 * Server → widget frames pushed to every socket of the session, in every gateway process. `delta`
 * carries the next piece of an AI reply being written (the first one starts it); `stream_end` says
 * a reply being written was dropped (`taken_over`: a human took the conversation over; `failed`)
 * and will not come as a `message`. Widgets that know only `message` frames ignore both.
 */
export type WidgetPush =
  | WidgetMessagePush
  /** Someone is writing: the AI, or the agent named (who holds the conversation). */
  | { type: 'typing'; agent?: AgentPersona }
  | { type: 'escalated' }
  | WidgetHandoffPush
  | { type: 'delta'; stream_id: string; content: string }
  | { type: 'stream_end'; stream_id: string; reason: 'taken_over' | 'failed' };

/**
 * The conversation's hand-off state changed, and how: the visitor asked for a human (`escalated`: now
 * waiting), an agent took it over (`joined`: the agent named), or the agent handed it back
 * (`left`: the AI answers again; `agent` names who left).
 */
export type WidgetHandoffPush = { type: 'handoff'; change: 'escalated' | 'joined' | 'left' } & Handoff;

/**
 * Server → widget frames. The first is always `ready`, with the session id to keep, the newest
 * messages, the hand-off state and whether the visitor left their contact details (both added after
 * the protocol's first version); `lead_saved`,
 * `feedback_saved` and `error` answer one socket's frame.
 */
export type WidgetServerFrame =
  | { type: 'ready'; session_id: string; history: Message[]; handoff: Handoff; lead_left: boolean }
  | WidgetPush
  | { type: 'lead_saved'; lead_id: string }
  | { type: 'feedback_saved'; created_at: string; rating: Rating | null }
  | { type: 'error'; detail: string };

/** The lead form's submission. */
export interface LeadFrame {
  type: 'lead';
  name: string;
  email: string;
  phone: string;
  /** The chatbot's custom lead fields by name. */
  custom_data: Record<string, string>;
}

/**
 * The visitor rates an AI reply, named by its `created_at`: `up`, `down`, or `null` to take a rating
 * back. One rating per reply; a new one replaces it.
 */
export interface FeedbackFrame {
  type: 'feedback';
  created_at: string;
  rating: Rating | null;
}

/** Widget → server frames. */
export type WidgetClientFrame =
  { type: 'message'; content: string } | { type: 'escalate' } | { type: 'cta'; id: string } | LeadFrame | FeedbackFrame;
