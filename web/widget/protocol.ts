/**
 * The gateway's widget contract: the config document and the socket frames, with guards that turn
 * untrusted JSON into these types (or `null`), so the rest of the widget never sees a malformed value.
 */

/** Who said a transcript line. */
export type Role = 'user' | 'assistant' | 'agent';

/** A custom lead-form field configured by the chatbot's owner. */
export interface LeadField {
  name: string;
  label: string;
  required: boolean;
}

/** A call-to-action button. */
export interface Cta {
  id: string;
  label: string;
  action: 'link' | 'escalate' | 'message';
  url?: string;
  message?: string;
}

/** `GET /widget/v1/config` */
export interface WidgetConfig {
  chatbot_id: string;
  name: string;
  title: string;
  color: string;
  welcome_message: string;
  lead_fields: LeadField[];
  ctas: Cta[];
  agents_online: boolean;
}

/** One line of the transcript as the server stores it. */
export interface HistoryEntry {
  role: Role;
  content: string;
  created_at: string;
}

/** Server → widget frames. */
export type ServerFrame =
  | { type: 'ready'; session_id: string; history: HistoryEntry[] }
  | { type: 'message'; role: 'assistant' | 'agent'; content: string; created_at: string }
  | { type: 'typing' }
  | { type: 'escalated' }
  | { type: 'lead_saved'; lead_id: string }
  | { type: 'error'; detail: string };

/** The lead form's submission. */
export interface LeadFrame {
  type: 'lead';
  name: string;
  email: string;
  phone: string;
  custom_data: Record<string, string>;
}

/** Widget → server frames. */
export type ClientFrame =
  { type: 'message'; content: string } | { type: 'escalate' } | { type: 'cta'; id: string } | LeadFrame;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const isString = (value: unknown): value is string => typeof value === 'string';
const str = (value: unknown): string => (isString(value) ? value : '');
const list = (value: unknown): unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);
const notNull = <T>(value: T | null): value is T => value !== null;

function parseHistoryEntry(value: unknown): HistoryEntry | null {
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

function parseCta(value: unknown): Cta | null {
  if (!isObject(value) || !isString(value.id) || !isString(value.label)) return null;
  const { action } = value;
  if (action !== 'link' && action !== 'escalate' && action !== 'message') return null;
  const cta: Cta = { id: value.id, label: value.label, action };
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
