import nact from 'nact';
import type { ActorContext, Ref } from 'nact';
import type { Timer } from '../clock.ts';
import type { Generation } from '../conversations/turn-generation.ts';
import type { InboundMessage, StartedTurn, TurnOutcome, TurnPipeline } from '../conversations/turn-pipeline.ts';
import { RateLimitError } from '../errors.ts';
import { generated, leaseLost, releaseStranded, retry, type ConversationMessage } from './conversation-messages.ts';
import type { ReplyStream } from '../conversations/reply-stream.ts';

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
  /** When the visitor message of the turn was stored (a failure is noted against it). */
  askedAt: string;
  /** The requester was already told (a takeover arrived first): the late reply goes nowhere. */
  answered: boolean;
  renew: Timer;
  /** Aborts the turn's LLM calls when its lease is lost, or when a takeover cuts the reply short. */
  stop: AbortController;
  /** A takeover stopped the reply: what was written is kept aside as discarded. */
  cut: boolean;
  /** Where the reply is shown while it is written (widget conversations). */
  stream: ReplyStream | undefined;
}

/**
 * A turn of this conversation failed (an outage cut it off, typically) and may have left this process's
 * lease in Redis: its release failed, or the reply to the script that took it was lost. Another
 * process's turns would wait for it to lapse (CONVERSATION_LEASE_MS), so it is released as soon as
 * Redis answers, while no turn of this process is in flight; tried with backoff until it would have
 * lapsed anyway. A turn of this process that begins meanwhile takes it over (see BEGIN_TURN).
 */
interface Stranded {
  inbound: InboundMessage;
  /** When the lease would have lapsed by itself (clock micros): no try after that. */
  lapsesAt: number;
  tries: number;
}

/** The first try to release a stranded lease, and the longest wait between tries. */
const STRANDED_FIRST_TRY_MS = 100;
const STRANDED_MAX_WAIT_MS = 2000;

/** A conversation actor's memory: only the work in progress; the conversation itself is in Redis. */
export interface ConversationState {
  waiting: Waiting[];
  turn: ActiveTurn | undefined;
  lastTurnId: number;
  retryScheduled: boolean;
  leaseAttempts: number;
  stranded: Stranded | undefined;
}

export const initialConversationState = (): ConversationState => ({
  waiting: [],
  turn: undefined,
  lastTurnId: 0,
  retryScheduled: false,
  leaseAttempts: 0,
  stranded: undefined,
});

/**
 * The conversation actor's behaviour: it runs each message's turn through the {@link TurnPipeline}
 * and owns only what is about time. Messages are processed one at a time, but an LLM call is not
 * awaited inside the handler: the reply comes back as a message. So a takeover (`refresh`) takes
 * effect at once, while later visitor messages wait in `waiting` until the turn before them ends,
 * which keeps the transcript in strict arrival order.
 */
export function conversationBehaviour(pipeline: TurnPipeline) {
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
        await finishTurn(pipeline, state, message.turn, message.generation, ctx.self);
        break;
      case 'lease-lost':
        stopTurn(pipeline, state, message.turn);
        break;
      case 'refresh':
        await applyRefresh(pipeline, state);
        break;
      case 'retry':
        state.retryScheduled = false;
        break;
      case 'release-stranded':
        await releaseStrandedLease(pipeline, state, ctx.self);
        break;
    }
    await startWaiting(pipeline, state, ctx.self);
    return state;
  };
}

/** Starts waiting turns until one is waiting for its LLM, waiting for a lease, or none is left. */
async function startWaiting(pipeline: TurnPipeline, state: ConversationState, self: Ref<ConversationMessage>) {
  while (!state.turn && !state.retryScheduled && state.waiting.length > 0) {
    const next = state.waiting[0]!;
    try {
      const started = await beginTurn(pipeline, state, next, self);
      if (started === 'wait') return;
    } catch (error) {
      // The turn may have left the queue before it threw: the message behind it must stay.
      if (state.waiting[0] === next) state.waiting.shift();
      pipeline.logger.error({ err: error }, 'conversation turn failed');
      strand(pipeline, state, next.inbound, self);
      settle(next, { kind: 'failed', error: error as Error });
    }
  }
}

/** Runs a turn up to its LLM call. 'wait' leaves the message at the head of the queue. */
async function beginTurn(
  pipeline: TurnPipeline,
  state: ConversationState,
  next: Waiting,
  self: Ref<ConversationMessage>,
): Promise<'wait' | 'next'> {
  let start: StartedTurn | { kind: 'leased' };
  try {
    await pipeline.countQuota(next.inbound, next.quotaCounted);
    next.quotaCounted = true;
    start = await pipeline.record(next.inbound);
  } catch (error) {
    // The quota spent or the conversation's rate limit reached: the requester is told, nothing stored.
    if (!(error instanceof RateLimitError)) throw error;
    state.waiting.shift();
    state.leaseAttempts = 0;
    settle(next, { kind: 'failed', error });
    return 'next';
  }
  if (start.kind === 'leased') {
    // Another gateway is processing this conversation: try again shortly, keeping the order.
    state.retryScheduled = true;
    // From 2 ms: a turn on another gateway usually ends within a few milliseconds.
    const delay = Math.min(2 * 2 ** state.leaseAttempts++, 250);
    pipeline.clock.setTimeout(() => nact.dispatch(self, retry), delay);
    return 'wait';
  }
  state.waiting.shift();
  state.leaseAttempts = 0;
  // Its lease is this turn's now (BEGIN_TURN took over any this process had left).
  state.stranded = undefined;
  try {
    return await runTurn(pipeline, state, next, start, self);
  } catch (error) {
    // Whatever failed once the lease was taken, the lease goes too: the messages behind this one must
    // not wait for it to lapse.
    await pipeline.release(next.inbound, start.token).catch((endError: unknown) => {
      pipeline.logger.warn({ err: endError, chatbot_id: next.inbound.chatbot.id }, 'conversation lease not released');
    });
    throw error;
  }
}

/** A leased turn: announced, checked for a takeover, and its retrieval and LLM call set going. */
async function runTurn(
  pipeline: TurnPipeline,
  state: ConversationState,
  next: Waiting,
  start: StartedTurn,
  self: Ref<ConversationMessage>,
): Promise<'wait' | 'next'> {
  const message = next.inbound;
  const { token } = start;
  const id = ++state.lastTurnId;
  // Renewed from the start: the lease is the turn's while its message is announced too (its webhook
  // deliveries written), which a loaded Redis can make take a good part of a short lease.
  const renew = pipeline.clock.setInterval(() => {
    // A failed renewal is tried again a third of a lease later. A lease found gone stops the turn at
    // once: another gateway may have begun a turn of the conversation, and then the fenced scripts refuse
    // its writes.
    pipeline.renewLease(message, token).then(
      (held) => held || nact.dispatch(self, leaseLost(id)),
      (error: unknown) => {
        pipeline.logger.warn(
          { err: error, chatbot_id: message.chatbot.id, session_id: message.sessionId },
          'conversation lease not renewed',
        );
      },
    );
  }, pipeline.leaseMs / 3);
  try {
    await pipeline.announce(message, start);
  } catch (error) {
    pipeline.clock.clearTimer(renew);
    throw error;
  }
  if (start.takenOverBy || message.recordOnly) {
    pipeline.clock.clearTimer(renew);
    await pipeline.release(message, token);
    settle(next, { kind: 'silent' });
    return 'next';
  }
  message.onTyping?.();
  const stop = new AbortController();
  const stream = pipeline.openStream(message);
  state.turn = { id, waiting: next, token, askedAt: start.createdAt, answered: false, renew, stop, cut: false, stream };
  // Retrieval (with a query rewrite, itself an LLM call) runs outside the handler, like the reply's LLM
  // call: a takeover meanwhile takes effect at once, and the lease is renewed throughout.
  void pipeline
    .generate(message, start, stop.signal, stream)
    .then((generation) => nact.dispatch(self, generated(id, generation)));
  return 'wait';
}

/** Stores the LLM's reply (or nothing, on failure) and answers the requester unless already told. */
async function finishTurn(
  pipeline: TurnPipeline,
  state: ConversationState,
  id: number,
  generation: Generation,
  self: Ref<ConversationMessage>,
) {
  const turn = state.turn;
  if (!turn || turn.id !== id) return;
  pipeline.clock.clearTimer(turn.renew);
  state.turn = undefined;
  try {
    // Cut short by a takeover (the requester was told then): what was written is kept aside.
    if (turn.cut) return await pipeline.cut(turn.waiting.inbound, turn.token, generation, turn.stream);
    // Stopped when its lease was lost (the requester was told then); the lease holder's writes win.
    if (turn.stop.signal.aborted) return;
    const outcome = await pipeline.store(turn.waiting.inbound, turn.token, generation, turn.askedAt, turn.stream);
    if (!turn.answered) turn.waiting.answer(outcome);
  } catch (error) {
    strand(pipeline, state, turn.waiting.inbound, self);
    if (turn.answered) pipeline.logger.error({ err: error }, 'conversation turn not ended');
    else turn.waiting.answer({ kind: 'failed', error: error as Error });
  } finally {
    turn.answered = true;
    turn.waiting.done();
  }
}

/**
 * The turn's lease is gone: its LLM calls are aborted and its requester is told at once, rather than
 * when the reply comes back to writes the fenced scripts refuse.
 */
function stopTurn(pipeline: TurnPipeline, state: ConversationState, id: number): void {
  const turn = state.turn;
  if (!turn || turn.id !== id || turn.stop.signal.aborted) return;
  pipeline.clock.clearTimer(turn.renew);
  turn.stop.abort();
  pipeline.logger.warn({ chatbot_id: turn.waiting.inbound.chatbot.id }, 'conversation lease lost; turn stopped');
  void turn.stream?.end('failed');
  if (turn.answered) return;
  turn.answered = true;
  turn.waiting.answer({ kind: 'failed', error: new Error('conversation lease lost during the turn') });
}

/**
 * A takeover arrived: a requester still waiting for the AI is told at once that a human has it. A
 * reply being streamed stops at once (what it wrote is kept aside as discarded when its call
 * returns); one that is not shown while written runs to its end and is kept aside then.
 */
async function applyRefresh(pipeline: TurnPipeline, state: ConversationState): Promise<void> {
  const turn = state.turn;
  if (!turn || turn.answered) return;
  if ((await pipeline.takenOver(turn.waiting.inbound)) && !turn.answered) {
    turn.answered = true;
    turn.waiting.answer({ kind: 'silent' });
    if (!turn.stream) return;
    turn.cut = true;
    turn.stop.abort();
  }
}

/** A turn failed and may have left this process's lease behind: its release is scheduled (see `Stranded`). */
function strand(
  pipeline: TurnPipeline,
  state: ConversationState,
  inbound: InboundMessage,
  self: Ref<ConversationMessage>,
) {
  if (state.stranded) return; // a release is already scheduled
  state.stranded = { inbound, lapsesAt: pipeline.clock.nowMicros() + pipeline.leaseMs * 1000, tries: 0 };
  tryReleaseIn(pipeline, self, STRANDED_FIRST_TRY_MS);
}

function tryReleaseIn(pipeline: TurnPipeline, self: Ref<ConversationMessage>, ms: number): void {
  pipeline.clock.setTimeout(() => nact.dispatch(self, releaseStranded), ms);
}

/**
 * Releases a stranded lease while no turn is in flight (a turn in flight holds the lease as its own);
 * Redis still unreachable, it is tried again later, until the lease would have lapsed by itself.
 */
async function releaseStrandedLease(pipeline: TurnPipeline, state: ConversationState, self: Ref<ConversationMessage>) {
  const stranded = state.stranded;
  if (!stranded || state.turn) return;
  try {
    if (await pipeline.releaseOwnLease(stranded.inbound)) {
      pipeline.logger.info({ chatbot_id: stranded.inbound.chatbot.id }, 'released a lease a failed turn left');
    }
    state.stranded = undefined;
  } catch (error) {
    stranded.tries += 1;
    const wait = Math.min(STRANDED_FIRST_TRY_MS * 2 ** stranded.tries, STRANDED_MAX_WAIT_MS);
    if (pipeline.clock.nowMicros() + wait * 1000 >= stranded.lapsesAt) {
      state.stranded = undefined;
      pipeline.logger.warn({ err: error, chatbot_id: stranded.inbound.chatbot.id }, 'stranded lease left to lapse');
      return;
    }
    tryReleaseIn(pipeline, self, wait);
  }
}

function settle(waiting: Waiting, outcome: TurnOutcome): void {
  waiting.answer(outcome);
  waiting.done();
}
