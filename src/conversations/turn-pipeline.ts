import type { EscalationRules } from '../chatbots/chatbot-settings.ts';
import type { Clock } from '../clock.ts';
import { ProviderError, RateLimitError, ValidationError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { HISTORY_SIZE } from './prompt-builder.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import type { Announce, ConversationStore, StoredMessage, TurnStart } from '../store/conversation-store.ts';
import type { ScriptSignal } from '../redis/signal-bus.ts';
import type { QuotaDecision, QuotaStore } from '../admission/quota-store.ts';
import type { EventRelay } from '../webhooks/event-relay.ts';
import { asksForHuman, matchesKeyword } from './escalation-intent.ts';
import { checkMessageText } from './message-text.ts';
import { sourceOf, type Channel } from './session.ts';
import { generateTurnReply, type Generation, type TurnGenerationDeps } from './turn-generation.ts';
import type { ReplyStream } from './reply-stream.ts';
import type { Citation } from '../contract/conversation.ts';
import type { EventName } from '../contract/webhook.ts';
import type { UnansweredRecorder } from '../unanswered/unanswered-recorder.ts';
import type { TurnObservation, TurnStep } from '../metrics/turn-observer.ts';

/** The events a visitor message's turn records (its pending entry only when a webhook selected one). */
const TURN_EVENTS: readonly EventName[] = ['conversation.started', 'message.received'];

/** How much of a provider's error message a transcript keeps. */
const MAX_FAILURE_LENGTH = 500;

/** A visitor message from any channel, in the project's own terms. */
export interface InboundMessage {
  chatbot: Chatbot;
  sessionId: string;
  content: string;
  channel: Channel;
  /** Called when the AI starts working on the reply (channels show a typing indicator). */
  onTyping?: () => void;
  /**
   * Stored as the visitor's message but never answered by the AI: a placeholder for what the chatbot
   * cannot read (a photo, a location); the turn ends `silent`.
   */
  recordOnly?: true;
  /** Its metrics and trace, when either is on; set by the conversation router, not by channels. */
  observation?: TurnObservation;
  /**
   * The monthly quota's decision, when the channel already asked it: the REST chat counts its message
   * in the API gate's script (RequestGate.admitKey), and only a message `admissionError` accepts.
   */
  quota?: QuotaDecision;
}

/**
 * Why a message is refused before it is queued, on every channel (a ValidationError), or undefined:
 * its text, and a paused chatbot.
 */
export function admissionError(message: Pick<InboundMessage, 'chatbot' | 'content'>): ValidationError | undefined {
  try {
    checkMessageText(message.content, 'message');
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  return message.chatbot.is_active ? undefined : new ValidationError('Chatbot is paused.');
}

/**
 * How a turn ended, as the channel that asked is told. A reply carries the sources its `[n]` markers
 * cite, and the id of the stream that showed it while it was written, if one did.
 */
export type TurnOutcome =
  | {
      kind: 'reply';
      text: string;
      createdAt: string;
      citations: Citation[];
      streamId?: string;
      /** The sources held nothing relevant and the chatbot answers only from them: offer a human. */
      handoff?: true;
    }
  /** A human agent holds the conversation: the message was stored, the AI stayed silent. */
  | { kind: 'silent' }
  | { kind: 'failed'; error: Error };

/**
 * The agents' feed of stored messages (visitor or AI), wherever the agents are connected; an AI reply
 * that was streamed names its stream.
 */
export interface MessageFeed {
  /** Publishes a stored message's signal. */
  publish(chatbotId: string, sessionId: string, message: StoredMessage, streamId?: string): Promise<void>;
  /**
   * The same signal for the script that stores the message to publish with it, in the same round trip;
   * undefined when a script cannot publish it (SignalBus.forScript): then `publish` after.
   */
  forScript(
    chatbotId: string,
    sessionId: string,
    message: StoredMessage,
    streamId?: string,
  ): Promise<ScriptSignal | undefined>;
}

/** A turn that holds its conversation's lease: the visitor message is stored, the reply is not yet. */
export type StartedTurn = Extract<TurnStart, { kind: 'started' }>;

/** What a turn works with: what generating its reply needs, and the stores and signals around it. */
export interface TurnPipelineDeps extends TurnGenerationDeps {
  conversations: ConversationStore;
  quota: QuotaStore;
  /** Writes the webhook deliveries of a turn's events (recorded by the turn's first script). */
  relay: EventRelay;
  /** Tells the owner's agents about a stored message (visitor or AI), wherever they are connected. */
  feed: MessageFeed;
  /** A reply stream for a conversation (the widget's replies are shown while they are written). */
  stream: (chatbotId: string, sessionId: string) => ReplyStream;
  /** Escalates a conversation (the event fires the first time only). */
  escalate: (chatbotId: string, sessionId: string) => Promise<unknown>;
  limits: { rateLimit: number; rateWindowMs: number; leaseMs: number };
  /** Puts a stored reply's question in the unanswered inbox when the reply did not answer it (none in benchmarks). */
  unanswered?: Pick<UnansweredRecorder, 'noteTurn'>;
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
    const error = admissionError(message);
    if (error) throw error;
  }

  /**
   * Counts the message against its owner's monthly quota (once, however often the turn waits for the
   * lease; not at all when its channel did: `message.quota`), or throws when the quota is spent. The
   * chatbot is registered for the pending-event sweeper before every attempt to record an entry (a
   * registration lasts a while, so this rarely costs a round trip), alongside the quota the first time.
   */
  async countQuota(message: InboundMessage, counted: boolean): Promise<void> {
    message.observation?.began();
    const register = this.deps.relay.register(message.chatbot.id);
    if (counted) return void (await register);
    const [decision] = await Promise.all([message.quota ?? this.deps.quota.consume(message.chatbot.user_id), register]);
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
    const start = await step(
      message,
      'record',
      async () => {
        const recordEvents = await this.deps.relay.listens(chatbot.id, TURN_EVENTS);
        const announce = this.announcer(chatbot.id, sessionId, (createdAt) => ({
          role: 'user',
          content,
          created_at: createdAt,
        }));
        return this.deps.conversations.beginTurn(chatbot.id, sessionId, { content, source }, limits, {
          recordEvents,
          announce,
        });
      },
      (begun) => ({ 'switchboard.turn.start': begun.kind }),
    );
    if (start.kind === 'rate-limited') {
      await this.deps.quota.refund(chatbot.user_id);
      throw new RateLimitError('Conversation rate limit exceeded.');
    }
    if (start.kind === 'started') message.observation?.admitted();
    return start;
  }

  /**
   * The visitor message's consequences: its webhook events (after those a dead process left pending
   * for this chatbot, which happened before), the agents' feed and the owner's escalation rules. None
   * can fail the turn: the entries are in Redis, and what is not written now is written later.
   */
  async announce(message: InboundMessage, start: StartedTurn): Promise<void> {
    await step(message, 'announce', async () => {
      const { chatbot, sessionId, content } = message;
      if (start.overdue.length > 0) {
        const relayed = await this.deps.relay.deliver(chatbot.id, start.overdue);
        this.deps.logger.warn({ chatbot_id: chatbot.id, entries: relayed }, 'relayed events a process left pending');
      }
      if (start.entry) await this.deps.relay.deliverNew(chatbot.id, start.entry);
      if (!start.announced)
        await this.publish(chatbot.id, sessionId, { role: 'user', content, created_at: start.createdAt });
      if (!start.escalated && wantsHuman(chatbot.settings.escalation, content)) {
        await this.escalate(chatbot.id, sessionId);
      }
    });
  }

  /**
   * The stream a turn's reply is shown through while it is written: widget conversations only (the
   * widget and the agent console show it; chat apps and the REST API get the finished reply).
   */
  openStream(message: InboundMessage): ReplyStream | undefined {
    return message.channel === 'embed' ? this.deps.stream(message.chatbot.id, message.sessionId) : undefined;
  }

  /**
   * Retrieval, prompt and the LLM call, the reply streamed through `stream` when given (every piece
   * published before this resolves). Never rejects.
   */
  async generate(
    message: InboundMessage,
    start: StartedTurn,
    signal: AbortSignal,
    stream?: ReplyStream,
  ): Promise<Generation> {
    const { chatbot, channel, content } = message;
    const generation = await generateTurnReply(this.deps, {
      chatbot,
      channel,
      history: start.history,
      message: content,
      signal,
      observation: message.observation,
      ...(stream ? { onText: (text: string) => stream.write(text) } : {}),
    });
    await stream?.flush();
    return generation;
  }

  /**
   * Stores what the generation produced (nothing on failure; in a chat, the fallback message when the
   * provider call failed) and ends the turn, announcing a stored
   * reply to the agents and applying the fallback-streak rule; resolves with what the requester is
   * told: `silent` when a takeover meanwhile discarded the reply.
   */
  async store(
    message: InboundMessage,
    token: string,
    generation: Generation,
    askedAt: string,
    stream?: ReplyStream,
  ): Promise<TurnOutcome> {
    return step(message, 'store', () => this.storeGeneration(message, token, generation, askedAt, stream));
  }

  private async storeGeneration(
    message: InboundMessage,
    token: string,
    generation: Generation,
    askedAt: string,
    stream?: ReplyStream,
  ): Promise<TurnOutcome> {
    const { chatbot, sessionId } = message;
    if (generation.kind === 'llm-failed' || generation.kind === 'failed') {
      const llm = generation.kind === 'llm-failed';
      this.deps.logger.error(
        { err: generation.error, chatbot_id: chatbot.id },
        llm ? 'LLM provider failed' : 'conversation turn failed',
      );
      await this.noteFailure(message, askedAt, generation);
      // A visitor in a chat (the widget, Telegram, WhatsApp) whose provider failed gets the chatbot's
      // fallback message, as for an empty answer; the REST API keeps SPEC's 500.
      if (!llm || message.channel === 'api') {
        await this.release(message, token);
        await stream?.end('failed');
        return { kind: 'failed', error: llm ? new ProviderError('LLM provider error.') : (generation.error as Error) };
      }
    }
    const text = generation.kind === 'reply' ? generation.text : '';
    const fallback = !text.trim();
    const reply = fallback ? chatbot.fallback_message : text;
    const citations = generation.kind === 'reply' && !fallback ? generation.citations : [];
    const isFallback = reply.trim() === chatbot.fallback_message.trim();
    const streamId = stream?.started ? stream.id : undefined;
    const storedReply = (createdAt: string): StoredMessage => ({
      role: 'assistant',
      content: reply,
      created_at: createdAt,
      ...(citations.length > 0 ? { citations } : {}),
    });
    const end = await this.deps.conversations.endTurn(
      chatbot.id,
      sessionId,
      token,
      { role: 'assistant', content: reply, citations, fallback: isFallback },
      this.announcer(chatbot.id, sessionId, storedReply, streamId),
    );
    if (end.outcome === 'stored') {
      if (!end.announced) await this.publish(chatbot.id, sessionId, storedReply(end.createdAt), streamId);
      const asked = { chatbotId: chatbot.id, sessionId, question: message.content, askedAt };
      this.deps.unanswered?.noteTurn({ ...asked, generation, fallback: isFallback });
    } else await stream?.end(end.outcome === 'discarded' ? 'taken_over' : 'failed');
    const streakRule = chatbot.settings.escalation.fallback_streak;
    if (streakRule > 0 && end.fallbackStreak >= streakRule) await this.escalate(chatbot.id, sessionId);
    if (end.outcome === 'stored') {
      return {
        kind: 'reply',
        text: reply,
        createdAt: end.createdAt,
        citations,
        ...(streamId ? { streamId } : {}),
        ...(generation.kind === 'ungrounded' ? { handoff: true } : {}),
      };
    }
    if (end.outcome === 'discarded') return { kind: 'silent' };
    return { kind: 'failed', error: new Error('conversation lease lost during the turn') };
  }

  /**
   * Ends a turn a takeover cut short: what the LLM had written is kept aside as discarded (never
   * shown as a reply, even if the agent has released the conversation since), and the sockets that
   * showed it drop it.
   */
  async cut(message: InboundMessage, token: string, generation: Generation, stream?: ReplyStream): Promise<void> {
    const { chatbot, sessionId } = message;
    const text =
      generation.kind === 'reply' ? generation.text : generation.kind === 'llm-failed' ? generation.partial : '';
    await this.deps.conversations.endTurn(
      chatbot.id,
      sessionId,
      token,
      text ? { role: 'assistant', content: text, discard: true } : null,
    );
    await stream?.end('taken_over');
  }

  /** Ends a turn without a reply: the lease goes at once, so the messages behind it need not wait. */
  async release(message: InboundMessage, token: string): Promise<void> {
    await this.deps.conversations.endTurn(message.chatbot.id, message.sessionId, token, null);
  }

  /**
   * Lets go of the conversation's lease if this process holds one while it has no turn of it in flight:
   * one a turn cut off by an outage left. True when there was one.
   */
  releaseOwnLease(message: InboundMessage): Promise<boolean> {
    return this.deps.conversations.releaseOwnLease(message.chatbot.id, message.sessionId);
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

  /**
   * Why the turn failed, for the owner's transcript: the provider's own error (its name and message:
   * a missing key, a refused model, a timeout), or a pointer to the log for anything else. A side
   * note: its failure is logged, never the visitor's problem.
   */
  private async noteFailure(message: InboundMessage, askedAt: string, generation: Generation): Promise<void> {
    const reason =
      generation.kind === 'llm-failed' && generation.error instanceof Error
        ? `LLM provider error: ${generation.error.message}`.slice(0, MAX_FAILURE_LENGTH)
        : 'The turn failed inside the gateway (see its log).';
    try {
      await this.deps.conversations.noteFailure(message.chatbot.id, message.sessionId, askedAt, reason);
    } catch (error) {
      this.deps.logger.error({ err: error, chatbot_id: message.chatbot.id }, 'could not note why a turn failed');
    }
  }

  /**
   * A stored message's signal for the script that stores it. When it cannot be had (the bus could
   * not tell whether it is on a cluster), the script publishes nothing and `publish` tries after.
   */
  private announcer(
    chatbotId: string,
    sessionId: string,
    message: (createdAt: string) => StoredMessage,
    streamId?: string,
  ): Announce {
    return async (createdAt) => {
      try {
        return await this.deps.feed.forScript(chatbotId, sessionId, message(createdAt), streamId);
      } catch {
        return undefined;
      }
    };
  }

  /** Agents' feed is a side effect of the turn: its failure is logged, never the visitor's problem. */
  private async publish(chatbotId: string, sessionId: string, message: StoredMessage, streamId?: string) {
    try {
      await this.deps.feed.publish(chatbotId, sessionId, message, streamId);
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

/** Runs a step of a turn inside its observation (its span, and its stage metric where it has one). */
function step<T>(
  message: InboundMessage,
  name: TurnStep,
  work: () => Promise<T>,
  describe?: (result: T) => Record<string, string>,
): Promise<T> {
  return message.observation ? message.observation.during(name, work, describe) : work();
}

/** The owner's rules and smart intent: does this visitor message escalate the conversation? */
function wantsHuman(rules: EscalationRules, content: string): boolean {
  return (rules.smart_intent && asksForHuman(content)) || matchesKeyword(content, rules.keywords);
}
