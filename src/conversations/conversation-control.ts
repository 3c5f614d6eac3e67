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

/**
 * Takeover, release and escalation, from any process (a gateway, the CLI): the change is written to
 * Redis first, then signalled, so the actor holding the conversation, in whichever gateway, reloads
 * it at once. Escalation emits `conversation.escalated` the first time only.
 */
export class ConversationControl {
  private readonly conversations: ConversationStore;
  private readonly relay: EventRelay;
  private readonly signals: SignalBus;
  private readonly visitors: VisitorDelivery;

  constructor(deps: {
    conversations: ConversationStore;
    relay: EventRelay;
    signals: SignalBus;
    visitors: VisitorDelivery;
  }) {
    this.conversations = deps.conversations;
    this.relay = deps.relay;
    this.signals = deps.signals;
    this.visitors = deps.visitors;
  }

  async takeOver(chatbotId: string, sessionId: string, agent: string): Promise<ConversationView> {
    const view = await this.conversations.takeOver(chatbotId, sessionId, agent);
    await this.signal(view);
    return view;
  }

  async release(chatbotId: string, sessionId: string, agent = ''): Promise<ConversationView> {
    const view = await this.conversations.release(chatbotId, sessionId, agent);
    await this.signal(view);
    return view;
  }

  /**
   * A human agent's reply: stored as role `agent` (the agent must hold the conversation), then sent to
   * the owner's agents, wherever their sockets are, and to the visitor, whatever the channel.
   */
  async reply(chatbotId: string, sessionId: string, agent: string, content: string): Promise<StoredMessage> {
    const message = await this.conversations.appendAgentReply(chatbotId, sessionId, agent, content);
    await this.signals.publish({ kind: 'message', chatbot_id: chatbotId, session_id: sessionId, message });
    const push = { type: 'message', role: 'agent', content, created_at: message.created_at } as const;
    await this.visitors.deliver(chatbotId, sessionId, push);
    return message;
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
    const result = await this.conversations.escalate(chatbotId, sessionId, create);
    if (result.first) {
      // Never throws: the entry is in Redis, and deliveries not written now are written later.
      await this.relay.deliver(chatbotId, [result.entry]);
      await this.signals.publish({
        kind: 'escalated',
        chatbot_id: chatbotId,
        session_id: sessionId,
        escalated_at: result.escalatedAt,
      });
    }
    return result;
  }

  show(chatbotId: string, sessionId: string): Promise<ConversationTranscript> {
    return this.conversations.transcript(chatbotId, sessionId);
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
