/**
 * A fetch whose every request is aborted `timeoutMs` after it started, its response body included, or
 * when `signal` (the caller's) or the request's own signal (the SDK's) aborts. SDKs that stop their
 * timeout once the response headers arrive leave a streamed body unbounded without it.
 */
export function fetchWithDeadline(timeoutMs: number, signal?: AbortSignal): typeof fetch {
  return (input, init) => {
    const signals = [AbortSignal.timeout(timeoutMs), signal, init?.signal ?? undefined];
    return fetch(input, { ...init, signal: AbortSignal.any(signals.filter((one) => one !== undefined)) });
  };
}
