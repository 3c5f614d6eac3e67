import type { WebSocket } from 'ws';
import type { AgentCannedRepliesChangedPush, AgentErrorFrame } from '../contract/agent-protocol.ts';
import type { SocketServer } from '../http/socket-server.ts';
import type { Logger } from '../logger.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { ConversationStore } from '../store/conversation-store.ts';
import type { LeadStore } from '../store/lead-store.ts';
import type { ReceivedSignal } from '../redis/signal-bus.ts';
import { AgentConversations, type ConversationSignal } from './agent-conversations.ts';

const PUSHED: ReadonlySet<string> = new Set<ConversationSignal['kind']>([
  'message',
  'escalated',
  'lead',
  'stream',
  'stream-end',
]);

/** Whether the signal becomes a push to agents. */
const pushed = (signal: ReceivedSignal): signal is ConversationSignal & { origin: string } => PUSHED.has(signal.kind);

/** Close code of an agent socket whose token is refused (DESIGN.md). */
export const UNAUTHORIZED = 4401;

/** Refuses an agent socket: an error frame, then close 4401. */
export function refuseAgent(sockets: SocketServer, socket: WebSocket, detail = 'Invalid agent token.'): void {
  sockets.send(socket, { type: 'error', detail } satisfies AgentErrorFrame);
  socket.close(UNAUTHORIZED, 'unauthorized');
}

/** Adds a socket to `key`'s set, and takes it out (and an emptied set) when it closes. */
function track(sets: Map<string, Set<WebSocket>>, key: string, socket: WebSocket): void {
  let set = sets.get(key);
  if (!set) sets.set(key, (set = new Set()));
  set.add(socket);
  socket.once('close', () => {
    set.delete(socket);
    if (set.size === 0 && sets.get(key) === set) sets.delete(key);
  });
}

/**
 * The authenticated agent sockets of this process, by owner, and the pushes they receive: every
 * stored message, every escalation and every lead left in the owner's chatbots' conversations,
 * whichever process it happened in (they arrive as Redis pub/sub signals). An agent never sees another
 * owner's conversations.
 */
export class AgentHub {
  private readonly sockets: SocketServer;
  private readonly chatbots: ChatbotStore;
  private readonly views: AgentConversations;
  private readonly logger: Logger;
  private readonly byOwner = new Map<string, Set<WebSocket>>();
  private readonly byAgent = new Map<string, Set<WebSocket>>();
  /** Signals are handled one at a time, so pushes keep the order their signals arrived in. */
  private queue = Promise.resolve();

  constructor(deps: {
    sockets: SocketServer;
    chatbots: ChatbotStore;
    conversations: ConversationStore;
    leads: LeadStore;
    logger: Logger;
  }) {
    this.sockets = deps.sockets;
    this.chatbots = deps.chatbots;
    this.views = new AgentConversations(deps);
    this.logger = deps.logger;
  }

  add(agent: { id: string; user_id: string }, socket: WebSocket): void {
    track(this.byOwner, agent.user_id, socket);
    track(this.byAgent, agent.id, socket);
  }

  /** The agent was revoked (in any process): its sockets here are refused as a bad token is. */
  revoked(agentId: string): void {
    for (const socket of this.byAgent.get(agentId) ?? []) refuseAgent(this.sockets, socket);
  }

  /** The owner's canned replies changed (in any process): the owner's sockets here read them again. */
  cannedRepliesChanged(userId: string): void {
    const push: AgentCannedRepliesChangedPush = { type: 'canned_replies_changed' };
    for (const socket of this.byOwner.get(userId) ?? []) this.sockets.send(socket, push);
  }

  /** A signal from any process: pushes it to the agents of the chatbot's owner connected here. */
  onSignal(signal: ReceivedSignal): void {
    if (!pushed(signal)) return;
    if (this.byOwner.size === 0) return;
    this.queue = this.queue
      .then(async () => {
        const chatbot = await this.chatbots.get(signal.chatbot_id);
        const sockets = this.byOwner.get(chatbot.user_id);
        if (!sockets) return;
        const push = await this.views.push(signal, chatbot);
        // The owner's sockets as they are now: one may have closed while the push was made.
        if (push) for (const socket of this.byOwner.get(chatbot.user_id) ?? []) this.sockets.send(socket, push);
      })
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not push to agents'));
  }
}
