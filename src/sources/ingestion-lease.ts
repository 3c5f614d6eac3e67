import type { Clock, Timer } from '../clock.ts';
import type { IngestionClaim, IngestionQueue } from '../store/ingestion-queue.ts';

/** Why a run stopped: its claim lost the source's lease, so another process may be ingesting it. */
export class IngestionLeaseLostError extends Error {
  constructor() {
    super('the ingestion lease was lost');
    this.name = 'IngestionLeaseLostError';
  }
}

/**
 * A run's hold on its claim, renewed a third of a lease apart. `signal` aborts as soon as the claim
 * is known to have lost the lease: Redis says another claim took it back, or renewals failed (Redis
 * unreachable) until the lease ran out by this process's reckoning. A renewal that fails while time
 * is left is tried again at the next tick: a blip does not stop the run.
 */
export class IngestionLease {
  private readonly controller = new AbortController();
  private readonly deps: { queue: Pick<IngestionQueue, 'renew'>; clock: Clock; leaseMs: number };
  private readonly claim: IngestionClaim;
  /** When the lease runs out (µs) unless renewed: set by the claim, moved by each renewal. */
  private heldUntil: number;
  private readonly timer: Timer;

  constructor(claim: IngestionClaim, deps: IngestionLease['deps'], onRenewalError: (error: unknown) => void) {
    this.claim = claim;
    this.deps = deps;
    this.heldUntil = claim.until;
    this.timer = deps.clock.setInterval(() => {
      this.renew().catch((error: unknown) => {
        onRenewalError(error);
        if (this.deps.clock.nowMicros() >= this.heldUntil) this.lose();
      });
    }, deps.leaseMs / 3);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Renews the lease now, before a run writes its result: once this resolves, the claim holds the
   * source for a whole lease, far longer than the writes take, so no other claim can write between.
   * Throws `IngestionLeaseLostError` when the lease is lost.
   */
  async confirm(): Promise<void> {
    this.signal.throwIfAborted();
    await this.renew();
    this.signal.throwIfAborted();
  }

  stop(): void {
    this.deps.clock.clearTimer(this.timer);
  }

  private async renew(): Promise<void> {
    if (this.signal.aborted) return;
    const now = this.deps.clock.nowMicros();
    if (await this.deps.queue.renew(this.claim, now, this.deps.leaseMs)) {
      this.heldUntil = now + this.deps.leaseMs * 1000;
    } else {
      this.lose();
    }
  }

  private lose(): void {
    this.stop();
    this.controller.abort(new IngestionLeaseLostError());
  }
}
