/**
 * The agent console's contract with the gateway: the agent socket's frames both ways (DESIGN.md's
 * agent protocol) and the documents the console reads with its token. Part of the contract (see
 * README.md beside this file).
 */
import type { Message, Transcript } from './conversation.ts';

/** A command's reference as the agent sent it, echoed in the command's answer. */
export type CommandRef = string | number;

/** Names one conversation. */
export interface ConversationRef {
  chatbot_id: string;
  session_id: string;
}

/** One conversation of the `conversations` frame. */
export interface AgentConversation extends ConversationRef {
  source: string;
  escalated_at: string | null;
  taken_over_by: string | null;
  last_message: Message | null;
}

/** Pushed when a message is stored in one of the owner's conversations. */
export type AgentMessagePush = { type: 'message' } & ConversationRef & Message;

/** Pushed when one of the owner's conversations is escalated. */
export type AgentEscalatedPush = { type: 'escalated'; escalated_at: string } & ConversationRef;

/** What the gateway pushes to the agents of a chatbot's owner, whichever process it happened in. */
export type AgentPush = AgentMessagePush | AgentEscalatedPush;

/**
 * An error frame: a command's answer carries its `ref` (null when the frame had no usable one, or was
 * dropped unread for going too fast); a refused token gets one without `ref`, then close 4401.
 */
export interface AgentErrorFrame {
  type: 'error';
  detail: string;
  ref?: CommandRef | null;
}

/** Server → agent frames: `authenticated` and `conversations` after the auth frame, then pushes and answers. */
export type AgentServerFrame =
  | { type: 'authenticated' }
  | { type: 'conversations'; items: AgentConversation[] }
  | AgentPush
  | { type: 'ok'; ref: CommandRef | null }
  | AgentErrorFrame;

/** The agent's first frame. */
export interface AuthFrame {
  type: 'auth';
  token: string;
}

/** What an agent does to one conversation: take it over, release it, or reply in it. */
export type AgentCommand =
  ({ type: 'takeover' | 'release' } & ConversationRef) | ({ type: 'reply'; content: string } & ConversationRef);

/** A command as sent; its answer echoes `ref`. */
export type AgentCommandFrame = AgentCommand & { ref?: CommandRef };

/** Agent → server frames. */
export type AgentClientFrame = AuthFrame | AgentCommandFrame;

/** `GET /agents/v1/me`: who the console's token belongs to. */
export interface AgentIdentity {
  id: string;
  name: string;
}

/** `GET /agents/v1/conversations/{chatbot_id}/{session_id}`: a transcript, without the conversation id. */
export type AgentTranscript = Omit<Transcript, 'conversation_id'>;
