/**
 * The gateway's agent contract (src/contract/agent-protocol.ts): the socket frames and the transcript
 * document, with guards that turn untrusted JSON into these types (or `null`), so the rest of the
 * console never sees a malformed value.
 */
import type {
  AgentConversation,
  AgentIdentity,
  AgentServerFrame,
  AgentTranscript,
  ConversationRef,
} from '../../src/contract/agent-protocol.ts';
import type { Message } from '../../src/contract/conversation.ts';

export type { MessageRole as Role } from '../../src/contract/conversation.ts';
export type {
  AgentCommand as Command,
  AgentEscalatedPush as EscalatedPush,
  AgentMessagePush as MessagePush,
  ConversationRef,
} from '../../src/contract/agent-protocol.ts';
export type { AgentIdentity as Agent, AgentTranscript as Transcript, Message };

/**
 * One conversation in the list: the conversations frame's item, with the chatbot's name and the last
 * activity, which the console works out itself ('' until it knows them).
 */
export type ConversationSummary = AgentConversation & { chatbot_name: string; last_activity_at: string };

/**
 * Who holds a conversation now, as the console learns it: from its own takeover and release answers and
 * from transcripts (the socket pushes no such frame).
 */
export type HolderChange = Pick<AgentConversation, 'taken_over_by'> & ConversationRef;

type Frame<T extends AgentServerFrame['type']> = Extract<AgentServerFrame, { type: T }>;

/**
 * Server → console frames as the console reads them: summaries completed, and `ref` as this console
 * sent it (a string), set on a command's answer and on nothing else.
 */
export type ServerFrame =
  | Frame<'authenticated'>
  | (Omit<Frame<'conversations'>, 'items'> & { items: ConversationSummary[] })
  | Frame<'message'>
  | Frame<'escalated'>
  | (Omit<Frame<'ok'>, 'ref'> & { ref: string })
  | (Omit<Frame<'error'>, 'ref'> & { ref: string | null });

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const isString = (value: unknown): value is string => typeof value === 'string';
const str = (value: unknown): string => (isString(value) ? value : '');
const nullableStr = (value: unknown): string | null => (isString(value) && value !== '' ? value : null);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);
const notNull = <T>(value: T | null): value is T => value !== null;

/** The `{"detail"}` of an error document or frame, or `''`. */
export function detailOf(value: unknown): string {
  return isObject(value) ? str(value.detail) : '';
}

function parseRef(value: Json): ConversationRef | null {
  if (!isString(value.chatbot_id) || !isString(value.session_id)) return null;
  return { chatbot_id: value.chatbot_id, session_id: value.session_id };
}

function parseMessage(value: unknown): Message | null {
  if (!isObject(value) || !isString(value.content)) return null;
  const role = value.role;
  if (role !== 'user' && role !== 'assistant' && role !== 'agent') return null;
  return { role, content: value.content, created_at: str(value.created_at) };
}

function parseSummary(value: unknown): ConversationSummary | null {
  if (!isObject(value)) return null;
  const ref = parseRef(value);
  if (!ref) return null;
  const lastMessage = parseMessage(value.last_message);
  return {
    ...ref,
    chatbot_name: str(value.chatbot_name),
    source: str(value.source),
    escalated_at: nullableStr(value.escalated_at),
    taken_over_by: nullableStr(value.taken_over_by),
    last_message: lastMessage,
    last_activity_at: str(value.last_activity_at) || (lastMessage?.created_at ?? ''),
  };
}

/** A command's `ref` as this console sent it (a string), whatever JSON type the server echoes it as. */
function parseCommandRef(value: unknown): string | null {
  return isString(value) || typeof value === 'number' ? String(value) : null;
}

function parsePush(frame: Json): ServerFrame | null {
  const ref = parseRef(frame);
  if (!ref) return null;
  switch (frame.type) {
    case 'message': {
      const message = parseMessage(frame);
      return message ? { type: 'message', ...ref, ...message } : null;
    }
    default:
      return { type: 'escalated', ...ref, escalated_at: str(frame.escalated_at) };
  }
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
    case 'authenticated':
      return { type: 'authenticated' };
    case 'conversations':
      return { type: 'conversations', items: list(frame.items).map(parseSummary).filter(notNull) };
    case 'message':
    case 'escalated':
      return parsePush(frame);
    case 'ok': {
      const ref = parseCommandRef(frame.ref);
      return ref === null ? null : { type: 'ok', ref };
    }
    case 'error':
      return { type: 'error', detail: str(frame.detail) || 'Something went wrong.', ref: parseCommandRef(frame.ref) };
    default:
      return null;
  }
}

/** `GET /agents/v1/me` */
export function parseAgent(value: unknown): AgentIdentity | null {
  if (!isObject(value) || !isString(value.id) || !isString(value.name) || value.name === '') return null;
  return { id: value.id, name: value.name };
}

/** Parses the transcript document; one without a session id gives `null`. */
export function parseTranscript(value: unknown): AgentTranscript | null {
  if (!isObject(value)) return null;
  const ref = parseRef(value);
  if (!ref) return null;
  return {
    ...ref,
    source: str(value.source),
    escalated_at: nullableStr(value.escalated_at),
    taken_over_by: nullableStr(value.taken_over_by),
    messages: list(value.messages).map(parseMessage).filter(notNull),
  };
}
