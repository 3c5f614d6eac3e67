/**
 * The gateway's widget contract (src/contract/widget-protocol.ts): the config document and the socket
 * frames, with guards that turn untrusted JSON into these types (or `null`), so the rest of the widget
 * never sees a malformed value.
 */
import type { CallToAction, LeadField } from '../../src/contract/chatbot-settings.ts';
import type { AgentPersona, Citation, Handoff, Message, Rating } from '../../src/contract/conversation.ts';
import type {
  WidgetClientFrame as ClientFrame,
  WidgetConfig,
  WidgetServerFrame as ServerFrame,
} from '../../src/contract/widget-protocol.ts';

export type { AgentPersona, Citation, Handoff, MessageRole as Role, Rating } from '../../src/contract/conversation.ts';
export type { LeadFrame } from '../../src/contract/widget-protocol.ts';
export type { CallToAction as Cta, ClientFrame, LeadField, Message as HistoryEntry, ServerFrame, WidgetConfig };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const isString = (value: unknown): value is string => typeof value === 'string';
const str = (value: unknown): string => (isString(value) ? value : '');
const list = (value: unknown): unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);
const notNull = <T>(value: T | null): value is T => value !== null;

function parseCitation(value: unknown): Citation | null {
  if (!isObject(value) || !isString(value.title)) return null;
  // Only a web address becomes a link: a javascript: or data: URL in a frame must never be opened.
  return isString(value.url) && /^https?:\/\//i.test(value.url)
    ? { title: value.title, url: value.url }
    : { title: value.title };
}

const isRating = (value: unknown): value is Rating => value === 'up' || value === 'down';

function parsePersona(value: unknown): AgentPersona | null {
  if (!isObject(value) || !isString(value.name) || !value.name) return null;
  return { name: value.name, initial: str(value.initial) || value.name.slice(0, 1).toUpperCase() };
}

/** The AI answering, with nobody asked for: a socket's state before its ready frame says otherwise. */
export const AI_ANSWERS: Handoff = {
  state: 'ai',
  agent: null,
  agents_online: false,
  open: true,
  opens_at: null,
  time_zone: null,
  contact_in_ms: null,
};

const nonNegative = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;

/** A hand-off state; a frame without one (a gateway from before it) reads as the AI answering. */
function parseHandoff(value: unknown): Handoff {
  if (!isObject(value)) return AI_ANSWERS;
  const state = value.state === 'waiting' || value.state === 'agent' ? value.state : 'ai';
  return {
    state,
    agent: parsePersona(value.agent),
    agents_online: value.agents_online === true,
    open: value.open !== false,
    opens_at: isString(value.opens_at) && !Number.isNaN(Date.parse(value.opens_at)) ? value.opens_at : null,
    time_zone: isString(value.time_zone) ? value.time_zone : null,
    contact_in_ms: nonNegative(value.contact_in_ms),
  };
}

function parseHistoryEntry(value: unknown): Message | null {
  if (!isObject(value) || !isString(value.content)) return null;
  const role = value.role;
  if (role !== 'user' && role !== 'assistant' && role !== 'agent') return null;
  const entry: Message = { role, content: value.content, created_at: str(value.created_at) };
  const citations = list(value.citations).map(parseCitation).filter(notNull);
  if (citations.length > 0) entry.citations = citations;
  if (isRating(value.feedback)) entry.feedback = value.feedback;
  const agent = role === 'agent' ? parsePersona(value.agent) : null;
  if (agent) entry.agent = agent;
  return entry;
}

/** Parses one text frame from the socket; unknown or malformed frames give `null`. */
export function parseServerFrame(text: string): ServerFrame | null {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(frame)) return null;
  switch (frame.type) {
    case 'ready':
      if (!isString(frame.session_id)) return null;
      return {
        type: 'ready',
        session_id: frame.session_id,
        history: list(frame.history).map(parseHistoryEntry).filter(notNull),
        handoff: parseHandoff(frame.handoff),
        lead_left: frame.lead_left === true,
      };
    case 'message': {
      const entry = parseHistoryEntry(frame);
      if (!entry || entry.role === 'user') return null;
      return {
        type: 'message',
        role: entry.role,
        content: entry.content,
        created_at: entry.created_at,
        ...(entry.citations ? { citations: entry.citations } : {}),
        ...(entry.agent ? { agent: entry.agent } : {}),
        ...(isString(frame.stream_id) ? { stream_id: frame.stream_id } : {}),
        ...(frame.handoff === true ? { handoff: true as const } : {}),
      };
    }
    case 'delta':
      if (!isString(frame.stream_id) || !isString(frame.content)) return null;
      return { type: 'delta', stream_id: frame.stream_id, content: frame.content };
    case 'stream_end':
      if (!isString(frame.stream_id)) return null;
      return {
        type: 'stream_end',
        stream_id: frame.stream_id,
        reason: frame.reason === 'taken_over' ? 'taken_over' : 'failed',
      };
    case 'typing': {
      const agent = parsePersona(frame.agent);
      return agent ? { type: 'typing', agent } : { type: 'typing' };
    }
    case 'escalated':
      return { type: 'escalated' };
    case 'handoff': {
      const change = frame.change;
      if (change !== 'escalated' && change !== 'joined' && change !== 'left') return null;
      return { type: 'handoff', change, ...parseHandoff(frame) };
    }
    case 'lead_saved':
      return { type: 'lead_saved', lead_id: str(frame.lead_id) };
    case 'feedback_saved':
      return {
        type: 'feedback_saved',
        created_at: str(frame.created_at),
        rating: isRating(frame.rating) ? frame.rating : null,
      };
    case 'error':
      return { type: 'error', detail: str(frame.detail) || 'Something went wrong.' };
    default:
      return null;
  }
}

function parseLeadField(value: unknown): LeadField | null {
  if (!isObject(value) || !isString(value.name) || !value.name) return null;
  return { name: value.name, label: str(value.label) || value.name, required: value.required === true };
}

function parseCta(value: unknown): CallToAction | null {
  if (!isObject(value) || !isString(value.id) || !isString(value.label)) return null;
  const { action } = value;
  if (action !== 'link' && action !== 'escalate' && action !== 'message') return null;
  const cta: CallToAction = { id: value.id, label: value.label, action };
  if (isString(value.url)) cta.url = value.url;
  if (isString(value.message)) cta.message = value.message;
  return cta;
}

/** Parses the config document; a document without a chatbot id gives `null`. */
export function parseConfig(value: unknown): WidgetConfig | null {
  if (!isObject(value) || !isString(value.chatbot_id)) return null;
  return {
    chatbot_id: value.chatbot_id,
    name: str(value.name),
    title: str(value.title),
    color: str(value.color),
    welcome_message: str(value.welcome_message),
    lead_fields: list(value.lead_fields).map(parseLeadField).filter(notNull),
    ctas: list(value.ctas).map(parseCta).filter(notNull),
    agents_online: value.agents_online === true,
  };
}
