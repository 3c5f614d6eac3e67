import { createHash } from 'node:crypto';
import type { Clock, Timer } from '../clock.ts';
import type { Config } from '../config.ts';
import { chunkDocument } from '../ingest/chunk-document.ts';
import type { CrawlOptions } from '../ingest/crawl-options.ts';
import type { Egress } from '../net/ssrf-guard.ts';
import { parseDocument } from '../ingest/document-parser.ts';
import type { ParsedDocument } from '../ingest/parsed-document.ts';
import { crawlSite } from '../ingest/site-crawler.ts';
import { NotFoundError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import { embeddingText, type ChunkRecord, type UnembeddedChunk } from '../rag/chunk.ts';
import type { Embedder } from '../rag/embedder.ts';
import type { RetrievalIndex } from '../rag/retrieval-index.ts';
import type { IngestionClaim, IngestionQueue } from '../store/ingestion-queue.ts';
import { IngestionLease, IngestionLeaseLostError } from './ingestion-lease.ts';
import type { SourceStore } from '../store/source-store.ts';
import { isSyncable, type Source, type SourceDocument, type SyncRecord } from './source.ts';
import { documentKey, type ConnectorReader } from './connector-reader.ts';
import { isConnectorType } from './connectors/connector.ts';
import type { IngestionObserver, IngestionStep, JobObservation } from '../metrics/ingestion-observer.ts';

/** Chunks embedded per call to the embedder. */
const EMBED_BATCH = 64;

/** What the worker works with. */
export interface IngestionDeps {
  queue: IngestionQueue;
  sources: SourceStore;
  /** The index and embedder of the space the gateway serves now (it changes when a re-embedding switches). */
  retrieval: { readonly index: RetrievalIndex; readonly embedder: Embedder };
  clock: Clock;
  logger: Logger;
  crawl: Partial<CrawlOptions>;
  /** Reads connector sources (Drive, Notion, …). */
  connectors: ConnectorReader;
  /** Whether a source's chatbot still exists (a deleted chatbot's sources are not synced). */
  chatbots: Pick<ChatbotStore, 'get'>;
  /** Observes every job (metrics, a trace), when either is on. */
  observer?: IngestionObserver;
}

/**
 * One document of a source as read: parsed, or unchanged since the last sync and not fetched again
 * (`parsed` undefined).
 */
interface ReadItem {
  /** Its id in the source's document record: a connector's id or a page's URL; '' for a file or text. */
  id: string;
  url: string;
  parsed?: ParsedDocument;
  /** What is recorded of it besides its hash and chunk count. */
  record: Omit<SourceDocument, 'hash' | 'chunks'>;
}

/** What a source holds, as read now. */
interface ReadSource {
  items: ReadItem[];
  /** SPEC's page_count. */
  pageCount: number;
  /** The title the source takes unless its owner gave one. */
  title?: string;
  /** Recorded documents not read this time for a passing reason (a failed request, a crawl cut short): kept. */
  keep: string[];
  /** Not all of the source was read: chunks of a source stored before documents were recorded stay too. */
  partial?: boolean;
}

/** How a run changed a source's chunks. */
interface SyncPlan {
  upserts: ChunkRecord[];
  removals: string[];
  records: Map<string, SourceDocument>;
  counts: { added: number; changed: number; removed: number; unchanged: number };
}

/** Limits of the worker. */
export interface IngestionOptions {
  /** Sources ingested at once by this process. */
  concurrency: number;
  leaseMs: number;
  pollMs: number;
  /** Claims that never finished (their process died) before a source is marked failed. */
  maxInterruptions: number;
}

/**
 * Ingests sources off the request path: claims queued sources from Redis with a lease (bounded
 * concurrency per process), moves their status pending → crawling (url) → processing → done or
 * failed (with the reason stored), and replaces their chunks in retrieval. A source whose process died
 * mid-ingestion is claimed again when its lease expires, or failed after too many interruptions.
 */
export class IngestionWorker {
  private readonly deps: IngestionDeps;
  private readonly options: IngestionOptions;
  private running = 0;
  private timer: Timer | undefined;
  private polling = false;
  private readonly idle: Array<() => void> = [];

  constructor(deps: IngestionDeps, options: IngestionOptions) {
    this.deps = deps;
    this.options = options;
  }

  start(): void {
    this.timer = this.deps.clock.setInterval(() => this.kick(), this.options.pollMs);
    this.kick();
  }

  /** Looks for queued sources now. */
  kick(): void {
    if (this.polling || this.timer === undefined) return;
    this.polling = true;
    this.poll()
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'ingestion poll failed'))
      .finally(() => (this.polling = false));
  }

  /**
   * Stops claiming; waits up to `graceMs` for running ingestions. One still running then is left to
   * its lease: when the lease expires another process ingests the source again.
   */
  async stop(graceMs = 2000): Promise<void> {
    this.deps.clock.clearTimer(this.timer);
    this.timer = undefined;
    if (this.running === 0) return;
    // The grace runs on real time, not the clock's: a stop ends even where the clock is simulated.
    await Promise.race([
      new Promise<void>((resolve) => this.idle.push(resolve)),
      new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref()),
    ]);
  }

  private async poll(): Promise<void> {
    const now = this.deps.clock.nowMicros();
    // Due re-syncs join the queue; whichever process claims one syncs it (once).
    await this.deps.queue.promoteDue(now, 100);
    const free = this.options.concurrency - this.running;
    if (free <= 0) return;
    const claims = await this.deps.queue.claim(free, now, this.options.leaseMs);
    for (const claim of claims) void this.run(claim);
  }

  private async run(claim: IngestionClaim): Promise<void> {
    this.running += 1;
    const { queue, clock, logger } = this.deps;
    const lease = new IngestionLease(claim, { queue, clock, leaseMs: this.options.leaseMs }, (error) =>
      logger.warn({ err: error, source_id: claim.sourceId }, 'ingestion lease not renewed'),
    );
    const job = this.deps.observer?.job(claim);
    try {
      const source = await this.live(claim.sourceId);
      if (!source) {
        await queue.cancelSync(claim.chatbotId, claim.sourceId);
        job?.ended('cancelled');
      } else if (claim.interrupted > this.options.maxInterruptions) {
        await lease.confirm();
        await this.fail(source, 'ingestion was interrupted repeatedly');
        job?.ended('failed', 'ingestion was interrupted repeatedly');
      } else await this.ingest(source, lease, job);
      if (!(await queue.finish(claim, clock.nowMicros()))) throw new IngestionLeaseLostError();
    } catch (error) {
      // Another claim has the source (or will, once its lease is back in the queue): this run
      // writes nothing more. Any other failure leaves the lease to lapse, and another claim retries.
      if (error instanceof IngestionLeaseLostError) logger.warn({ source_id: claim.sourceId }, 'ingestion lease lost');
      else logger.error({ err: error, source_id: claim.sourceId }, 'ingestion could not record its result');
      if (error instanceof IngestionLeaseLostError) job?.ended('lease_lost');
      else job?.ended('error', error instanceof Error ? error.message : String(error));
    } finally {
      job?.done();
      lease.stop();
      this.running -= 1;
      if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
      this.kick();
    }
  }

  /** A live source whose chatbot is live too; undefined when either was deleted. */
  private async live(sourceId: string): Promise<Source | undefined> {
    const source = await this.deps.sources.find(sourceId);
    if (!source) return undefined;
    try {
      await this.deps.chatbots.get(source.chatbot_id);
      return source;
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  /**
   * Ends a run: schedules the source's next sync by its refresh setting (none when off), then writes
   * how this one ended with the status it leaves (`outcome`, when it changes one), in one write, so
   * whoever sees the status or the record sees the rest and the next sync too.
   */
  private async ended(
    source: Source,
    record: Omit<SyncRecord, 'at'>,
    outcome?: Parameters<SourceStore['finishRun']>[3],
  ): Promise<void> {
    const current = await this.live(source.id);
    // Deleted meanwhile (or its chatbot): no next sync, and nothing written to its record.
    if (!current) {
      await this.deps.queue.cancelSync(source.chatbot_id, source.id);
      return;
    }
    const now = this.deps.clock.nowMicros();
    await this.deps.queue.scheduleByRefresh(source.chatbot_id, source.id, current.refresh, now);
    await this.deps.sources.finishRun(source, record, now, outcome);
  }

  /**
   * Ingests a source, or syncs one that is `done`: only documents that changed are fetched (where
   * the service or site can say so) and re-embedded, vanished ones are pruned, and the chatbot
   * answers from the current chunks throughout. A sync that fails leaves the source `done` with its
   * chunks, the error in its sync record; a first ingestion that fails leaves no chunk behind.
   * A run whose lease is lost stops at its next step (each progress line, the crawl at once) and
   * writes nothing more; its result is written only after the lease was renewed for it.
   */
  private async ingest(source: Source, lease: IngestionLease, job?: JobObservation): Promise<void> {
    const step = <T>(name: IngestionStep, work: () => Promise<T>) => (job ? job.during(name, work) : work());
    const progress = async (line: string) => {
      lease.signal.throwIfAborted();
      await this.deps.sources.setProgress(source, line);
    };
    const syncing = source.status === 'done';
    const previous = syncing ? await this.deps.sources.documents(source) : new Map<string, SourceDocument>();
    try {
      const read = await step('read', () => this.read(source, previous, syncing, progress, lease.signal));
      if (!syncing) await this.deps.sources.setStatus(source.id, 'processing');
      const plan = await step('embed', () => this.plan(source, read, previous, progress));
      await lease.confirm();
      // A source deleted meanwhile must not come back into retrieval: not before the write, nor
      // by one that lands while it is deleted (its chunks are removed once more).
      if (!(await this.live(source.id))) return job?.ended('cancelled');
      const { index } = this.deps.retrieval;
      await step('index', () => index.updateSource(source.chatbot_id, source.id, plan.upserts, plan.removals));
      if (!(await this.live(source.id))) {
        await this.deps.retrieval.index.removeSource(source.chatbot_id, source.id);
        return job?.ended('cancelled');
      }
      if (isSyncable(source.type)) await this.deps.sources.setDocuments(source, plan.records);
      // A URL source is titled by its start page, a connector source by its folder, space or
      // document, unless the owner gave it a title.
      const title = source.title ? undefined : read.title;
      // Pages and documents kept after a passing failure still count: their chunks are there.
      const pageCount = read.pageCount + plan.records.size - read.items.length;
      await this.ended(source, { error: '', ...plan.counts }, { status: 'done', pageCount, error: '', title });
      job?.ended('done');
      if (syncing) this.deps.logger.info({ source_id: source.id, ...plan.counts }, 'source synced');
    } catch (error) {
      if (error instanceof IngestionLeaseLostError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      this.deps.logger.warn({ source_id: source.id, reason, syncing }, syncing ? 'sync failed' : 'ingestion failed');
      // Deleted meanwhile: nothing to report. A failure to record it reaches `run`, whose lease
      // then lapses and another claim ingests the source again.
      if (!(await this.live(source.id))) return job?.ended('cancelled');
      await lease.confirm();
      await this.fail(source, reason);
      job?.ended('failed', reason);
    }
  }

  /**
   * Ends a run that failed: a source that never finished ingesting fails with no chunk of it left
   * behind; a `done` one keeps its chunks and status, the reason in its sync record. Either way the
   * next sync is scheduled (a failed site or service is tried again on the source's schedule).
   */
  private async fail(source: Source, reason: string): Promise<void> {
    if (source.status !== 'done') {
      await this.deps.retrieval.index.removeSource(source.chatbot_id, source.id);
      await this.deps.sources.setDocuments(source, new Map());
    }
    // The progress line of the run (or of a process that died in it) ends here too.
    const outcome = source.status === 'done' ? undefined : { status: 'failed' as const, error: reason };
    await this.ended(source, { error: reason, ...NOTHING_DONE }, outcome);
  }

  /** The documents of a source, and SPEC's page_count (pages indexed; 0 for single documents). */
  private async read(
    source: Source,
    previous: ReadonlyMap<string, SourceDocument>,
    syncing: boolean,
    progress: (line: string) => Promise<void>,
    signal: AbortSignal,
  ): Promise<ReadSource> {
    if (!syncing) await this.deps.sources.setStatus(source.id, isSyncable(source.type) ? 'crawling' : 'processing');
    if (isConnectorType(source.type)) return this.readConnector(source, previous, progress);
    if (source.type === 'url') return this.readSite(source, previous, progress, signal);
    const bytes = (await this.deps.sources.content(source)) ?? Buffer.alloc(0);
    const filename = source.type === 'text' ? 'text.txt' : source.title || 'file';
    const doc = await parseDocument({ filename, bytes });
    const multiPage = source.type === 'file' && /\.(pdf|pptx)$/i.test(source.title);
    // A file or text is titled by its source.
    const titled = { ...doc, title: source.title || doc.title };
    const url = source.type === 'text' ? '' : source.url;
    return {
      items: [{ id: '', url, parsed: titled, record: { title: titled.title, change_token: '' } }],
      pageCount: multiPage ? doc.pages.length : 0,
      keep: [],
    };
  }

  private async readSite(
    source: Source,
    previous: ReadonlyMap<string, SourceDocument>,
    progress: (line: string) => Promise<void>,
    signal: AbortSignal,
  ): Promise<ReadSource> {
    // Progress lines are written while the crawl goes on, all of them before the source is done. The
    // first that fails (the lease lost, Redis unreachable) is thrown once the crawl has stopped: held
    // here meanwhile, not left a rejected promise nobody awaits yet, which would end the process.
    const lines: Array<Promise<unknown>> = [];
    let failed: { error: unknown } | undefined;
    const result = await crawlSite(source.url, this.deps.crawl, {
      signal,
      onProgress: (p) =>
        lines.push(
          progress(`crawled ${p.done} of ${p.done + p.queued} pages`).catch((error: unknown) => (failed ??= { error })),
        ),
      previous: (url) => {
        const page = previous.get(url);
        if (!page) return undefined;
        const validators = { etag: page.etag, lastModified: page.last_modified };
        return { validators, lastmod: page.change_token, links: page.links ?? [] };
      },
    });
    await Promise.all(lines);
    // A crawl stopped because the lease was lost is no result.
    signal.throwIfAborted();
    if (failed) throw failed.error;
    const kept = result.pages.length + result.unchanged.length;
    if (kept === 0) {
      throw new Error(
        result.errors[0] ? `no page could be read: ${result.errors[0].message}` : 'no page could be read',
      );
    }
    const items: ReadItem[] = [];
    for (const page of result.pages) {
      const record = { title: page.title, change_token: page.lastmod, links: page.links };
      const validators = { etag: page.validators.etag, last_modified: page.validators.lastModified };
      items.push({
        id: page.url,
        url: page.url,
        parsed: page.document,
        record: { ...record, ...withoutEmpty(validators) },
      });
    }
    for (const page of result.unchanged) {
      // As recorded (its hash and chunk count are carried over by `plan`), with the sitemap's lastmod now.
      items.push({ id: page.url, url: page.url, record: { ...previous.get(page.url)!, change_token: page.lastmod } });
    }
    // A page the site says is gone (404, 410) is pruned. One the crawl did not reach is pruned only
    // when the crawl saw the whole site: after a passing failure (a sitemap or a page that answered
    // 5xx or timed out, whose links were not followed) or a crawl cut short, it keeps its chunks.
    const gone = new Set(result.errors.filter((e) => e.statusCode === 404 || e.statusCode === 410).map((e) => e.url));
    const partial =
      result.endedBy === 'time-limit' ||
      result.endedBy === 'aborted' ||
      result.errors.some((e) => e.statusCode !== 404 && e.statusCode !== 410);
    const keep = partial ? [...previous.keys()].filter((url) => !gone.has(url)) : [];
    // Titled by the start page, read first (a sync finds the source titled already).
    return { items, pageCount: kept, title: items[0]?.record.title, keep, partial };
  }

  private async readConnector(
    source: Source,
    previous: ReadonlyMap<string, SourceDocument>,
    progress: (line: string) => Promise<void>,
  ): Promise<ReadSource> {
    const read = await this.deps.connectors.read(source, progress, previous);
    const only = read.documents[0]!;
    // SPEC's page_count: documents indexed for a collection; pages or slides of a single paged file
    // (as it was, when the file has not changed).
    let pageCount = read.documents.length;
    if (read.single) pageCount = only.parsed ? (only.paged ? only.parsed.pages.length : 0) : source.page_count;
    return {
      title: read.title,
      pageCount,
      keep: read.failed,
      items: read.documents.map(({ document, parsed }) => ({
        id: document.id,
        url: document.url,
        parsed,
        record: {
          title: parsed?.title ?? (document.title || previous.get(document.id)?.title || ''),
          change_token: document.changeToken,
        },
      })),
    };
  }

  /**
   * What a run changes: each document read is compared with what is recorded of it (its hash), and
   * only added or changed ones are chunked and embedded; a chunk whose text the document had before
   * keeps its embedding. Recorded documents neither read nor kept are removed.
   */
  private async plan(
    source: Source,
    read: ReadSource,
    previous: ReadonlyMap<string, SourceDocument>,
    progress: (line: string) => Promise<void>,
  ): Promise<SyncPlan> {
    const records = new Map<string, SourceDocument>();
    const counts = { added: 0, changed: 0, removed: 0, unchanged: 0 };
    const fresh: UnembeddedChunk[] = [];
    const reusable = new Map<string, Float32Array>();
    // Chunks of a document are `{source}:{key}:{n}`; those of a file or text `{source}:{n}`.
    const chunkIds = (id: string, count: number) =>
      Array.from({ length: count }, (_, n) =>
        id === '' ? `${source.id}:${n}` : `${source.id}:${documentKey(id)}:${n}`,
      );
    for (const item of read.items) {
      const before = previous.get(item.id);
      const hash = item.parsed ? contentHash(item.parsed) : before?.hash;
      if (before && hash === before.hash) {
        records.set(item.id, { ...item.record, hash, chunks: before.chunks });
        counts.unchanged += 1;
        continue;
      }
      const meta = { chatbotId: source.chatbot_id, sourceId: source.id, url: item.url };
      const chunks = chunkDocument(item.parsed!, meta);
      const ids = chunkIds(item.id, chunks.length);
      fresh.push(...chunks.map((chunk, n) => ({ ...chunk, id: ids[n]!, position: fresh.length + n })));
      records.set(item.id, { ...item.record, hash: hash!, chunks: chunks.length });
      if (before) {
        counts.changed += 1;
        const old = await this.deps.retrieval.index.chunks.byIds(source.chatbot_id, chunkIds(item.id, before.chunks));
        for (const chunk of old) if (chunk) reusable.set(embeddingText(chunk), chunk.embedding);
      } else {
        counts.added += 1;
      }
    }
    for (const id of read.keep) {
      const before = previous.get(id);
      if (before && !records.has(id)) records.set(id, before);
    }
    counts.removed = [...previous.keys()].filter((id) => !records.has(id)).length;
    const upserts = await this.embed(fresh, reusable, progress);
    const live = new Set<string>();
    for (const [id, record] of records) {
      for (const chunkId of chunkIds(id, record.chunks)) live.add(chunkId);
    }
    // Chunks of sources stored before their documents were recorded (`{source}:{n}`) belong to no
    // document: a read of the whole source replaces them, a partial one leaves them.
    const unrecorded = new RegExp(`^${source.id}:\\d+$`);
    const removals = (await this.deps.retrieval.index.chunks.ids(source.chatbot_id, source.id)).filter(
      (id) => !live.has(id) && !(read.partial && unrecorded.test(id)),
    );
    return { upserts, removals, records, counts };
  }

  /**
   * Embeds chunks in batches, reusing `reusable` embeddings by text. Vectors that are missing or of
   * another size than the space's are refused before anything is stored.
   */
  private async embed(
    chunks: UnembeddedChunk[],
    reusable: ReadonlyMap<string, Float32Array>,
    progress: (line: string) => Promise<void>,
  ): Promise<ChunkRecord[]> {
    const out: ChunkRecord[] = [];
    const todo = chunks.filter((chunk) => !reusable.has(embeddingText(chunk)));
    const embedded = new Map<string, Float32Array>(reusable);
    let dimensions = this.deps.retrieval.index.dimensions;
    for (let i = 0; i < todo.length; i += EMBED_BATCH) {
      const texts = todo.slice(i, i + EMBED_BATCH).map(embeddingText);
      const vectors = await this.deps.retrieval.embedder.embed(texts);
      if (vectors.length !== texts.length) {
        throw new Error(`the embedder returned ${vectors.length} vectors for ${texts.length} texts`);
      }
      for (const [j, vector] of vectors.entries()) {
        dimensions ??= vector.length;
        if (vector.length !== dimensions) {
          throw new Error(
            `the embedder returned a vector of ${vector.length} dimensions; the embedding space ${this.deps.retrieval.embedder.space} has ${dimensions}`,
          );
        }
        embedded.set(texts[j]!, vector);
      }
      await progress(`embedded ${Math.min(i + EMBED_BATCH, todo.length)} of ${todo.length} chunks`);
    }
    for (const chunk of chunks) out.push({ ...chunk, embedding: embedded.get(embeddingText(chunk))! });
    return out;
  }
}

/** What a failed sync did. */
const NOTHING_DONE = { added: 0, changed: 0, removed: 0, unchanged: 0 };

/** SHA-256 of a parsed document: the same hash means the same chunks. */
function contentHash(doc: ParsedDocument): string {
  return createHash('sha256').update(JSON.stringify(doc)).digest('base64url');
}

function withoutEmpty(fields: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, string] => Boolean(entry[1])));
}

/** A gateway's worker as the configuration describes it: two sources at a time. */
export function ingestionWorkerFor(
  deps: Omit<IngestionDeps, 'crawl'>,
  config: Config,
  egress?: Egress,
): IngestionWorker {
  return new IngestionWorker(
    { ...deps, crawl: { allowPrivate: config.CRAWL_ALLOW_PRIVATE, maxPages: config.CRAWL_MAX_PAGES, egress } },
    { concurrency: 2, leaseMs: config.INGEST_LEASE_MS, pollMs: 1000, maxInterruptions: 2 },
  );
}
