/**
 * The pace of a background index load that lets a given number of batches through, then holds the
 * next one until opened: a test interleaves work with a load at an exact point, without sleeping.
 */
export class LoadGate {
  #passes: number;
  #held: Array<() => void> = [];
  #onHold: Array<() => void> = [];

  /** `passes`: batches let through before the gate holds. */
  constructor(passes: number) {
    this.#passes = passes;
  }

  /** The `pace` the load awaits before each batch. */
  readonly pace = (): Promise<void> => {
    if (this.#passes > 0) {
      this.#passes -= 1;
      return Promise.resolve();
    }
    for (const tell of this.#onHold.splice(0)) tell();
    return new Promise((resolve) => this.#held.push(resolve));
  };

  /** Resolves once the load waits at the gate. */
  reached(): Promise<void> {
    if (this.#held.length > 0) return Promise.resolve();
    return new Promise((resolve) => this.#onHold.push(resolve));
  }

  /** Lets every batch through from now on. */
  open(): void {
    this.#passes = Number.POSITIVE_INFINITY;
    for (const release of this.#held.splice(0)) release();
  }
}
