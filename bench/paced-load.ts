/**
 * An open-loop load at a fixed rate, for latency at a given throughput. Requests leave at evenly
 * spaced times (checked every millisecond) from a worker thread, over at most `connections`
 * keep-alive connections, and each latency counts from the time its request was due, so a slow
 * server is not hidden by the load slowing down with it (coordinated omission).
 *
 * autocannon's `overallRate` is not used for this: each connection sends its per-second quota back
 * to back when a new second starts and then waits (lib/httpClient.js), so the server sees bursts at
 * full concurrency and idles in between; and its coordinated-omission correction takes
 * `Math.ceil(1 / rate)` (1 ms for any rate above one request per second per connection) as the
 * expected interval, adding made-up samples to every response slower than that.
 *
 * The first `warmup` seconds run at the same rate and are left out of the figures: a fresh worker
 * thread compiling its HTTP client while it opens its connections, with the requests already due,
 * made the first second's requests slow against any server (the bare restify route at half its peak
 * rate: p99 90 ms in its first second, 7 ms after), and that one second decided a 15 s run's p99.
 */

import http from 'node:http';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { chatBody, SESSIONS } from './chat-request.ts';

export interface PacedLoadOptions {
  url: string;
  headers: Record<string, string>;
  /** Requests per second. */
  rate: number;
  /** Seconds measured, after the warm-up. */
  duration: number;
  /** Seconds at the same rate before the measured ones, left out of the figures but not of the checks. */
  warmup: number;
  connections: number;
  /** The response body every request must get. */
  expectedBody: string;
}

export interface PacedLoadResult {
  /** Responses per second over the measured part of the run. */
  reqPerSec: number;
  /** Milliseconds from when a request was due until its response ended, measured part. */
  p50Ms: number;
  p99Ms: number;
  /** 200 responses with the expected body, measured part. */
  responses: number;
  /** The warm-up's p99 (ms), for the record. */
  warmupP99Ms: number;
  /** The load generator's own share (ms, p99): sending after the due time, and waiting for a free connection. */
  sentLateP99Ms: number;
  connectionWaitP99Ms: number;
  /** Anything else, counted by status code or error, warm-up included. */
  failures: Record<string, number>;
}

/** What the worker posts: once when the first measured request is sent, then the result. */
type WorkerMessage = { kind: 'warmed-up' } | { kind: 'result'; result: PacedLoadResult };

/** Seconds a request may take before it counts as a failure. */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Runs the load from a worker thread; calls `onWarmedUp` when the measured part starts, and resolves
 * when every request has been answered or failed.
 */
export function pacedLoad(options: PacedLoadOptions, onWarmedUp?: () => void): Promise<PacedLoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { pacedLoad: options } });
    worker.on('message', (message: WorkerMessage) => {
      if (message.kind === 'warmed-up') onWarmedUp?.();
      else resolve(message.result);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the paced load worker exited with code ${code}`));
    });
  });
}

/**
 * The worker's side: sends the requests; posts `warmed-up` as the first measured one leaves, and the
 * result when the last has ended.
 */
function runLoad(options: PacedLoadOptions): void {
  const { url, headers, rate, duration, warmup, connections, expectedBody } = options;
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const warmupCount = Math.round(rate * warmup);
  const total = warmupCount + Math.max(1, Math.round(rate * duration));
  const interval = 1000 / rate;
  // Indexed by request; a request that failed keeps NaN.
  const latencies = new Float64Array(total).fill(Number.NaN);
  const sentLate = new Float64Array(total);
  const connectionWaits = new Float64Array(total);
  const failures: Record<string, number> = {};
  let ended = 0;
  let sent = 0;
  const start = performance.now();

  const finish = () => {
    const elapsedS = (performance.now() - (start + warmupCount * interval)) / 1000;
    agent.destroy();
    const measured = (values: Float64Array) => values.subarray(warmupCount).sort();
    const sorted = answered(measured(latencies));
    const result: PacedLoadResult = {
      reqPerSec: sorted.length / elapsedS,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      responses: sorted.length,
      warmupP99Ms: percentile(answered(latencies.subarray(0, warmupCount).sort()), 0.99),
      sentLateP99Ms: percentile(measured(sentLate), 0.99),
      connectionWaitP99Ms: percentile(measured(connectionWaits), 0.99),
      failures,
    };
    parentPort!.postMessage({ kind: 'result', result } satisfies WorkerMessage);
  };

  const settle = (index: number, due: number, outcome: string) => {
    if (outcome === 'ok') latencies[index] = performance.now() - due;
    else failures[outcome] = (failures[outcome] ?? 0) + 1;
    ended += 1;
    if (ended === total) finish();
  };

  const send = (index: number, due: number) => {
    const sentAt = performance.now();
    sentLate[index] = sentAt - due;
    const body = chatBody(index % SESSIONS);
    let settled = false;
    const once = (outcome: string) => {
      if (settled) return;
      settled = true;
      settle(index, due, outcome);
    };
    const request = http.request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error: NodeJS.ErrnoException) => once(error.code ?? 'error'));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          once(status === 200 && text === expectedBody ? 'ok' : status === 200 ? 'other body' : String(status));
        });
      },
    );
    // A keep-alive socket is assigned at once when one is free; otherwise when a response frees one.
    request.once('socket', () => {
      connectionWaits[index] = performance.now() - sentAt;
    });
    request.on('timeout', () => {
      request.destroy();
      once('timeout');
    });
    request.on('error', (error: NodeJS.ErrnoException) => once(error.code ?? 'error'));
    request.end(body);
  };

  const tick = () => {
    const now = performance.now();
    while (sent < total && start + sent * interval <= now) {
      if (sent === warmupCount) parentPort!.postMessage({ kind: 'warmed-up' } satisfies WorkerMessage);
      send(sent, start + sent * interval);
      sent += 1;
    }
    if (sent < total) setTimeout(tick, 1);
  };
  tick();
}

/** The answered requests' latencies of an ascending array: the NaNs of failed ones sort last. */
function answered(sorted: Float64Array): Float64Array {
  const failed = sorted.findIndex(Number.isNaN);
  return failed === -1 ? sorted : sorted.subarray(0, failed);
}

/** The value at quantile `q` of ascending `sorted` (0 when empty). */
function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

if (!isMainThread && (workerData as { pacedLoad?: PacedLoadOptions } | null)?.pacedLoad) {
  runLoad((workerData as { pacedLoad: PacedLoadOptions }).pacedLoad);
}
