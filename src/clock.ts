/** The source of time for everything that schedules, windows or stamps. Tests inject their own. */
export interface Clock {
  /** Microseconds since the Unix epoch. */
  nowMicros(): number;
}

/** Wall-clock time with microsecond resolution. */
export const systemClock: Clock = {
  nowMicros: () => Math.floor((performance.timeOrigin + performance.now()) * 1000),
};
