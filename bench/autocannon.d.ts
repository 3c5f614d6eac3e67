// autocannon 9 ships no type declarations. This declares the part of its programmatic API the
// benchmarks use, so `tsc --noEmit` stays strict without adding @types/autocannon.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    /** One request as autocannon builds it; `setupRequest` receives and returns these. */
    interface RequestParams {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      [option: string]: unknown;
    }

    /** An entry of `requests`. With `workers`, the hooks are absolute paths of modules exporting them. */
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      /** Rewrites the request before it is sent: a function, or (with `workers`) a module path. */
      setupRequest?: string | ((request: RequestParams, context: Record<string, unknown>) => RequestParams);
    }

    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      /** Concurrent connections (default 10). */
      connections?: number;
      /** Seconds (default 10). */
      duration?: number;
      pipelining?: number;
      /** Worker threads firing the requests (0: the calling thread). */
      workers?: number;
      /** Seconds before a request counts as timed out (default 10). */
      timeout?: number;
      title?: string;
      /** The sequence each connection loops over. */
      requests?: Request[];
      /** Responses whose body differs count as `mismatches` (not allowed with `requests`). */
      expectBody?: string;
      /** Responses whose body it rejects count as `mismatches`: a function, or (with `workers`) a module path. */
      verifyBody?: string | ((body: string) => boolean);
      /** At most this many requests per second from all connections together (per worker). */
      overallRate?: number;
      /** Record latencies as measured, without autocannon's coordinated-omission correction. */
      ignoreCoordinatedOmission?: boolean;
    }

    /** A histogram summary: average, extremes and percentiles (`p50`, `p99`, …). */
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
      [percentile: `p${string}`]: number;
    }

    interface Result {
      url: string;
      connections: number;
      duration: number;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      '1xx': number;
      '2xx': number;
      '3xx': number;
      '4xx': number;
      '5xx': number;
      statusCodeStats: Record<string, { count: number }>;
      /** Milliseconds per request. */
      latency: Histogram & { totalCount: number };
      /** Requests per second, over the per-second samples. */
      requests: Histogram & { sent: number };
      /** Bytes per second. */
      throughput: Histogram;
    }

    type Instance = EventEmitter & PromiseLike<Result>;
  }

  /** Runs a load test; without a callback the returned instance is also a promise of the result. */
  function autocannon(options: autocannon.Options): autocannon.Instance;

  export = autocannon;
}
