import nact from 'nact';
import type { ActorContext, Ref } from 'nact';
import type { EscalationRules } from '../chatbots/chatbot-settings.ts';
import type { Clock } from '../clock.ts';
import { asksForHuman, matchesKeyword } from '../conversations/escalation-intent.ts';
import { sourceOf } from '../conversations/session.ts';
import { generateTurnReply, type Generation } from '../conversations/turn-generation.ts';
import { ProviderError, RateLimitError } from '../errors.ts';
import type { LlmProviders } from '../llm/llm-providers.ts';
import type { Logger } from '../logger.ts';
import { HISTORY_SIZE } from '../rag/prompt-builder.ts';
import type { TurnRetrieval } from '../rag/turn-retrieval.ts';
import type { ConversationStore, StoredMessage, TurnStart } from '../store/conversation-store.ts';
import type { QuotaStore } from '../store/quota-store.ts';
import type { EventRelay } from '../webhooks/event-relay.ts';
import {
  generated,
  leaseLost,
  retry,
  type ConversationMessage,
  type InboundMessage,
  type TurnOutcome,
} from './conversation-messages.ts';

/** What a conversation actor works with. */
export interface ConversationDeps {
  conversations: ConversationStore;
  quota: QuotaStore;
  /** A turn's retrieval step (with the chatbot's query rewrite, when on). */
  retrieval: TurnRetrieval;
  providers: LlmProviders;
  /** Writes the webhook deliveries of a turn's events (recorded by the turn's first script). */
  relay: EventRelay;
  /** Tells the owner's agents about a stored message (visitor or AI), wherever they are connected. */
  feed: (chatbotId: string, sessionId: string, message: StoredMessage) => Promise<void>;
  /** Escalates a conversation (the event fires the first time only). */
  escalate: (chatbotId: string, sessionId: string) => Promise<unknown>;
  clock: Clock;
  logger: Logger;
  limits: { rateLimit: number; rateWindowMs: number; leaseMs: number };
  /** A new nonce for each prompt's reference fence; random unless a test fixes it. */
  fenceNonce?: () => string;
}

/** An inbound message waiting for its turn. `done` fires once its turn has fully ended. */
interface Waiting {
  inbound: InboundMessage;
  answer: (outcome: TurnOutcome) => void;
  done: () => void;
  quotaCounted: boolean;
}

/** The turn whose retrieval and LLM call are in flight. */
interface ActiveTurn {
  id: number;
  waiting: Waiting;
  token: string;
  /** The requester was already told (a takeover arrived first): the late reply goes nowhere. */
  answered: boolean;
  renew: NodeJS.Timeout;
  /** Aborts the turn's LLM calls when its lease is lost. */
  stop: AbortController;
}

/** A conversation actor's memory: only the work in progress; the conversation itself is in Redis. */
export interface ConversationState {
  waiting: Waiting[];
  turn: ActiveTurn | undefined;
  lastTurnId: number;
  retryScheduled: boolean;
  leaseAttempts: number;
}

export const initialConversationState = (): ConversationState => ({
  waiting: [],
  turn: undefined,
  lastTurnId: 0,
  retryScheduled: false,
  leaseAttempts: 0,
});

/**
 * The conversation actor's behaviour. Messages are processed one at a time, but an LLM call is not
 * awaited inside the handler: the reply comes back as a message. So a takeover (`refresh`) takes
 * effect at once, while later visitor messages wait in `waiting` until the turn before them ends,
 * which keeps the transcript in strict arrival order.
 */
export function conversationBehaviour(deps: ConversationDeps) {
  return async function receive(
    state: ConversationState,
    message: ConversationMessage,
    ctx: ActorContext<ConversationMessage, Ref<unknown>>,
  ): Promise<ConversationState> {
    switch (message.type) {
      case 'inbound':
        state.waiting.push({
          inbound: message.inbound,
          answer: message.answer,
          done: message.done,
          quotaCounted: false,
        });
        break;
      case 'generated':
        await finishTurn(deps, state, message.turn, message.generation);
        break;
      case 'lease-lost':
        stopTurn(deps, state, message.turn);
        break;
      case 'refresh':
        await applyRefresh(deps, state);
        break;
      case 'retry':
        state.retryScheduled = false;
        break;
    }
    await startWaiting(deps, state, ctx.self);
    return state;
  };
}

/** Starts waiting turns until one is waiting for its LLM, waiting for a lease, or none is left. */
async function startWaiting(deps: ConversationDeps, state: ConversationState, self: Ref<ConversationMessage>) {
  while (!state.turn && !state.retryScheduled && state.waiting.length > 0) {
    const next = state.waiting[0]!;
    try {
      const started = await beginTurn(deps, state, next, self);
      if (started === 'wait') return;
    } catch (error) {
      // The turn may have left the queue before it threw: the message behind it must stay.
      if (state.waiting[0] === next) state.waiting.shift();
      deps.logger.error({ err: error }, 'conversation turn failed');
      settle(next, { kind: 'failed', error: error as Error });
    }
  }
}

/** Runs a turn up to its LLM call. 'wait' leaves the message at the head of the queue. */
async function beginTurn(
  deps: ConversationDeps,
  state: ConversationState,
  next: Waiting,
  self: Ref<ConversationMessage>,
): Promise<'wait' | 'next'> {
  const { chatbot, sessionId, content, channel } = next.inbound;
  // The chatbot is registered for the pending-event sweeper before every attempt to record an entry (a
  // registration lasts a while, so this rarely costs a round trip), alongside the quota the first time.
  const register = deps.relay.register(chatbot.id);
  if (!next.quotaCounted) {
    const [decision] = await Promise.all([deps.quota.consume(chatbot.user_id), register]);
    if (decision !== 'counted') {
      state.waiting.shift();
      settle(next, { kind: 'failed', error: new RateLimitError('Monthly message limit reached.') });
      return 'next';
    }
    next.quotaCounted = true;
  } else await register;
  const source = sourceOf(sessionId, channel);
  const limits = { ...deps.limits, historySize: HISTORY_SIZE };
  const start = await deps.conversations.beginTurn(chatbot.id, sessionId, { content, source }, limits);
  if (start.kind === 'leased') {
    // Another gateway is processing this conversation: try again shortly, keeping the order.
    state.retryScheduled = true;
    // From 2 ms: a turn on another gateway usually ends within a few milliseconds.
    const delay = Math.min(2 * 2 ** state.leaseAttempts++, 250);
    setTimeout(() => nact.dispatch(self, retry), delay).unref();
    return 'wait';
  }
  state.waiting.shift();
  state.leaseAttempts = 0;
  if (start.kind === 'rate-limited') {
    await deps.quota.refund(chatbot.user_id);
    settle(next, { kind: 'failed', error: new RateLimitError('Conversation rate limit exceeded.') });
    return 'next';
  }
  try {
    return await runTurn(deps, state, next, start, self);
  } catch (error) {
    // Whatever failed once the lease was taken, the lease goes too: the messages behind this one must
    // not wait for it to lapse.
    await deps.conversations.endTurn(chatbot.id, sessionId, start.token, null).catch((endError: unknown) => {
      deps.logger.warn({ err: endError, chatbot_id: chatbot.id }, 'conversation lease not released');
    });
    throw error;
  }
}

/** A leased turn: its events, escalation, takeover check, and its retrieval and LLM call set going. */
async function runTurn(
  deps: ConversationDeps,
  state: ConversationState,
  next: Waiting,
  start: Extract<TurnStart, { kind: 'started' }>,
  self: Ref<ConversationMessage>,
): Promise<'wait' | 'next'> {
  const { chatbot, sessionId, content, channel } = next.inbound;
  const { token } = start;
  // Events a dead process left pending for this chatbot first (they happened before), then this turn's.
  // Neither can fail the turn: the entries are in Redis, and what is not written now is written later.
  if (start.overdue.length > 0) {
    const relayed = await deps.relay.deliver(chatbot.id, start.overdue);
    deps.logger.warn({ chatbot_id: chatbot.id, entries: relayed }, 'relayed events a process left pending');
  }
  await deps.relay.deliver(chatbot.id, [start.entry]);
  await publish(deps, chatbot.id, sessionId, { role: 'user', content, created_at: start.createdAt });
  if (!start.escalated && wantsHuman(chatbot.settings.escalation, content)) {
    await escalate(deps, chatbot.id, sessionId);
  }
  if (start.takenOverBy) {
    await deps.conversations.endTurn(chatbot.id, sessionId, token, null);
    settle(next, { kind: 'silent' });
    return 'next';
  }
  next.inbound.onTyping?.();
  const id = ++state.lastTurnId;
  const renew = setInterval(() => {
    // A failed renewal is tried again a third of a lease later. A lease found gone stops the turn at
    // once: the fenced scripts would refuse its writes, and another gateway continues the conversation.
    deps.conversations.renewLease(chatbot.id, sessionId, token, deps.limits.leaseMs).then(
      (held) => held || nact.dispatch(self, leaseLost(id)),
      (error: unknown) => {
        deps.logger.warn(
          { err: error, chatbot_id: chatbot.id, session_id: sessionId },
          'conversation lease not renewed',
        );
      },
    );
  }, deps.limits.leaseMs / 3);
  renew.unref();
  const stop = new AbortController();
  state.turn = { id, waiting: next, token, answered: false, renew, stop };
  // Retrieval (with a query rewrite, itself an LLM call) runs outside the handler, like the reply's LLM
  // call: a takeover meanwhile takes effect at once, and the lease is renewed throughout.
  const turn = { chatbot, channel, history: start.history, message: content, signal: stop.signal };
  void generateTurnReply(deps, turn).then((generation) => nact.dispatch(self, generated(id, generation)));
  return 'wait';
}

/** Stores the LLM's reply (or nothing, on failure) and answers the requester unless already told. */
async function finishTurn(deps: ConversationDeps, state: ConversationState, id: number, generation: Generation) {
  const turn = state.turn;
  if (!turn || turn.id !== id) return;
  clearInterval(turn.renew);
  state.turn = undefined;
  const { chatbot, sessionId } = turn.waiting.inbound;
  try {
    if (turn.stop.signal.aborted) {
      // Stopped when its lease was lost (the requester was told then); the lease holder's writes win.
      return;
    }
    if (generation.kind !== 'reply') {
      const llm = generation.kind === 'llm-failed';
      deps.logger.error(
        { err: generation.error, chatbot_id: chatbot.id },
        llm ? 'LLM provider failed' : 'conversation turn failed',
      );
      await deps.conversations.endTurn(chatbot.id, sessionId, turn.token, null);
      const error = llm ? new ProviderError('LLM provider error.') : (generation.error as Error);
      if (!turn.answered) turn.waiting.answer({ kind: 'failed', error });
      return;
    }
    const text = generation.text;
    const reply = text.trim() ? text : chatbot.fallback_message;
    const end = await deps.conversations.endTurn(chatbot.id, sessionId, turn.token, {
      role: 'assistant',
      content: reply,
      fallback: reply.trim() === chatbot.fallback_message.trim(),
    });
    if (end.outcome === 'stored') {
      await publish(deps, chatbot.id, sessionId, { role: 'assistant', content: reply, created_at: end.createdAt });
    }
    const streakRule = chatbot.settings.escalation.fallback_streak;
    if (streakRule > 0 && end.fallbackStreak >= streakRule) await escalate(deps, chatbot.id, sessionId);
    if (turn.answered) return;
    if (end.outcome === 'stored') turn.waiting.answer({ kind: 'reply', text: reply, createdAt: end.createdAt });
    else if (end.outcome === 'discarded') turn.waiting.answer({ kind: 'silent' });
    else turn.waiting.answer({ kind: 'failed', error: new Error('conversation lease lost during the turn') });
  } catch (error) {
    if (!turn.answered) turn.waiting.answer({ kind: 'failed', error: error as Error });
  } finally {
    turn.answered = true;
    turn.waiting.done();
  }
}

/**
 * The turn's lease is gone: its LLM calls are aborted and its requester is told at once, rather than
 * when the reply comes back to writes the fenced scripts refuse.
 */
function stopTurn(deps: ConversationDeps, state: ConversationState, id: number): void {
  const turn = state.turn;
  if (!turn || turn.id !== id || turn.stop.signal.aborted) return;
  clearInterval(turn.renew);
  turn.stop.abort();
  deps.logger.warn({ chatbot_id: turn.waiting.inbound.chatbot.id }, 'conversation lease lost; turn stopped');
  if (turn.answered) return;
  turn.answered = true;
  turn.waiting.answer({ kind: 'failed', error: new Error('conversation lease lost during the turn') });
}

/** A takeover arrived: a requester still waiting for the AI is told at once that a human has it. */
async function applyRefresh(deps: ConversationDeps, state: ConversationState): Promise<void> {
  const turn = state.turn;
  if (!turn || turn.answered) return;
  const { chatbot, sessionId } = turn.waiting.inbound;
  const view = await deps.conversations.get(chatbot.id, sessionId);
  if (view.taken_over_by && !turn.answered) {
    turn.answered = true;
    turn.waiting.answer({ kind: 'silent' });
  }
}

/** The owner's rules and smart intent: does this visitor message escalate the conversation? */
function wantsHuman(rules: EscalationRules, content: string): boolean {
  return (rules.smart_intent && asksForHuman(content)) || matchesKeyword(content, rules.keywords);
}

/** Agents' feed is a side effect of the turn: its failure is logged, never the visitor's problem. */
async function publish(deps: ConversationDeps, chatbotId: string, sessionId: string, message: StoredMessage) {
  try {
    await deps.feed(chatbotId, sessionId, message);
  } catch (error) {
    deps.logger.error({ err: error, chatbot_id: chatbotId }, 'could not tell agents about a message');
  }
}

/** Escalation is a side effect of the turn: its failure is logged, never the visitor's problem. */
async function escalate(deps: ConversationDeps, chatbotId: string, sessionId: string): Promise<void> {
  try {
    await deps.escalate(chatbotId, sessionId);
  } catch (error) {
    deps.logger.error({ err: error, chatbot_id: chatbotId }, 'could not escalate a conversation');
  }
}

function settle(waiting: Waiting, outcome: TurnOutcome): void {
  waiting.answer(outcome);
  waiting.done();
}
