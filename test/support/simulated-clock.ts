import type { Clock, Timer } from '../../src/clock.ts';

/** A timer of the simulated clock; the object itself is the handle it gives out. */
interface Scheduled {
  /** When it fires next (µs). */
  due: number;
  /** Set for an interval: how far apart it fires (µs). */
  period: number | undefined;
  callback: () => void;
  /** Scheduling order: timers due at the same time fire in the order they were (re)scheduled. */
  order: number;
}

/** Node's largest timer delay; longer (or below 1 ms, or not a number) and Node fires after 1 ms. */
const TIMEOUT_MAX = 2 ** 31 - 1;

/** 2027-01-15T08:00:00Z: a fixed, recognisable start for tests that do not pick one. */
const DEFAULT_START_MICROS = 1_800_000_000_000_000;

/**
 * A {@link Clock} whose time moves only when a test says so: `advance(ms)` fires the timers that fall
 * due on the way, in time order, one at a time, with the time set to each one's due time while it
 * runs, and lets what each one started settle before the next. A schedule is then tested exactly
 * (nothing at 9 999 ms, the retry at 10 000 ms) and without sleeping.
 *
 * Settling runs promise chains and the I/O already done, not I/O still under way (a Redis round
 * trip): a test that waits for real I/O polls for its result, and moves time once it is there.
 */
export class SimulatedClock implements Clock {
  private now: number;
  private readonly timers = new Set<Scheduled>();
  private scheduled = 0;
  /** The advance under way: advances run one after another, each from where the last one left the time. */
  private moving: Promise<void> = Promise.resolve();
  private readonly settleRounds: number;

  /**
   * `startMicros`: the time at first (µs since the epoch). `settleRounds`: event-loop turns given to
   * promise chains after each timer fires (more for long chains of awaits).
   */
  constructor(startMicros = DEFAULT_START_MICROS, options: { settleRounds?: number } = {}) {
    this.now = startMicros;
    this.settleRounds = options.settleRounds ?? 10;
  }

  nowMicros(): number {
    return this.now;
  }

  setTimeout(callback: () => void, ms: number): Timer {
    return this.schedule(callback, ms, false);
  }

  setInterval(callback: () => void, ms: number): Timer {
    return this.schedule(callback, ms, true);
  }

  clearTimer(timer: Timer | undefined): void {
    this.timers.delete(timer as unknown as Scheduled);
  }

  /** Timers waiting to fire (an interval counts until cleared). */
  get pending(): number {
    return this.timers.size;
  }

  /**
   * Moves the time `ms` on, firing every timer that falls due up to then (those the firing ones
   * schedule too), then settles. `advance(0)` fires what is due now and settles. A callback that
   * throws rejects the advance, the time left at that timer's due time; later advances go on.
   */
  advance(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new RangeError(`ms must be a number ≥ 0, got ${ms}`);
    const run = this.moving.then(() => this.move(Math.round(ms * 1000)));
    // The failure is the caller's, through `run`; the next advance starts from where this one stopped.
    this.moving = run.catch(() => undefined);
    return run;
  }

  private schedule(callback: () => void, ms: number, repeat: boolean): Timer {
    const delay = Math.round((ms >= 1 && ms <= TIMEOUT_MAX ? ms : 1) * 1000);
    const timer: Scheduled = {
      due: this.now + delay,
      period: repeat ? delay : undefined,
      callback,
      order: this.scheduled++,
    };
    this.timers.add(timer);
    return timer as unknown as Timer;
  }

  private async move(micros: number): Promise<void> {
    const target = this.now + micros;
    // What was started before the advance schedules its timers before the time moves past them.
    await this.settle();
    for (let timer = this.nextDue(target); timer; timer = this.nextDue(target)) {
      this.now = timer.due;
      // Rescheduled (or removed) before it runs, so that it may clear itself.
      if (timer.period === undefined) this.timers.delete(timer);
      else {
        timer.due += timer.period;
        timer.order = this.scheduled++;
      }
      timer.callback();
      await this.settle();
    }
    this.now = target;
  }

  /** The earliest timer due by `target`, first scheduled first among equals. */
  private nextDue(target: number): Scheduled | undefined {
    let next: Scheduled | undefined;
    for (const timer of this.timers) {
      if (timer.due > target) continue;
      if (!next || timer.due < next.due || (timer.due === next.due && timer.order < next.order)) next = timer;
    }
    return next;
  }

  private async settle(): Promise<void> {
    for (let round = 0; round < this.settleRounds; round += 1) await new Promise((resolve) => setImmediate(resolve));
  }
}
