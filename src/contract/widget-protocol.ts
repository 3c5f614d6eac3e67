/**
 * The widget's contract with the gateway: its configuration document and the socket frames both ways
 * (DESIGN.md's widget protocol). Part of the contract (see README.md beside this file).
 */
import type { CallToAction, LeadField } from './chatbot-settings.ts';
import type { Message, MessageRole } from './conversation.ts';

/** `GET /widget/v1/config?chatbot_id=…`: what the widget needs to render a chatbot, public settings only. */
export interface WidgetConfig {
  chatbot_id: string;
  name: string;
  /** The widget's title; the chatbot's name when the owner set none. */
  title: string;
  color: string;
  welcome_message: string;
  lead_fields: LeadField[];
  ctas: CallToAction[];
  /** Whether a human agent is online now; when not, the widget offers the lead form on escalation. */
  agents_online: boolean;
}

/** Server → widget frames pushed to every socket of the session, in every gateway process. */
export type WidgetPush =
  | { type: 'message'; role: Exclude<MessageRole, 'user'>; content: string; created_at: string }
  | { type: 'typing' }
  | { type: 'escalated' };

/**
 * Server → widget frames. The first is always `ready`, with the session id to keep and the newest
 * messages; `lead_saved` and `error` answer one socket's frame.
 */
export type WidgetServerFrame =
  | { type: 'ready'; session_id: string; history: Message[] }
  | WidgetPush
  | { type: 'lead_saved'; lead_id: string }
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

/** Widget → server frames. */
export type WidgetClientFrame =
  { type: 'message'; content: string } | { type: 'escalate' } | { type: 'cta'; id: string } | LeadFrame;
