import type { Clock, Timer } from '../clock.ts';

/** What a {@link LeaseKeeper} keeps, and whom it tells. */
export interface LeaseKeeperDeps {
  /** How long the lease lasts unless renewed; it is renewed every third of it. */
  ttlMs: number;
  /** Times the renewals. */
  clock: Clock;
  /** Takes or renews the lease for this process: true while this process has it. */
  hold(): Promise<boolean>;
  /** Lets go of the lease if this process has it. */
  release(): Promise<void>;
  /** After each try, unless stopped meanwhile: whether this process holds the lease now. */
  onHeld(held: boolean): Promise<void> | void;
  /** A try failed (Redis unreachable): it counts as not held. */
  onError(error: unknown): void;
}

/**
 * A process's lease on something only one gateway may run at a time (a Telegram long poller, a
 * WhatsApp socket): taken or renewed every third of its lifetime, so that the process holding it
 * keeps it and the others take over soon after it lapses (its process died or let go).
 */
export class LeaseKeeper {
  private readonly deps: LeaseKeeperDeps;
  private readonly clock: Clock;
  private timer: Timer | undefined;
  private stopped = false;

  constructor(deps: LeaseKeeperDeps) {
    this.deps = deps;
    this.clock = deps.clock;
  }

  start(): void {
    const renew = () => void this.renew();
    this.timer = this.clock.setInterval(renew, this.deps.ttlMs / 3);
    renew();
  }

  /** Tries at once, between the regular renewals (a reconnect need not wait for the next one). */
  async renew(): Promise<void> {
    let held: boolean;
    try {
      held = await this.deps.hold();
    } catch (error) {
      this.deps.onError(error);
      held = false;
    }
    if (!this.stopped) await this.deps.onHeld(held);
  }

  /** Stops renewing; `release` then lets go at once instead of when the lease lapses. */
  stop(): void {
    this.stopped = true;
    this.clock.clearTimer(this.timer);
  }

  /** Lets go at once; if that fails (Redis unreachable), told to `onError`, and the lease lapses on its own. */
  async release(): Promise<void> {
    await this.deps.release().catch((error: unknown) => this.deps.onError(error));
  }
}
