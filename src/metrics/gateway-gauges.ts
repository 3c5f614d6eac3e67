import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { DeliveryStore } from '../store/delivery-store.ts';
import type { IngestionQueue } from '../store/ingestion-queue.ts';
import type { GatewayMetrics, SocketKind } from './gateway-metrics.ts';
import type { LoadProgress } from '../rag/chatbot-loads.ts';

/** How long a scrape waits for each Redis read before its gauges read NaN. */
export const SCRAPE_READ_TIMEOUT_MS = 1000;

/** What the gauges read when scraped: nothing here is touched on the request path. */
export interface GaugeSources {
  deliveries: Pick<DeliveryStore, 'pendingCount'>;
  ingestion: Pick<IngestionQueue, 'state'>;
  /** Live conversation actors in this process. */
  actors: () => number;
  /** Open sockets in this process, by kind. */
  sockets: () => Record<SocketKind, number>;
  /** How far this process's in-process search index has loaded. */
  searchIndex: () => LoadProgress;
  clock: Pick<Clock, 'nowMicros'>;
  logger: Logger;
  timeoutMs?: number;
}

/** A read that failed or did not answer in time. */
export class ScrapeReadError extends Error {
  override name = 'ScrapeReadError';
}

/**
 * The gauges read at scrape time: the pending webhook deliveries and the ingestion queue (shared by
 * every gateway, read from Redis: one ZCARD and one MULTI per scrape, each bounded by a timeout),
 * and this process's live conversation actors, open sockets and search index load.
 */
export function registerGatewayGauges(metrics: GatewayMetrics, sources: GaugeSources): void {
  const timeoutMs = sources.timeoutMs ?? SCRAPE_READ_TIMEOUT_MS;
  const read = <T>(what: string, work: () => Promise<T>) =>
    sharedRead(async () => {
      try {
        return await withTimeout(work(), timeoutMs, what);
      } catch (error) {
        metrics.scrapeReadFailures.inc();
        sources.logger.warn({ err: error }, 'metrics: a Redis read for the scrape failed');
        return undefined;
      }
    });
  const pending = read('pending deliveries', () => sources.deliveries.pendingCount());
  const ingestion = read('the ingestion queue', () => sources.ingestion.state(sources.clock.nowMicros()));
  metrics.gauge(
    'switchboard_webhook_deliveries_pending',
    'Webhook deliveries waiting for an attempt or being attempted, across every gateway (read from Redis).',
    async () => (await pending()) ?? Number.NaN,
  );
  metrics.gauge(
    'switchboard_ingestion_jobs_queued',
    'Sources waiting to be ingested or synced, across every gateway (read from Redis).',
    async () => (await ingestion())?.queued ?? Number.NaN,
  );
  metrics.gauge(
    'switchboard_ingestion_jobs_running',
    'Sources being ingested under a live lease, across every gateway (read from Redis).',
    async () => (await ingestion())?.running ?? Number.NaN,
  );
  metrics.gauge(
    'switchboard_conversation_actors',
    'Conversation actors live in this process (passivated after CONVERSATION_IDLE_MS idle).',
    sources.actors,
  );
  metrics.gauge(
    'switchboard_search_index_loading',
    'Whether the in-process search index of this process is still loading from Redis (1) or loaded (0).',
    () => (sources.searchIndex().done ? 0 : 1),
  );
  metrics.gauge(
    'switchboard_search_index_chunks_loaded',
    'Chunk records the in-process search index of this process has read from Redis since it started.',
    () => sources.searchIndex().loaded,
  );
  metrics.labelledGauge(
    'switchboard_open_sockets',
    'Open websockets in this process, by kind.',
    'kind',
    sources.sockets,
  );
}

/** One read shared by every gauge collected in the same scrape (they are collected concurrently). */
function sharedRead<T>(work: () => Promise<T>): () => Promise<T> {
  let inflight: Promise<T> | undefined;
  return () =>
    (inflight ??= work().finally(() => {
      inflight = undefined;
    }));
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // Real time: a scrape is bounded by the wall clock whatever clock the gateway runs on.
    timer = setTimeout(() => reject(new ScrapeReadError(`reading ${what} took over ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
