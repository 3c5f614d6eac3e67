import type {
  ConversationStore,
  ConversationTranscript,
  ConversationView,
  EscalationResult,
  StoredMessage,
} from '../store/conversation-store.ts';
import type { SignalBus } from '../redis/signal-bus.ts';
import type { EventRelay } from '../webhooks/event-relay.ts';
import type { VisitorDelivery } from '../channels/visitor-delivery.ts';
import type { WidgetHandoffPush } from '../contract/widget-protocol.ts';
import type { HandoffState } from '../contract/conversation.ts';
import { ConflictError } from '../errors.ts';
import type { Handoffs } from './handoffs.ts';
import type { Logger } from '../logger.ts';
import type { UnansweredRecorder } from '../unanswered/unanswered-recorder.ts';

/**
 * Takeover, release and escalation, from any process (a gateway, the CLI): the change is written to
 * Redis first, then signalled, so the actor holding the conversation, in whichever gateway, reloads
 * it at once. Escalation emits `conversation.escalated` the first time only; a change of holder emits
 * `conversation.taken_over` or `conversation.released` (for the webhooks that select them). Each
 * event's pending entry is written by the script that makes the change, so a process that dies
 * before writing the deliveries loses nothing: the relay's sweep writes them.
 */
export class ConversationControl {
  private readonly conversations: ConversationStore;
  private readonly relay: EventRelay;
  private readonly signals: SignalBus;
  private readonly visitors: VisitorDelivery;
  private readonly handoffs: Handoffs;
  private readonly logger: Logger;
  /** The first escalation puts the visitor's last question in the unanswered inbox. */
  private readonly unanswered: Pick<UnansweredRecorder, 'noteEscalation'>;

  constructor(deps: {
    conversations: ConversationStore;
    relay: EventRelay;
    signals: SignalBus;
    visitors: VisitorDelivery;
    handoffs: Handoffs;
    logger: Logger;
    unanswered: Pick<UnansweredRecorder, 'noteEscalation'>;
  }) {
    this.logger = deps.logger;
    this.conversations = deps.conversations;
    this.relay = deps.relay;
    this.signals = deps.signals;
    this.visitors = deps.visitors;
    this.handoffs = deps.handoffs;
    this.unanswered = deps.unanswered;
  }

  /**
   * Puts `agent` in charge. A takeover that changed the holder emits `conversation.taken_over`
   * (recorded with the change; one by the agent already holding it emits nothing) and tells the
   * visitor who joined.
   */
  async takeOver(chatbotId: string, sessionId: string, agent: string): Promise<ConversationView> {
    await this.relay.register(chatbotId);
    const { conversation, entry } = await this.conversations.takeOver(chatbotId, sessionId, agent);
    await this.signal(conversation);
    if (entry) {
      await this.relay.deliverNew(chatbotId, entry);
      await this.tellVisitor(chatbotId, sessionId, 'joined');
    }
    return conversation;
  }

  /**
   * Hands the conversation back to the AI (`agent` '' releases whoever holds it). A release that ended
   * a hold emits `conversation.released` naming the agent whose hold it was, and tells the visitor who
   * left; releasing a conversation nobody holds emits nothing.
   */
  async release(chatbotId: string, sessionId: string, agent = ''): Promise<ConversationView> {
    await this.relay.register(chatbotId);
    const { conversation, entry } = await this.conversations.release(chatbotId, sessionId, agent);
    await this.signal(conversation);
    if (entry) {
      await this.relay.deliverNew(chatbotId, entry);
      const { agent: leaving } = JSON.parse(entry.json) as { agent: string };
      await this.tellVisitor(chatbotId, sessionId, 'left', { leaving });
    }
    return conversation;
  }

  /**
   * A human agent's reply: stored as role `agent` with how the agent shows (the agent must hold the
   * conversation), then sent to the owner's agents, wherever their sockets are, and to the visitor,
   * whatever the channel. A reply the visitor's platform would refuse (WhatsApp's 24-hour window has
   * closed) is refused before it is stored.
   */
  async reply(chatbotId: string, sessionId: string, agent: string, content: string): Promise<StoredMessage> {
    await this.visitors.assertCanReply(chatbotId, sessionId);
    const persona = await this.handoffs.persona(chatbotId, agent);
    const message = await this.conversations.appendAgentReply(chatbotId, sessionId, agent, content, persona);
    await this.signals.publish({ kind: 'message', chatbot_id: chatbotId, session_id: sessionId, message });
    const push = { type: 'message', role: 'agent', content, created_at: message.created_at, agent: persona } as const;
    await this.visitors.deliver(chatbotId, sessionId, push);
    return message;
  }

  /** The agent holding the conversation is writing: its visitor sees who (a typing indicator). */
  async agentTyping(chatbotId: string, sessionId: string, agent: string): Promise<void> {
    const holder = (await this.conversations.get(chatbotId, sessionId)).taken_over_by;
    if (holder !== agent) throw new ConflictError('Take over the conversation before replying.');
    await this.visitors.deliver(chatbotId, sessionId, {
      type: 'typing',
      agent: await this.handoffs.persona(chatbotId, agent),
    });
  }

  /**
   * The owner answered a chat from the messaging account itself (WhatsApp's linked phone): the
   * message is stored as an agent's and the conversation is taken over (unless an agent already
   * holds it), so the AI never talks over the owner. Nothing is sent to the visitor: the owner's
   * message already reached them. Undefined when the chat has no conversation with the chatbot.
   */
  async ownerReplied(
    chatbotId: string,
    sessionId: string,
    holder: string,
    content: string,
  ): Promise<StoredMessage | undefined> {
    await this.relay.register(chatbotId);
    const stored = await this.conversations.appendOwnerMessage(chatbotId, sessionId, holder, content);
    if (!stored) return undefined;
    if (stored.tookOver) {
      await this.signals.publish({
        kind: 'conversation',
        chatbot_id: chatbotId,
        session_id: sessionId,
        taken_over_by: stored.holder,
      });
    }
    if (stored.entry) await this.relay.deliverNew(chatbotId, stored.entry);
    await this.signals.publish({
      kind: 'message',
      chatbot_id: chatbotId,
      session_id: sessionId,
      message: stored.message,
    });
    return stored.message;
  }

  /**
   * Flags the conversation as needing a human. `create` (channels, not the operator) escalates a
   * conversation whose visitor has not written yet.
   */
  async escalate(chatbotId: string, sessionId: string, create?: { source: string }): Promise<EscalationResult> {
    await this.relay.register(chatbotId);
    const before = await this.conversations.handoff(chatbotId, sessionId);
    const result = await this.conversations.escalate(chatbotId, sessionId, create);
    if (result.first) {
      // Never throws: the entry is in Redis, and deliveries not written now are written later.
      await this.relay.deliverNew(chatbotId, result.entry);
      await this.signals.publish({
        kind: 'escalated',
        chatbot_id: chatbotId,
        session_id: sessionId,
        escalated_at: result.escalatedAt,
      });
      this.unanswered.noteEscalation(chatbotId, sessionId);
    }
    // Asking again while waiting changes nothing the visitor sees; asking while an agent is there is moot.
    const wasWaiting = before !== undefined && !before.takenOverBy && before.humanRequestedAt > before.humanServedAt;
    if (!wasWaiting) await this.tellVisitor(chatbotId, sessionId, 'escalated', { when: 'waiting' });
    return result;
  }

  show(chatbotId: string, sessionId: string): Promise<ConversationTranscript> {
    return this.conversations.transcript(chatbotId, sessionId);
  }

  /**
   * Tells the visitor (every socket of theirs, or their chat) what changed and the state it left: the
   * widget shows it, Telegram and WhatsApp say it in a short message. `left` names who left.
   */
  private async tellVisitor(
    chatbotId: string,
    sessionId: string,
    change: WidgetHandoffPush['change'],
    options: { when?: HandoffState; leaving?: string } = {},
  ): Promise<void> {
    const { when, leaving } = options;
    // A side effect of a change already made: a visitor who cannot be told (a chat whose channel was
    // disconnected since) does not undo it, and the failure is logged.
    try {
      const handoff = await this.handoffs.of(chatbotId, sessionId);
      if (when !== undefined && handoff.state !== when) return;
      const agent = leaving === undefined ? handoff.agent : await this.handoffs.persona(chatbotId, leaving);
      await this.visitors.deliver(chatbotId, sessionId, { type: 'handoff', change, ...handoff, agent });
    } catch (error) {
      this.logger.warn({ err: error, chatbot_id: chatbotId, change }, 'could not tell the visitor of a hand-off');
    }
  }

  private signal(view: ConversationView): Promise<void> {
    return this.signals.publish({
      kind: 'conversation',
      chatbot_id: view.chatbot_id,
      session_id: view.session_id,
      taken_over_by: view.taken_over_by,
    });
  }
}
