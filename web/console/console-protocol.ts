/**
 * The gateway's agent contract (src/contract/agent-protocol.ts): the socket frames and the transcript
 * document, with guards that turn untrusted JSON into these types (or `null`), so the rest of the
 * console never sees a malformed value.
 */
import type {
  AgentCannedReply,
  AgentConversation,
  AgentConversationContext,
  AgentIdentity,
  AgentLead,
  AgentServerFrame,
  AgentTranscript,
  ConversationRef,
} from '../../src/contract/agent-protocol.ts';
import type { Citation, Message } from '../../src/contract/conversation.ts';

export type { MessageRole as Role } from '../../src/contract/conversation.ts';
export type {
  AgentCommand as Command,
  AgentConversationContext as ConversationContext,
  AgentEscalatedPush as EscalatedPush,
  AgentLead as Lead,
  AgentLeadPush as LeadPush,
  AgentMessagePush as MessagePush,
  ConversationRef,
} from '../../src/contract/agent-protocol.ts';
export type { AgentCannedReply as CannedReply, AgentIdentity as Agent, AgentTranscript as Transcript, Message };

/**
 * One conversation in the list: the conversations frame's item. A frame without the chatbot's name,
 * the last activity or the lead (the protocol's first version had none) reads as `''`, the last
 * message's time and `null`.
 */
export type ConversationSummary = AgentConversation;

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
  | Frame<'lead'>
  | Frame<'delta'>
  | Frame<'stream_end'>
  | Frame<'canned_replies_changed'>
  | (Omit<Frame<'ok'>, 'ref'> & { ref: string })
  | (Omit<Frame<'suggestion'>, 'ref'> & { ref: string })
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

function parseCitation(value: unknown): Citation | null {
  if (!isObject(value) || !isString(value.title)) return null;
  // Only a web address becomes a link.
  return isString(value.url) && /^https?:\/\//i.test(value.url)
    ? { title: value.title, url: value.url }
    : { title: value.title };
}

function parseMessage(value: unknown): Message | null {
  if (!isObject(value) || !isString(value.content)) return null;
  const role = value.role;
  if (role !== 'user' && role !== 'assistant' && role !== 'agent') return null;
  const message: Message = { role, content: value.content, created_at: str(value.created_at) };
  const citations = list(value.citations).map(parseCitation).filter(notNull);
  if (citations.length > 0) message.citations = citations;
  if (value.feedback === 'up' || value.feedback === 'down') message.feedback = value.feedback;
  const agent = value.agent;
  if (role === 'agent' && isObject(agent) && isString(agent.name) && agent.name) {
    message.agent = { name: agent.name, initial: str(agent.initial) };
  }
  return message;
}

/** A lead with at least one field filled in, or `null`. */
function parseLead(value: unknown): AgentLead | null {
  if (!isObject(value)) return null;
  const lead = { name: str(value.name).trim(), email: str(value.email).trim(), phone: str(value.phone).trim() };
  return lead.name || lead.email || lead.phone ? lead : null;
}

/** What a frame tells about its conversation; `fallbackTime` when it has no `last_activity_at`. */
function parseContext(frame: Json, fallbackTime: string): AgentConversationContext {
  return {
    chatbot_name: str(frame.chatbot_name),
    last_activity_at: str(frame.last_activity_at) || fallbackTime,
    lead: parseLead(frame.lead),
  };
}

function parseSummary(value: unknown): ConversationSummary | null {
  if (!isObject(value)) return null;
  const ref = parseRef(value);
  if (!ref) return null;
  const lastMessage = parseMessage(value.last_message);
  return {
    ...ref,
    source: str(value.source),
    escalated_at: nullableStr(value.escalated_at),
    taken_over_by: nullableStr(value.taken_over_by),
    last_message: lastMessage,
    ...parseContext(value, lastMessage?.created_at ?? ''),
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
      if (!message) return null;
      const streamId = isString(frame.stream_id) ? { stream_id: frame.stream_id } : {};
      return { type: 'message', ...ref, ...message, ...parseContext(frame, message.created_at), ...streamId };
    }
    case 'delta':
      if (!isString(frame.stream_id) || !isString(frame.content)) return null;
      return { type: 'delta', ...ref, stream_id: frame.stream_id, content: frame.content };
    case 'stream_end':
      if (!isString(frame.stream_id)) return null;
      return {
        type: 'stream_end',
        ...ref,
        stream_id: frame.stream_id,
        reason: frame.reason === 'taken_over' ? 'taken_over' : 'failed',
      };
    case 'lead': {
      const context = parseContext(frame, '');
      return context.lead ? { type: 'lead', ...ref, ...context, lead: context.lead } : null;
    }
    default:
      return { type: 'escalated', ...ref, escalated_at: str(frame.escalated_at), ...parseContext(frame, '') };
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
    case 'lead':
    case 'delta':
    case 'stream_end':
      return parsePush(frame);
    case 'ok': {
      const ref = parseCommandRef(frame.ref);
      return ref === null ? null : { type: 'ok', ref };
    }
    case 'suggestion': {
      const ref = parseCommandRef(frame.ref);
      return ref === null || !isString(frame.content) ? null : { type: 'suggestion', ref, content: frame.content };
    }
    case 'canned_replies_changed':
      return { type: 'canned_replies_changed' };
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

/** `GET /agents/v1/canned-replies`: the replies that have a shortcut and a text; anything else gives `null`. */
export function parseCannedReplies(value: unknown): AgentCannedReply[] | null {
  if (!Array.isArray(value)) return null;
  return (value as unknown[]).flatMap((item) =>
    isObject(item) && isString(item.id) && isString(item.shortcut) && item.shortcut !== '' && isString(item.text)
      ? [{ id: item.id, shortcut: item.shortcut, text: item.text }]
      : [],
  );
}
