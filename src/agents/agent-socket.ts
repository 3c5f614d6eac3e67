import { randomUUID } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import type { Clock } from '../clock.ts';
import type { ConversationControl } from '../conversations/conversation-control.ts';
import { ValidationError } from '../errors.ts';
import { socketErrorDetail } from '../http/error-response.ts';
import { readFrameObject } from '../http/socket-frame.ts';
import { FRAME_RATE_DETAIL, type FrameReceiver } from '../http/socket-intake.ts';
import type { Accept, Refusal, SocketRoute, SocketServer } from '../http/socket-server.ts';
import type { AgentServerFrame } from '../contract/agent-protocol.ts';
import type { Logger } from '../logger.ts';
import type { AgentPresence } from '../store/agent-presence.ts';
import type { Agent } from './agent.ts';
import type { AgentStore } from '../store/agent-store.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { ConversationStore } from '../store/conversation-store.ts';
import type { LeadStore } from '../store/lead-store.ts';
import { AgentConversations } from './agent-conversations.ts';
import type { ReplySuggester } from './reply-suggester.ts';
import { parseAgentFrame, refOf, type AgentCommand, type Ref } from './agent-frames.ts';
import { refuseAgent, UNAUTHORIZED, type AgentHub } from './agent-hub.ts';

/** What the agent socket works with. */
export interface AgentSocketDeps {
  agents: AgentStore;
  chatbots: ChatbotStore;
  conversations: ConversationStore;
  leads: LeadStore;
  control: ConversationControl;
  /** Writes the drafts `suggest` asks for. */
  suggestions: ReplySuggester;
  presence: AgentPresence;
  hub: AgentHub;
  sockets: SocketServer;
  /** Times the authentication deadline and the presence renewals. */
  clock: Clock;
  logger: Logger;
  /** How long a connection counts as online without being renewed (renewed at a third of it). */
  presenceTtlMs: number;
  /** How long a socket may stay open without authenticating. */
  authTimeoutMs: number;
}

/** A conversation counts as live this long after its last activity (escalated or held ones always do). */
const LIVE_MS = 24 * 3600 * 1000;

/**
 * The agents' socket (`/agents/v1/socket`): an auth frame first (else an error frame and close 4401),
 * then the owner's live and escalated conversations, pushed messages and escalations, and the
 * takeover, reply and release commands, each answered with `ok` or an error frame carrying its `ref`,
 * and `suggest`, answered with a `suggestion` frame or an error frame.
 */
export class AgentSocket implements SocketRoute {
  private readonly deps: AgentSocketDeps;
  private readonly views: AgentConversations;

  constructor(deps: AgentSocketDeps) {
    this.deps = deps;
    this.views = new AgentConversations(deps);
  }

  admit(): Promise<Refusal | Accept> {
    return Promise.resolve((socket: WebSocket) => this.open(socket));
  }

  private open(socket: WebSocket): FrameReceiver {
    let agent: Agent | undefined;
    const { clock, authTimeoutMs } = this.deps;
    const timer = clock.setTimeout(() => this.refuse(socket, 'Authentication timed out.'), authTimeoutMs);
    socket.once('close', () => clock.clearTimer(timer));
    const receive = async (data: RawData, isBinary: boolean) => {
      let ref: Ref = null;
      try {
        const fields = readFrameObject(data, isBinary);
        ref = refOf(fields);
        const command = parseAgentFrame(fields);
        if (!agent) {
          clock.clearTimer(timer);
          agent = await this.authenticate(socket, command);
        } else {
          await this.command(socket, agent, command);
        }
      } catch (error) {
        this.fail(socket, error, ref);
        if (!agent) this.refuse(socket);
      }
    };
    // A dropped frame is not read, so its ref is unknown.
    const overRate = () => this.send(socket, { type: 'error', detail: FRAME_RATE_DETAIL, ref: null });
    return { receive, overRate };
  }

  private async authenticate(socket: WebSocket, command: AgentCommand): Promise<Agent | undefined> {
    if (command.kind !== 'auth') return void this.refuse(socket, 'Authenticate first.');
    const agent = await this.deps.agents.authenticate(command.token);
    if (!agent) return void this.refuse(socket, 'Invalid agent token.');
    this.deps.hub.add(agent, socket);
    this.stayOnline(socket, agent);
    this.send(socket, { type: 'authenticated' });
    const since = this.deps.clock.nowMicros() / 1000 - LIVE_MS;
    this.send(socket, { type: 'conversations', items: await this.views.list(agent.user_id, since) });
    return agent;
  }

  private async command(socket: WebSocket, agent: Agent, command: AgentCommand): Promise<void> {
    if (command.kind === 'auth') throw new ValidationError('Already authenticated.');
    // A revoked agent is cut off at its next command.
    if (!(await this.deps.agents.isActive(agent))) return this.refuse(socket, 'Invalid agent token.');
    const chatbot = await this.deps.chatbots.getOwned(agent.user_id, command.chatbotId);
    if (command.kind === 'suggest') {
      const pending = await this.deps.suggestions.admit(agent, chatbot, command.sessionId);
      // Written outside this frame's turn: the socket's next frames (a reply, a release) do not wait
      // for an LLM call.
      void pending.write().then(
        (content) => this.send(socket, { type: 'suggestion', ref: command.ref, content }),
        (error: unknown) => this.fail(socket, error, command.ref),
      );
      return;
    }
    const control = this.deps.control;
    if (command.kind === 'takeover') await control.takeOver(chatbot.id, command.sessionId, agent.name);
    else if (command.kind === 'release') await control.release(chatbot.id, command.sessionId, agent.name);
    else if (command.kind === 'reply') await control.reply(chatbot.id, command.sessionId, agent.name, command.content);
    else if (command.kind === 'typing') await control.agentTyping(chatbot.id, command.sessionId, agent.name);
    this.send(socket, { type: 'ok', ref: command.ref });
  }

  /** Counts the connection as an online agent of its owner while it is open. */
  private stayOnline(socket: WebSocket, agent: Agent): void {
    const id = randomUUID();
    const { presence, presenceTtlMs, clock, logger } = this.deps;
    const enter = () =>
      presence
        .enter(agent.user_id, id, presenceTtlMs)
        .catch((error: unknown) => logger.warn({ err: error }, 'presence'));
    void enter();
    const renew = clock.setInterval(() => void enter(), presenceTtlMs / 3);
    socket.once('close', () => {
      clock.clearTimer(renew);
      presence.leave(agent.user_id, id).catch((error: unknown) => logger.warn({ err: error }, 'presence'));
    });
  }

  /** Every frame to an agent goes out here, as the contract's (src/contract/agent-protocol.ts). */
  private send(socket: WebSocket, frame: AgentServerFrame): void {
    this.deps.sockets.send(socket, frame);
  }

  private fail(socket: WebSocket, error: unknown, ref: Ref): void {
    const { detail, internal } = socketErrorDetail(error);
    if (internal) this.deps.logger.error({ err: error }, 'agent frame failed');
    this.send(socket, { type: 'error', detail, ref });
  }

  private refuse(socket: WebSocket, detail?: string): void {
    if (detail) refuseAgent(this.deps.sockets, socket, detail);
    else socket.close(UNAUTHORIZED, 'unauthorized');
  }
}
