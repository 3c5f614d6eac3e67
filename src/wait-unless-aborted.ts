/**
 * Waits `ms`, or until `signal` aborts if that comes first. It resolves either way and never rejects:
 * whether the wait was cut short is for the caller to read from the signal. `ref: false` lets the
 * process exit while it waits.
 */
export function waitUnlessAborted(ms: number, signal: AbortSignal, options: { ref?: boolean } = {}): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (options.ref === false) timer.unref();
    signal.addEventListener('abort', done, { once: true });
  });
}
