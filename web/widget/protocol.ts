/**
 * The gateway's widget contract (src/contract/widget-protocol.ts): the config document and the socket
 * frames, with guards that turn untrusted JSON into these types (or `null`), so the rest of the widget
 * never sees a malformed value.
 */
import type { CallToAction, LeadField } from '../../src/contract/chatbot-settings.ts';
import type { Message } from '../../src/contract/conversation.ts';
import type {
  WidgetClientFrame as ClientFrame,
  WidgetConfig,
  WidgetServerFrame as ServerFrame,
} from '../../src/contract/widget-protocol.ts';

export type { MessageRole as Role } from '../../src/contract/conversation.ts';
export type { LeadFrame } from '../../src/contract/widget-protocol.ts';
export type { CallToAction as Cta, ClientFrame, LeadField, Message as HistoryEntry, ServerFrame, WidgetConfig };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const isString = (value: unknown): value is string => typeof value === 'string';
const str = (value: unknown): string => (isString(value) ? value : '');
const list = (value: unknown): unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);
const notNull = <T>(value: T | null): value is T => value !== null;

function parseHistoryEntry(value: unknown): Message | null {
  if (!isObject(value) || !isString(value.content)) return null;
  const role = value.role;
  if (role !== 'user' && role !== 'assistant' && role !== 'agent') return null;
  return { role, content: value.content, created_at: str(value.created_at) };
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
      };
    case 'message': {
      const entry = parseHistoryEntry(frame);
      if (!entry || entry.role === 'user') return null;
      return { type: 'message', role: entry.role, content: entry.content, created_at: entry.created_at };
    }
    case 'typing':
    case 'escalated':
      return { type: frame.type };
    case 'lead_saved':
      return { type: 'lead_saved', lead_id: str(frame.lead_id) };
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
