import type { AgentClientFrame, CommandRef } from '../contract/agent-protocol.ts';
import { checkMessageText } from '../conversations/message-text.ts';
import { checkSessionId } from '../conversations/session.ts';
import { ValidationError } from '../errors.ts';
import type { FrameFields } from '../http/socket-frame.ts';

/** A command's reference, echoed in its answer; null when the frame had no usable one. */
export type Ref = CommandRef | null;

/** An agent's frame as it arrives. */
type AgentFrameFields = FrameFields<AgentClientFrame>;

/** What an agent's frame asks for. */
export type AgentCommand =
  | { kind: 'auth'; token: unknown }
  | { kind: 'takeover' | 'release' | 'typing' | 'suggest'; chatbotId: string; sessionId: string; ref: Ref }
  | { kind: 'reply'; chatbotId: string; sessionId: string; content: string; ref: Ref };

/** A frame's `ref`, if it has a usable one (an error answer carries it too). */
export function refOf(fields: AgentFrameFields): Ref {
  return typeof fields.ref === 'string' || typeof fields.ref === 'number' ? fields.ref : null;
}

/** Reads one frame of the agent socket (DESIGN.md's protocol); a bad one is a ValidationError. */
export function parseAgentFrame(fields: AgentFrameFields): AgentCommand {
  const ref = refOf(fields);
  switch (fields.type) {
    case 'auth':
      return { kind: 'auth', token: fields.token };
    case 'takeover':
    case 'release':
    case 'typing':
    case 'suggest':
      return { kind: fields.type, ...target(fields), ref };
    case 'reply':
      return { kind: 'reply', ...target(fields), content: checkMessageText(fields.content, 'content'), ref };
    case undefined:
      throw new ValidationError('type is required.');
    default:
      throw new ValidationError('type must be one of: auth, takeover, release, reply, typing, suggest.');
  }
}

function target(fields: AgentFrameFields): { chatbotId: string; sessionId: string } {
  if (typeof fields.chatbot_id !== 'string' || fields.chatbot_id === '') {
    throw new ValidationError('chatbot_id is required.');
  }
  if (fields.session_id === undefined) throw new ValidationError('session_id is required.');
  return { chatbotId: fields.chatbot_id.toLowerCase(), sessionId: checkSessionId(fields.session_id) };
}
