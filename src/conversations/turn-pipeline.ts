import type { EscalationRules } from '../chatbots/chatbot-settings.ts';
import type { Clock } from '../clock.ts';
import { ProviderError, RateLimitError, ValidationError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { HISTORY_SIZE } from './prompt-builder.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import type { ConversationStore, StoredMessage, TurnStart } from '../store/conversation-store.ts';
import type { QuotaStore } from '../admission/quota-store.ts';
import type { EventRelay } from '../webhooks/event-relay.ts';
import { asksForHuman, matchesKeyword } from './escalation-intent.ts';
import { checkMessageText } from './message-text.ts';
import { sourceOf, type Channel } from './session.ts';
import { generateTurnReply, type Generation, type TurnGenerationDeps } from './turn-generation.ts';

/** A visitor message from any channel, in the project's own terms. */
export interface InboundMessage {
  chatbot: Chatbot;
  sessionId: string;
  content: string;
  channel: Channel;
  /** Called when the AI starts working on the reply (channels show a typing indicator). */
  onTyping?: () => void;
}

/** How a turn ended, as the channel that asked is told. */
export type TurnOutcome =
  | { kind: 'reply'; text: string; createdAt: string }
  /** A human agent holds the conversation: the message was stored, the AI stayed silent. */
  | { kind: 'silent' }
  | { kind: 'failed'; error: Error };

/** A turn that holds its conversation's lease: the visitor message is stored, the reply is not yet. */
export type StartedTurn = Extract<TurnStart, { kind: 'started' }>;

/** What a turn works with: what generating its reply needs, and the stores and signals around it. */
export interface TurnPipelineDeps extends TurnGenerationDeps {
  conversations: ConversationStore;
  quota: QuotaStore;
  /** Writes the webhook deliveries of a turn's events (recorded by the turn's first script). */
  relay: EventRelay;
  /** Tells the owner's agents about a stored message (visitor or AI), wherever they are connected. */
  feed: (chatbotId: string, sessionId: string, message: StoredMessage) => Promise<void>;
  /** Escalates a conversation (the event fires the first time only). */
  escalate: (chatbotId: string, sessionId: string) => Promise<unknown>;
  limits: { rateLimit: number; rateWindowMs: number; leaseMs: number };
}

/**
 * One turn, whatever channel its message came on, as stages run in this order: admit (paused
 * chatbot, message text) → count the owner's quota → record (lease, conversation rate limit, the
 * visitor message stored) → announce (events, agents' feed, escalation rules) → generate (retrieval,
 * prompt, LLM) → store the reply and announce it. The conversation actor runs the stages in order and
 * owns only what is about time: ordering, the lease and when a takeover takes effect.
 */
export class TurnPipeline {
  private readonly deps: TurnPipelineDeps;

  constructor(deps: TurnPipelineDeps) {
    this.deps = deps;
  }

  get clock(): Clock {
    return this.deps.clock;
  }

  get logger(): Logger {
    return this.deps.logger;
  }

  get leaseMs(): number {
    return this.deps.limits.leaseMs;
  }

  /** The rules every message meets before it is queued, on every channel; a ValidationError otherwise. */
  admit(message: InboundMessage): void {
    checkMessageText(message.content, 'message');
    if (!message.chatbot.is_active) throw new ValidationError('Chatbot is paused.');
  }

  /**
   * Counts the message against its owner's monthly quota (once, however often the turn waits for the
   * lease), or throws when the quota is spent. The chatbot is registered for the pending-event sweeper
   * before every attempt to record an entry (a registration lasts a while, so this rarely costs a
   * round trip), alongside the quota the first time.
   */
  async countQuota(message: InboundMessage, counted: boolean): Promise<void> {
    const register = this.deps.relay.register(message.chatbot.id);
    if (counted) return void (await register);
    const [decision] = await Promise.all([this.deps.quota.consume(message.chatbot.user_id), register]);
    if (decision !== 'counted') throw new RateLimitError('Monthly message limit reached.');
  }

  /**
   * Takes the conversation's lease and stores the visitor message, in one script; `leased` when
   * another gateway holds the conversation. A message over the conversation rate limit is refused
   * (its quota given back) with a RateLimitError.
   */
  async record(message: InboundMessage): Promise<StartedTurn | { kind: 'leased' }> {
    const { chatbot, sessionId, content, channel } = message;
    const source = sourceOf(sessionId, channel);
    const limits = { ...this.deps.limits, historySize: HISTORY_SIZE };
    const start = await this.deps.conversations.beginTurn(chatbot.id, sessionId, { content, source }, limits);
    if (start.kind === 'rate-limited') {
      await this.deps.quota.refund(chatbot.user_id);
      throw new RateLimitError('Conversation rate limit exceeded.');
    }
    return start;
  }

  /**
   * The visitor message's consequences: its webhook events (after those a dead process left pending
   * for this chatbot, which happened before), the agents' feed and the owner's escalation rules. None
   * can fail the turn: the entries are in Redis, and what is not written now is written later.
   */
  async announce(message: InboundMessage, start: StartedTurn): Promise<void> {
    const { chatbot, sessionId, content } = message;
    if (start.overdue.length > 0) {
      const relayed = await this.deps.relay.deliver(chatbot.id, start.overdue);
      this.deps.logger.warn({ chatbot_id: chatbot.id, entries: relayed }, 'relayed events a process left pending');
    }
    await this.deps.relay.deliver(chatbot.id, [start.entry]);
    await this.publish(chatbot.id, sessionId, { role: 'user', content, created_at: start.createdAt });
    if (!start.escalated && wantsHuman(chatbot.settings.escalation, content)) {
      await this.escalate(chatbot.id, sessionId);
    }
  }

  /** Retrieval, prompt and the LLM call. Never rejects. */
  generate(message: InboundMessage, start: StartedTurn, signal: AbortSignal): Promise<Generation> {
    const { chatbot, channel, content } = message;
    return generateTurnReply(this.deps, { chatbot, channel, history: start.history, message: content, signal });
  }

  /**
   * Stores what the generation produced (nothing on failure; in a chat, the fallback message when the
   * provider call failed) and ends the turn, announcing a stored
   * reply to the agents and applying the fallback-streak rule; resolves with what the requester is
   * told: `silent` when a takeover meanwhile discarded the reply.
   */
  async store(message: InboundMessage, token: string, generation: Generation): Promise<TurnOutcome> {
    const { chatbot, sessionId } = message;
    if (generation.kind !== 'reply') {
      const llm = generation.kind === 'llm-failed';
      this.deps.logger.error(
        { err: generation.error, chatbot_id: chatbot.id },
        llm ? 'LLM provider failed' : 'conversation turn failed',
      );
      // A visitor in a chat (the widget, Telegram, WhatsApp) whose provider failed gets the chatbot's
      // fallback message, as for an empty answer; the REST API keeps SPEC's 500.
      if (!llm || message.channel === 'api') {
        await this.release(message, token);
        return { kind: 'failed', error: llm ? new ProviderError('LLM provider error.') : (generation.error as Error) };
      }
    }
    const text = generation.kind === 'reply' ? generation.text : '';
    const reply = text.trim() ? text : chatbot.fallback_message;
    const end = await this.deps.conversations.endTurn(chatbot.id, sessionId, token, {
      role: 'assistant',
      content: reply,
      fallback: reply.trim() === chatbot.fallback_message.trim(),
    });
    if (end.outcome === 'stored') {
      await this.publish(chatbot.id, sessionId, { role: 'assistant', content: reply, created_at: end.createdAt });
    }
    const streakRule = chatbot.settings.escalation.fallback_streak;
    if (streakRule > 0 && end.fallbackStreak >= streakRule) await this.escalate(chatbot.id, sessionId);
    if (end.outcome === 'stored') return { kind: 'reply', text: reply, createdAt: end.createdAt };
    if (end.outcome === 'discarded') return { kind: 'silent' };
    return { kind: 'failed', error: new Error('conversation lease lost during the turn') };
  }

  /** Ends a turn without a reply: the lease goes at once, so the messages behind it need not wait. */
  async release(message: InboundMessage, token: string): Promise<void> {
    await this.deps.conversations.endTurn(message.chatbot.id, message.sessionId, token, null);
  }

  /** Extends the turn's lease; false when it is no longer the turn's (it lapsed). */
  renewLease(message: InboundMessage, token: string): Promise<boolean> {
    return this.deps.conversations.renewLease(message.chatbot.id, message.sessionId, token, this.leaseMs);
  }

  /** Whether a human holds the conversation now. */
  async takenOver(message: InboundMessage): Promise<boolean> {
    const view = await this.deps.conversations.get(message.chatbot.id, message.sessionId);
    return Boolean(view.taken_over_by);
  }

  /** Agents' feed is a side effect of the turn: its failure is logged, never the visitor's problem. */
  private async publish(chatbotId: string, sessionId: string, message: StoredMessage): Promise<void> {
    try {
      await this.deps.feed(chatbotId, sessionId, message);
    } catch (error) {
      this.deps.logger.error({ err: error, chatbot_id: chatbotId }, 'could not tell agents about a message');
    }
  }

  /** Escalation is a side effect of the turn: its failure is logged, never the visitor's problem. */
  private async escalate(chatbotId: string, sessionId: string): Promise<void> {
    try {
      await this.deps.escalate(chatbotId, sessionId);
    } catch (error) {
      this.deps.logger.error({ err: error, chatbot_id: chatbotId }, 'could not escalate a conversation');
    }
  }
}

/** The owner's rules and smart intent: does this visitor message escalate the conversation? */
function wantsHuman(rules: EscalationRules, content: string): boolean {
  return (rules.smart_intent && asksForHuman(content)) || matchesKeyword(content, rules.keywords);
}
