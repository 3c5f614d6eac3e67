import type { Clock } from '../clock.ts';

/** What the bucket says about one frame: handle it, drop it, or close the socket that sent it. */
export type BucketVerdict = 'accept' | 'drop' | 'close';

/**
 * A token bucket that remembers what it refused: it holds up to `burst` tokens, refilled at
 * `ratePerSecond`, and every frame takes one. A refused frame takes its token too, into debt, so a
 * sender that goes on past its rate waits the longer for it; once the debt is a whole burst (twice
 * the burst sent at once, or a rate kept above the limit for a while) the verdict is `close`.
 */
export class TokenBucket {
  private readonly ratePerSecond: number;
  private readonly burst: number;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  private tokens: number;
  private updatedMicros: number;

  constructor(ratePerSecond: number, burst: number, clock: Pick<Clock, 'nowMicros'>) {
    if (!(ratePerSecond > 0)) throw new RangeError(`ratePerSecond must be positive, got ${ratePerSecond}`);
    if (!(Number.isInteger(burst) && burst >= 1)) throw new RangeError(`burst must be an integer ≥ 1, got ${burst}`);
    this.ratePerSecond = ratePerSecond;
    this.burst = burst;
    this.clock = clock;
    this.tokens = burst;
    this.updatedMicros = clock.nowMicros();
  }

  take(): BucketVerdict {
    const now = this.clock.nowMicros();
    const elapsedSeconds = Math.max(0, now - this.updatedMicros) / 1_000_000;
    this.updatedMicros = now;
    this.tokens = Math.min(this.burst, this.tokens + elapsedSeconds * this.ratePerSecond) - 1;
    if (this.tokens >= 0) return 'accept';
    return this.tokens <= -this.burst ? 'close' : 'drop';
  }
}
