/** A timer handed out by a {@link Clock}; only that clock's `clearTimer` cancels it. */
export interface Timer {
  readonly [timerBrand]: true;
}
declare const timerBrand: unique symbol;

/**
 * The source of time for everything that schedules, windows or stamps: the time now, and timers that
 * fire by it. Tests inject their own (a simulated clock that moves only when told, so a schedule is
 * tested without sleeping). Timers never keep the process alive: whatever must outlive them holds it.
 */
export interface Clock {
  /** Microseconds since the Unix epoch. */
  nowMicros(): number;
  /** Calls `callback` once, `ms` from now. */
  setTimeout(callback: () => void, ms: number): Timer;
  /** Calls `callback` every `ms` from now until cleared. */
  setInterval(callback: () => void, ms: number): Timer;
  /** Cancels a timer of this clock; nothing for one that fired (once) or was cleared, or `undefined`. */
  clearTimer(timer: Timer | undefined): void;
}

/** Wall-clock time with microsecond resolution, and Node's timers (unreferenced). */
export const systemClock: Clock = {
  nowMicros: () => Math.floor((performance.timeOrigin + performance.now()) * 1000),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref() as unknown as Timer,
  setInterval: (callback, ms) => setInterval(callback, ms).unref() as unknown as Timer,
  clearTimer: (timer) => clearTimeout(timer as unknown as NodeJS.Timeout),
};

/** The system clock's timers with time standing still at `nowMicros()` (tests that fix "now" only). */
export function fixedTimeClock(nowMicros: () => number): Clock {
  return { ...systemClock, nowMicros };
}
