/**
 * The agent console's contract with the gateway: the agent socket's frames both ways (DESIGN.md's
 * agent protocol) and the documents the console reads with its token. Part of the contract (see
 * README.md beside this file).
 */
import type { CannedReply } from './canned-reply.ts';
import type { Message, Transcript } from './conversation.ts';

/** A command's reference as the agent sent it, echoed in the command's answer. */
export type CommandRef = string | number;

/** Names one conversation. */
export interface ConversationRef {
  chatbot_id: string;
  session_id: string;
}

/** The lead form a conversation's visitor left, as they filled it in (`''` for a field left empty). */
export interface AgentLead {
  name: string;
  email: string;
  phone: string;
}

/**
 * What every conversation frame (a `conversations` item and every push) tells about its conversation
 * besides its ids, so a console can say who and where without another request. Added to the
 * protocol after its first version: a client must accept frames without them.
 */
export interface AgentConversationContext {
  /** The chatbot's name as it is now. */
  chatbot_name: string;
  /** The conversation's last stored message (or its creation, when it has none yet). */
  last_activity_at: string;
  /** The visitor's lead, or null when they left none. */
  lead: AgentLead | null;
}

/** One conversation of the `conversations` frame. */
export interface AgentConversation extends ConversationRef, AgentConversationContext {
  source: string;
  escalated_at: string | null;
  taken_over_by: string | null;
  last_message: Message | null;
}

/**
 * Pushed when a message is stored in one of the owner's conversations. An AI reply that was streamed
 * names its stream: it replaces what that stream's `delta` pushes showed.
 */
export type AgentMessagePush = { type: 'message'; stream_id?: string } & ConversationRef &
  Message &
  AgentConversationContext;

/**
 * Pushed while the AI writes a reply in one of the owner's widget conversations: the next piece of
 * it (the first one starts it). Added after the protocol's first version: clients ignore frames of
 * types they do not know.
 */
export type AgentDeltaPush = { type: 'delta'; stream_id: string; content: string } & ConversationRef;

/** A reply being written will not be stored (a takeover cut it, the turn failed): drop what was shown. */
export type AgentStreamEndPush = {
  type: 'stream_end';
  stream_id: string;
  reason: 'taken_over' | 'failed';
} & ConversationRef;

/** Pushed when one of the owner's conversations is escalated. */
export type AgentEscalatedPush = { type: 'escalated'; escalated_at: string } & ConversationRef &
  AgentConversationContext;

/** Pushed when the visitor of one of the owner's conversations leaves (or changes) their lead. */
export type AgentLeadPush = { type: 'lead'; lead: AgentLead } & ConversationRef & AgentConversationContext;

/** What the gateway pushes to the agents of a chatbot's owner, whichever process it happened in. */
export type AgentPush = AgentMessagePush | AgentEscalatedPush | AgentLeadPush | AgentDeltaPush | AgentStreamEndPush;

/**
 * An error frame: a command's answer carries its `ref` (null when the frame had no usable one, or was
 * dropped unread for going too fast); a refused token gets one without `ref`, then close 4401.
 */
export interface AgentErrorFrame {
  type: 'error';
  detail: string;
  ref?: CommandRef | null;
}

/**
 * Pushed to every agent of an owner when the owner's canned replies change (in the dashboard or the
 * CLI, through any gateway): read them again (`GET /agents/v1/canned-replies`). Added after the
 * protocol's first version.
 */
export interface AgentCannedRepliesChangedPush {
  type: 'canned_replies_changed';
}

/**
 * The answer to a `suggest` command: a draft reply written by the chatbot's provider for the agent to
 * edit and send (nothing is sent by it). Added after the protocol's first version.
 */
export interface AgentSuggestionFrame {
  type: 'suggestion';
  ref: CommandRef | null;
  content: string;
}

/** Server → agent frames: `authenticated` and `conversations` after the auth frame, then pushes and answers. */
export type AgentServerFrame =
  | { type: 'authenticated' }
  | { type: 'conversations'; items: AgentConversation[] }
  | AgentPush
  | AgentCannedRepliesChangedPush
  | { type: 'ok'; ref: CommandRef | null }
  | AgentSuggestionFrame
  | AgentErrorFrame;

/** The agent's first frame. */
export interface AuthFrame {
  type: 'auth';
  token: string;
}

/**
 * What an agent does to one conversation: take it over, release it, reply in it, or say it is writing
 * (`typing`, added after the protocol's first version: the visitor sees the agent typing; only the
 * holder may).
 */
export type AgentCommand =
  | ({ type: 'takeover' | 'release' | 'typing' } & ConversationRef)
  | ({ type: 'reply'; content: string } & ConversationRef);

/** A command as sent; its answer echoes `ref`. */
export type AgentCommandFrame = AgentCommand & { ref?: CommandRef };

/**
 * Asks the chatbot's provider for a draft reply in a conversation this agent holds; answered with a
 * `suggestion` frame or an error frame carrying `ref`. Added after the protocol's first version.
 */
export type AgentSuggestFrame = { type: 'suggest'; ref?: CommandRef } & ConversationRef;

/** Agent → server frames. */
export type AgentClientFrame = AuthFrame | AgentCommandFrame | AgentSuggestFrame;

/** `GET /agents/v1/me`: who the console's token belongs to. */
export interface AgentIdentity {
  id: string;
  name: string;
}

/** `GET /agents/v1/conversations/{chatbot_id}/{session_id}`: a transcript, without the conversation id. */
export type AgentTranscript = Omit<Transcript, 'conversation_id'>;

/** `GET /agents/v1/canned-replies` (one element): the owner's canned replies, ordered by shortcut. */
export type AgentCannedReply = Pick<CannedReply, 'id' | 'shortcut' | 'text'>;
