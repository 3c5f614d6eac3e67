import nact from 'nact';
import type { Ref } from 'nact';
import type { Clock, Timer } from '../clock.ts';
import type { InboundMessage, TurnOutcome, TurnPipeline } from '../conversations/turn-pipeline.ts';
import { conversationBehaviour, initialConversationState } from './conversation-actor.ts';
import { inbound, refresh, type ConversationMessage } from './conversation-messages.ts';
import type { TurnObserver } from '../metrics/turn-observer.ts';

/** A live conversation actor and the router's bookkeeping for it. */
interface Live {
  ref: Ref<ConversationMessage>;
  /** Inbound messages routed to it whose turns have not ended. */
  inflight: number;
  lastActiveMicros: number;
}

/** Options of the router. */
export interface RouterOptions {
  idleMs: number;
  clock: Clock;
  /** How often idle actors are looked for (default: min(idleMs, 1 s)). */
  sweepEveryMs?: number;
  /** Observes every message's turn (metrics, a trace), when either is on. */
  observer?: TurnObserver;
}

/**
 * Routes every message for a (chatbot, session) to its one conversation actor, spawning it on
 * demand and passivating it after `idleMs` without work.
 *
 * nact drops a dispatch to a stopped actor without a word, so actors never stop themselves: the
 * router stops one only when no message routed to it is unfinished, and forgets it in the same
 * synchronous step, so any later message spawns a fresh actor (under a new, unique name), which
 * reads the conversation from Redis. The router is plain code, not an actor: nact copies an actor's
 * child map into every message's context, which a parent of a million children cannot afford.
 */
export class ConversationRouter {
  private readonly system: ReturnType<typeof nact.start>;
  private readonly pipeline: TurnPipeline;
  private readonly behaviour: ReturnType<typeof conversationBehaviour>;
  private readonly options: RouterOptions;
  /** In order of last activity, least recent first (a touched entry is moved to the end). */
  private readonly live = new Map<string, Live>();
  private spawned = 0;
  private timer: Timer | undefined;

  constructor(pipeline: TurnPipeline, options: RouterOptions) {
    this.system = nact.start();
    this.pipeline = pipeline;
    this.behaviour = conversationBehaviour(pipeline);
    this.options = options;
  }

  /** Starts the passivation sweep. */
  start(): void {
    const every = this.options.sweepEveryMs ?? Math.min(this.options.idleMs, 1000);
    this.timer = this.options.clock.setInterval(() => this.sweep(), every);
  }

  /**
   * The one way a visitor message from any channel becomes a turn: admitted by the pipeline's rules
   * (a refusal resolves as `failed` at once), then taken through its conversation's actor, in order.
   * Resolves with the turn's outcome; never rejects.
   */
  send(message: InboundMessage): Promise<TurnOutcome> {
    const observation = this.options.observer?.begin({ chatbotId: message.chatbot.id, channel: message.channel });
    const answer = (outcome: TurnOutcome) => {
      observation?.answered(outcome.kind, outcome.kind === 'failed' ? outcome.error : undefined);
      return outcome;
    };
    try {
      this.pipeline.admit(message);
    } catch (error) {
      const outcome = answer({ kind: 'failed', error: error as Error });
      observation?.done();
      return Promise.resolve(outcome);
    }
    const key = `${message.chatbot.id}/${message.sessionId}`;
    const live = this.live.get(key) ?? this.spawn(key);
    live.inflight += 1;
    this.touch(key, live);
    return new Promise((resolve) => {
      const done = () => {
        live.inflight -= 1;
        this.touch(key, live);
        observation?.done();
      };
      const observed = observation ? { ...message, observation } : message;
      nact.dispatch(
        live.ref,
        inbound(observed, (outcome) => resolve(answer(outcome)), done),
      );
    });
  }

  /** Tells a live actor (if any in this process) that its conversation changed in Redis. */
  signal(chatbotId: string, sessionId: string): void {
    const live = this.live.get(`${chatbotId}/${sessionId}`);
    if (live) nact.dispatch(live.ref, refresh);
  }

  /** Passivates actors idle for longer than `idleMs` with nothing in flight. */
  sweep(): number {
    const cutoff = this.options.clock.nowMicros() - this.options.idleMs * 1000;
    let stopped = 0;
    for (const [key, live] of this.live) {
      if (live.lastActiveMicros > cutoff) break;
      if (live.inflight > 0) continue;
      nact.stop(live.ref);
      this.live.delete(key);
      stopped += 1;
    }
    return stopped;
  }

  /** Live actors in this process. */
  get size(): number {
    return this.live.size;
  }

  /**
   * Stops the sweep, then waits up to `graceMs` for the turns in progress to end (a turn cut off here
   * would keep its conversation's lease, and every gateway would wait for it to lapse), then stops
   * every actor and the actor system.
   */
  async stop(graceMs = 0): Promise<void> {
    this.options.clock.clearTimer(this.timer);
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && [...this.live.values()].some((live) => live.inflight > 0)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    this.live.clear();
    nact.stop(this.system);
  }

  private spawn(key: string): Live {
    this.spawned += 1;
    const ref = nact.spawn(this.system, this.behaviour, `c${this.spawned.toString(36)}`, {
      initialStateFunc: initialConversationState,
      // The behaviour answers every failure itself; anything that still escapes must not stop the actor.
      onCrash: (_msg, _error, ctx) => ctx.resume,
    });
    const live: Live = { ref: ref, inflight: 0, lastActiveMicros: 0 };
    this.live.set(key, live);
    return live;
  }

  private touch(key: string, live: Live): void {
    live.lastActiveMicros = this.options.clock.nowMicros();
    this.live.delete(key);
    this.live.set(key, live);
  }
}
