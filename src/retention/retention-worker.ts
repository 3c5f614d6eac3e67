import type { Clock, Timer } from '../clock.ts';
import type { RetentionSettings } from '../contract/chatbot-settings.ts';
import { retentionOn } from '../chatbots/chatbot-settings.ts';
import { NotFoundError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { ErasureStore } from '../store/erasure-store.ts';
import type { RetentionClaim, RetentionSchedule } from '../store/retention-schedule.ts';
import { RetentionLeaseLostError, sweepChatbot } from './retention-sweep.ts';

/** What the worker works with. */
export interface RetentionDeps {
  schedule: RetentionSchedule;
  store: ErasureStore;
  chatbots: Pick<ChatbotStore, 'get'>;
  clock: Clock;
  logger: Logger;
}

/** How often and how much the worker sweeps. */
export interface RetentionOptions {
  /** How often this process looks for chatbots whose sweep is due. */
  pollMs: number;
  /** How long a claim holds a chatbot unless renewed (it is renewed after every batch). */
  leaseMs: number;
  /** The time from one sweep of a chatbot to its next. */
  intervalMs: number;
  /** Conversations (or leads) deleted between two renewals of the lease. */
  batch: number;
}

/** A sweep stopped between two batches because its process is stopping. */
class RetentionStoppedError extends Error {
  constructor() {
    super('the retention worker is stopping');
    this.name = 'RetentionStoppedError';
  }
}

/**
 * Runs the chatbots' retention on the gateways: every `pollMs`, claims the chatbots whose sweep is due
 * (each one by exactly one process across the gateways, with a lease in Redis) and sweeps them one
 * after another, on the injected clock. A claim whose process died lapses after `leaseMs` and the
 * chatbot is due again for any gateway; a sweep that learns it lost its claim stops at once. Each
 * sweep logs what it deleted (counts only) and schedules the next one `intervalMs` later.
 */
export class RetentionWorker {
  private readonly deps: RetentionDeps;
  private readonly options: RetentionOptions;
  private timer: Timer | undefined;
  private polling: Promise<void> | undefined;
  /** A kick came while a look was under way. */
  private again = false;

  constructor(deps: RetentionDeps, options: RetentionOptions) {
    this.deps = deps;
    this.options = options;
  }

  start(): void {
    this.timer = this.deps.clock.setInterval(() => this.kick(), this.options.pollMs);
    this.kick();
  }

  /** Looks for due chatbots now, or once the look under way has ended (it may have read the time before). */
  kick(): void {
    if (this.timer === undefined) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    this.polling = this.poll()
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'retention poll failed'))
      .finally(() => {
        this.polling = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Stops looking; a sweep under way ends at its next batch at the latest (its claim then lapses). */
  async stop(): Promise<void> {
    this.deps.clock.clearTimer(this.timer);
    this.timer = undefined;
    await this.settled();
  }

  /** Resolves once no look is under way (tests). */
  async settled(): Promise<void> {
    while (this.polling) await this.polling;
  }

  private async poll(): Promise<void> {
    // One chatbot at a time, until none is due: a process sweeps its claims in turn.
    while (this.timer !== undefined) {
      const { schedule, clock } = this.deps;
      const [claim] = await schedule.claim(1, clock.nowMicros(), this.options.leaseMs);
      if (!claim) return;
      await this.sweep(claim);
    }
  }

  private async sweep(claim: RetentionClaim): Promise<void> {
    const { schedule, clock, logger, store } = this.deps;
    const chatbotId = claim.chatbotId;
    try {
      const retention = await this.retentionOf(chatbotId);
      if (!retention || !retentionOn({ retention })) {
        await this.drop(claim);
        return;
      }
      const startedAt = clock.nowMicros();
      const counts = await sweepChatbot(store, chatbotId, retention, {
        nowMicros: startedAt,
        batch: this.options.batch,
        between: async () => {
          if (this.timer === undefined) throw new RetentionStoppedError();
          if (!(await schedule.renew(claim, clock.nowMicros(), this.options.leaseMs))) {
            throw new RetentionLeaseLostError();
          }
        },
      });
      if (!(await schedule.finish(claim, clock.nowMicros() + this.options.intervalMs * 1000))) {
        throw new RetentionLeaseLostError();
      }
      const line = { chatbot_id: chatbotId, deleted: counts, ms: Math.round((clock.nowMicros() - startedAt) / 1000) };
      if (counts.conversations + counts.messages + counts.leads > 0) logger.info(line, 'retention sweep');
      else logger.debug(line, 'retention sweep');
    } catch (error) {
      // Another process has the chatbot (or will, once this claim lapses): this one deletes nothing more.
      if (error instanceof RetentionLeaseLostError) logger.warn({ chatbot_id: chatbotId }, 'retention lease lost');
      else if (error instanceof RetentionStoppedError) await this.handOff(claim);
      else logger.error({ err: error, chatbot_id: chatbotId }, 'retention sweep failed');
    }
  }

  /** A sweep cut short by a stop is due again at once, for another gateway to finish. */
  private async handOff(claim: RetentionClaim): Promise<void> {
    await this.deps.schedule.finish(claim, this.deps.clock.nowMicros()).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, chatbot_id: claim.chatbotId }, 'retention sweep not handed off');
    });
  }

  /** The chatbot's retention; undefined when the chatbot was deleted. */
  private async retentionOf(chatbotId: string): Promise<RetentionSettings | undefined> {
    try {
      return (await this.deps.chatbots.get(chatbotId)).settings.retention;
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  /**
   * Unschedules a chatbot that was deleted or keeps everything now. Retention turned on again meanwhile
   * found its schedule still there (and left it): it is scheduled again.
   */
  private async drop(claim: RetentionClaim): Promise<void> {
    if (!(await this.deps.schedule.finish(claim, undefined))) throw new RetentionLeaseLostError();
    const retention = await this.retentionOf(claim.chatbotId);
    if (retention && retentionOn({ retention })) {
      await this.deps.schedule.ensure(claim.chatbotId, this.deps.clock.nowMicros());
    }
  }
}
