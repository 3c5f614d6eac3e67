import { randomUUID } from 'node:crypto';
import nact from 'nact';
import type { Ref } from 'nact';
import type { Clock, Timer } from '../clock.ts';
import { NotFoundError } from '../errors.ts';
import type { Egress } from '../net/ssrf-guard.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { ClaimScope, DeliveryStore } from '../store/delivery-store.ts';
import type { WebhookStore } from '../store/webhook-store.ts';
import type { AttemptVerdict, ClaimedDelivery } from '../webhooks/delivery.ts';
import type { Webhook } from '../webhooks/webhook.ts';
import { WebhookSender, type AttemptResult } from '../webhooks/webhook-sender.ts';
import type { AttemptObservation, DeliveryObserver } from '../metrics/delivery-observer.ts';

/** Messages of the dispatcher actor: look for due deliveries, or record the attempts that ended. */
/** A poll looks in every outbox shard, or in one chatbot's (its deliveries were just written). */
export type DispatcherMessage = { type: 'poll'; chatbotId?: string } | { type: 'sent' };

/** An attempt that ended, waiting to be recorded. */
interface Finished {
  delivery: ClaimedDelivery;
  destination: string;
  result: AttemptResult;
  observation: AttemptObservation | undefined;
}

/** Limits and timing of the dispatcher. */
export interface DispatcherOptions {
  /** Seconds between a failed attempt and the next (one entry per retry). */
  retryDelays: number[];
  concurrency: number;
  destinationConcurrency: number;
  timeoutMs: number;
  pollMs: number;
}

/** What the dispatcher works with. */
export interface DispatcherDeps {
  deliveries: DeliveryStore;
  webhooks: WebhookStore;
  sender: WebhookSender;
  clock: Clock;
  logger: Logger;
  /** Observes every attempt (metrics, a trace), when either is on. */
  observer?: DeliveryObserver;
}

/** One round of claimed deliveries: each webhook read once, the deliveries put back sent together. */
interface Round {
  hooks: Map<string, Promise<Webhook>>;
  releases: Array<Promise<{ error: unknown } | undefined>>;
}

/**
 * The webhook dispatcher actor: owns delivery. It claims due deliveries from the Redis outbox (a
 * claim is a lease: a process that dies mid-attempt leaves the delivery due again, to be retried
 * under the same id), sends each with the sender without blocking its mailbox, records every
 * attempt, and reschedules (1, 5, 15 minutes by default) or finishes the delivery. Total concurrency
 * and a per-destination cap keep a slow receiver from holding up anyone else; deliveries of one
 * conversation to one webhook go out one after another.
 */
export class WebhookDispatcher {
  private readonly deps: DispatcherDeps;
  private readonly options: DispatcherOptions;
  private readonly system: ReturnType<typeof nact.start>;
  private readonly actor: Ref<DispatcherMessage>;
  private readonly claimToken = randomUUID();
  private timer: Timer | undefined;
  private idle: Array<() => void> = [];
  /** The message being handled: a claim over several shards may be under way when `stop` is called. */
  private handling: Promise<undefined> | undefined;
  /** Attempts in flight, in all and per destination host. Touched only inside the actor. */
  private running = 0;
  private readonly perDestination = new Map<string, number>();
  /** Order keys (webhook + conversation) with an attempt in flight. */
  private readonly ordering = new Set<string>();
  /** Attempts that ended since the last recording: recorded together, in one round trip. */
  private finished: Finished[] = [];

  constructor(deps: DispatcherDeps, options: DispatcherOptions) {
    this.deps = deps;
    this.options = options;
    this.system = nact.start();
    // nact serializes the messages; the state lives in this object's fields.
    const receive = async (_state: undefined, message: DispatcherMessage) => {
      this.handling = this.receive(message);
      return this.handling;
    };
    this.actor = nact.spawn(this.system, receive, 'webhook-dispatcher', {
      onCrash: (_msg, error, ctx) => {
        this.deps.logger.error({ err: error }, 'webhook dispatcher crashed; resuming');
        return ctx.resume;
      },
    });
  }

  /** Starts polling the outbox. */
  start(): void {
    this.timer = this.deps.clock.setInterval(() => this.kick(), this.options.pollMs);
    this.kick();
  }

  /** New deliveries are due (the chatbot's, when named): look now rather than at the next poll. */
  kick(chatbotId?: string): void {
    nact.dispatch(this.actor, chatbotId === undefined ? { type: 'poll' } : { type: 'poll', chatbotId });
  }

  /** Stops polling and waits for attempts in flight to be recorded. */
  async stop(): Promise<void> {
    this.deps.clock.clearTimer(this.timer);
    this.timer = undefined;
    // A round under way may still claim and start attempts: they are waited for too (a round that
    // fails is logged by the actor's onCrash).
    await Promise.allSettled([this.handling]);
    if (this.running > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    nact.stop(this.system);
  }

  private async receive(message: DispatcherMessage): Promise<undefined> {
    if (message.type === 'sent') {
      // The recorded attempts made the next deliveries of their lines due: their shards first.
      await this.dispatchDue({ shards: await this.recordFinished(), rest: true });
    } else if (message.chatbotId !== undefined) {
      await this.dispatchDue({ shards: [this.deps.deliveries.shardFor(message.chatbotId)] });
    } else {
      await this.dispatchDue({ rest: true });
    }
    return undefined;
  }

  private async dispatchDue(scope: ClaimScope): Promise<void> {
    if (this.timer === undefined) return;
    const free = this.options.concurrency - this.running;
    if (free <= 0) return;
    const claimMs = this.options.timeoutMs + 5000;
    const claimed = await this.deps.deliveries.claim(free, claimMs, this.claimToken, scope);
    // Each webhook read once and the deliveries put back sent together: a round that claims many
    // deliveries to one busy receiver costs a few round trips, not two per delivery (the round is
    // the actor's turn, so its cost bounds how many attempts start per second).
    const round: Round = { hooks: new Map(), releases: [] };
    for (const delivery of claimed) await this.begin(delivery, round);
    // A release that failed fails the round, as it would have alone (the actor logs it and resumes;
    // the claim lapses and the delivery is due again).
    const failure = (await Promise.all(round.releases)).find((outcome) => outcome !== undefined);
    if (failure) throw failure.error;
  }

  private async begin(delivery: ClaimedDelivery, round: Round): Promise<void> {
    let hook: Webhook;
    try {
      let reading = round.hooks.get(delivery.webhookId);
      if (!reading) round.hooks.set(delivery.webhookId, (reading = this.deps.webhooks.get(delivery.webhookId)));
      hook = await reading;
    } catch (error) {
      if (error instanceof NotFoundError) {
        await this.giveUp(delivery, 'webhook was deleted');
        return;
      }
      // A passing failure (Redis unreachable, say) is no verdict on the delivery: it goes back to the
      // queue unattempted, and the error surfaces in the log.
      this.deps.logger.warn({ err: error, delivery_id: delivery.id }, 'webhook not read; delivery tried again later');
      round.releases.push(this.release(delivery));
      return;
    }
    if (!hook.active) {
      await this.giveUp(delivery, 'webhook is inactive');
      return;
    }
    const url = new URL(hook.url);
    const destination = url.host;
    const busy = this.perDestination.get(destination) ?? 0;
    if (busy >= this.options.destinationConcurrency || this.ordering.has(delivery.orderKey)) {
      // Not now: back to the queue, unattempted, for a later poll.
      round.releases.push(this.release(delivery));
      return;
    }
    this.running += 1;
    this.perDestination.set(destination, busy + 1);
    this.ordering.add(delivery.orderKey);
    const { id: deliveryId, attempt, event, body } = delivery;
    const observation = this.deps.observer?.attempt(delivery, url);
    const timestampSeconds = Math.floor(this.deps.clock.nowMicros() / 1_000_000);
    const signing = { secret: hook.secret, standardWebhooks: hook.standard_webhooks, timestampSeconds };
    // Not awaited: the mailbox stays free while receivers answer (the sender never rejects).
    void this.deps.sender.send({ url: hook.url, event, body, deliveryId, attempt, ...signing }).then((result) => {
      observation?.sent(result);
      this.finished.push({ delivery, destination, result, observation });
      nact.dispatch(this.actor, { type: 'sent' });
    });
  }

  /**
   * Back to the queue, unattempted, due at the next poll. Settles with the failure rather than
   * rejecting: the round awaits it only after its other deliveries.
   */
  private release(delivery: ClaimedDelivery): Promise<{ error: unknown } | undefined> {
    const at = this.deps.clock.nowMicros() + this.options.pollMs * 1000;
    return this.deps.deliveries.release(delivery, at).then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
  }

  /** Records the attempts that ended; returns the outbox shards they were in. */
  private async recordFinished(): Promise<string[]> {
    const batch = this.finished;
    if (batch.length === 0) return [];
    this.finished = [];
    for (const { delivery, destination } of batch) {
      const busy = (this.perDestination.get(destination) ?? 1) - 1;
      if (busy === 0) this.perDestination.delete(destination);
      else this.perDestination.set(destination, busy);
      this.ordering.delete(delivery.orderKey);
    }
    const now = this.deps.clock.nowMicros();
    for (const { observation } of batch) observation?.recording();
    try {
      const outcomes = await this.deps.deliveries.complete(
        batch.map(({ delivery, result }) => ({
          delivery,
          attempt: {
            attempt: delivery.attempt,
            atMicros: now,
            status_code: result.statusCode,
            error: result.error,
            duration_ms: result.durationMs,
            response_body: result.responseBody,
          },
          verdict: succeeded(result) ? { kind: 'delivered' as const } : this.retryVerdict(delivery.attempt),
        })),
      );
      batch.forEach(({ delivery, result, observation }, i) => {
        observation?.recorded(outcomes[i]);
        if (succeeded(result)) return;
        const { statusCode: status, error } = result;
        const outcome = outcomes[i];
        this.deps.logger.warn(
          { delivery_id: delivery.id, attempt: delivery.attempt, status, error, outcome },
          'webhook attempt failed',
        );
      });
    } catch (error) {
      // The claims expire and the deliveries are attempted again: at least once.
      this.deps.logger.error({ err: error, deliveries: batch.length }, 'could not record webhook attempts');
      for (const { observation } of batch) observation?.recorded(undefined, error);
    } finally {
      this.running -= batch.length;
      if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
    return [...new Set(batch.map(({ delivery }) => delivery.shard))];
  }

  private retryVerdict(attempt: number): AttemptVerdict {
    const delay = this.options.retryDelays[attempt - 1];
    if (delay === undefined) return { kind: 'failed' };
    return { kind: 'retry', atMicros: this.deps.clock.nowMicros() + Math.round(delay * 1_000_000) };
  }

  private async giveUp(delivery: ClaimedDelivery, error: string): Promise<void> {
    const attempt = { attempt: delivery.attempt, atMicros: this.deps.clock.nowMicros(), status_code: null, error };
    await this.deps.deliveries.complete([
      { delivery, attempt: { ...attempt, duration_ms: 0, response_body: '' }, verdict: { kind: 'failed' } },
    ]);
    this.deps.observer?.gaveUp(delivery, error);
  }
}

function succeeded(result: AttemptResult): boolean {
  return result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300 && !result.error;
}

/** The dispatcher as the configuration describes it (the gateway and the benchmark build it alike). */
export function dispatcherFromConfig(
  deps: Omit<DispatcherDeps, 'sender'>,
  config: Config,
  egress?: Egress,
): WebhookDispatcher {
  const sender = new WebhookSender({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    egress,
  });
  return new WebhookDispatcher(
    { ...deps, sender },
    {
      retryDelays: config.WEBHOOK_RETRY_DELAYS,
      concurrency: config.WEBHOOK_CONCURRENCY,
      destinationConcurrency: config.WEBHOOK_DESTINATION_CONCURRENCY,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      pollMs: config.WEBHOOK_POLL_MS,
    },
  );
}
