import { createHash } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { chunkDocument } from '../ingest/chunk-document.ts';
import type { CrawlOptions } from '../ingest/crawl-options.ts';
import { parseDocument } from '../ingest/document-parser.ts';
import type { ParsedDocument } from '../ingest/parsed-document.ts';
import { crawlSite } from '../ingest/site-crawler.ts';
import type { Logger } from '../logger.ts';
import type { ChunkRecord, UnembeddedChunk } from '../rag/chunk.ts';
import type { Embedder } from '../rag/embedder.ts';
import type { RetrievalIndex } from '../rag/retrieval-index.ts';
import type { IngestionClaim, IngestionQueue } from '../store/ingestion-queue.ts';
import {
  isSyncable,
  type Source,
  type SourceDocument,
  type SourceStore,
  type SyncRecord,
} from '../store/source-store.ts';
import { documentKey, type ConnectorReader } from '../sources/connector-reader.ts';
import { isConnectorType } from '../sources/connectors/connector.ts';

/** Chunks embedded per call to the embedder. */
const EMBED_BATCH = 64;

/** What the worker works with. */
export interface IngestionDeps {
  queue: IngestionQueue;
  sources: SourceStore;
  index: RetrievalIndex;
  embedder: Embedder;
  clock: Clock;
  logger: Logger;
  crawl: Partial<CrawlOptions>;
  /** Reads connector sources (Drive, Notion, …). */
  connectors: ConnectorReader;
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
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private readonly idle: Array<() => void> = [];

  constructor(deps: IngestionDeps, options: IngestionOptions) {
    this.deps = deps;
    this.options = options;
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), this.options.pollMs);
    this.timer.unref();
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
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.running === 0) return;
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
    const renew = setInterval(() => {
      // Tried again a third of a lease later; a lapsed lease only means another gateway ingests it again.
      this.deps.queue.renew(claim, this.deps.clock.nowMicros(), this.options.leaseMs).catch((error: unknown) => {
        this.deps.logger.warn({ err: error, source_id: claim.sourceId }, 'ingestion lease not renewed');
      });
    }, this.options.leaseMs / 3);
    renew.unref();
    try {
      const source = await this.deps.sources.find(claim.sourceId);
      if (!source) await this.deps.queue.cancelSync(claim.chatbotId, claim.sourceId);
      else if (claim.interrupted > this.options.maxInterruptions) {
        await this.fail(source, 'ingestion was interrupted repeatedly');
      } else await this.ingest(source);
      await this.deps.queue.finish(claim, this.deps.clock.nowMicros());
    } catch (error) {
      // The lease runs out and another claim retries the source.
      this.deps.logger.error({ err: error, source_id: claim.sourceId }, 'ingestion could not record its result');
    } finally {
      clearInterval(renew);
      this.running -= 1;
      if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
      this.kick();
    }
  }

  /**
   * Ends a run: schedules the source's next sync by its refresh setting (none when off), then records
   * how this one ended, so whoever sees the record sees the next sync too.
   */
  private async ended(source: Source, record: Omit<SyncRecord, 'at'>): Promise<void> {
    const current = (await this.deps.sources.find(source.id)) ?? source;
    const now = this.deps.clock.nowMicros();
    await this.deps.queue.scheduleByRefresh(source.chatbot_id, source.id, current.refresh, now);
    await this.deps.sources.recordSync(source, record, now);
  }

  /**
   * Ingests a source, or syncs one that is `done`: only documents that changed are fetched (where
   * the service or site can say so) and re-embedded, vanished ones are pruned, and the chatbot
   * answers from the current chunks throughout. A sync that fails leaves the source `done` with its
   * chunks, the error in its sync record; a first ingestion that fails leaves no chunk behind.
   */
  private async ingest(source: Source): Promise<void> {
    const progress = (line: string) => this.deps.sources.setProgress(source, line);
    const syncing = source.status === 'done';
    const previous = syncing ? await this.deps.sources.documents(source) : new Map<string, SourceDocument>();
    try {
      const read = await this.read(source, previous, syncing, progress);
      if (!syncing) await this.deps.sources.setStatus(source.id, 'processing');
      const plan = await this.plan(source, read, previous, progress);
      // A source deleted meanwhile must not come back into retrieval.
      if (!(await this.deps.sources.find(source.id))) return;
      await this.deps.index.updateSource(source.chatbot_id, source.id, plan.upserts, plan.removals);
      if (isSyncable(source.type)) await this.deps.sources.setDocuments(source, plan.records);
      // A URL source is titled by its start page, a connector source by its folder, space or
      // document, unless the owner gave it a title.
      const title = source.title ? undefined : read.title;
      // Recorded before the status says done, so whoever sees `done` sees this sync too.
      await this.ended(source, { error: '', ...plan.counts });
      await this.deps.sources.setStatus(source.id, 'done', { pageCount: read.pageCount, error: '', title });
      await progress('');
      if (syncing) this.deps.logger.info({ source_id: source.id, ...plan.counts }, 'source synced');
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.deps.logger.warn({ source_id: source.id, reason, syncing }, syncing ? 'sync failed' : 'ingestion failed');
      // Deleted meanwhile: nothing to report. A failure to record it reaches `run`, whose lease
      // then lapses and another claim ingests the source again.
      if (!(await this.deps.sources.find(source.id))) return;
      await this.fail(source, reason);
    }
  }

  /**
   * Ends a run that failed: a source that never finished ingesting fails with no chunk of it left
   * behind; a `done` one keeps its chunks and status, the reason in its sync record. Either way the
   * next sync is scheduled (a failed site or service is tried again on the source's schedule).
   */
  private async fail(source: Source, reason: string): Promise<void> {
    if (source.status !== 'done') {
      await this.deps.index.removeSource(source.chatbot_id, source.id);
      await this.deps.sources.setDocuments(source, new Map());
    }
    await this.ended(source, { error: reason, ...NOTHING_DONE });
    if (source.status !== 'done') await this.deps.sources.setStatus(source.id, 'failed', { error: reason });
    // The progress line of the run (or of a process that died in it) ends here too.
    await this.deps.sources.setProgress(source, '');
  }

  /** The documents of a source, and SPEC's page_count (pages indexed; 0 for single documents). */
  private async read(
    source: Source,
    previous: ReadonlyMap<string, SourceDocument>,
    syncing: boolean,
    progress: (line: string) => Promise<void>,
  ): Promise<ReadSource> {
    if (!syncing) await this.deps.sources.setStatus(source.id, isSyncable(source.type) ? 'crawling' : 'processing');
    if (isConnectorType(source.type)) return this.readConnector(source, previous, progress);
    if (source.type === 'url') return this.readSite(source, previous, progress);
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
  ): Promise<ReadSource> {
    // Progress lines are written in order, and all of them before the source is done.
    const lines: Array<Promise<void>> = [];
    const result = await crawlSite(source.url, this.deps.crawl, {
      onProgress: (p) => lines.push(progress(`crawled ${p.done} of ${p.done + p.queued} pages`)),
      previous: (url) => {
        const page = previous.get(url);
        if (!page) return undefined;
        const validators = { etag: page.etag, lastModified: page.last_modified };
        return { validators, lastmod: page.change_token, links: page.links ?? [] };
      },
    });
    await Promise.all(lines);
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
      // As recorded: its hash and chunk count are carried over by `plan`.
      items.push({ id: page.url, url: page.url, record: previous.get(page.url)! });
    }
    // A page that could not be read this time, or that a crawl cut short never reached, keeps its
    // chunks; one the site says is gone (404, 410) or no longer links to is pruned.
    const cutShort = result.endedBy === 'time-limit' || result.endedBy === 'aborted';
    const passing = new Set(
      result.errors.filter((e) => e.statusCode !== 404 && e.statusCode !== 410).map((e) => e.url),
    );
    const keep = [...previous.keys()].filter((url) => cutShort || passing.has(url));
    // Titled by the start page, read first (a sync finds the source titled already).
    return { items, pageCount: kept, title: items[0]?.record.title, keep };
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
        const old = await this.deps.index.chunks.byIds(source.chatbot_id, chunkIds(item.id, before.chunks));
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
    const removals = (await this.deps.index.chunks.ids(source.chatbot_id, source.id)).filter((id) => !live.has(id));
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
    let dimensions = this.deps.index.dimensions;
    for (let i = 0; i < todo.length; i += EMBED_BATCH) {
      const texts = todo.slice(i, i + EMBED_BATCH).map(embeddingText);
      const vectors = await this.deps.embedder.embed(texts);
      if (vectors.length !== texts.length) {
        throw new Error(`the embedder returned ${vectors.length} vectors for ${texts.length} texts`);
      }
      for (const [j, vector] of vectors.entries()) {
        dimensions ??= vector.length;
        if (vector.length !== dimensions) {
          throw new Error(
            `the embedder returned a vector of ${vector.length} dimensions; the embedding space ${this.deps.embedder.space} has ${dimensions}`,
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

/** The text a chunk is embedded from. */
function embeddingText(chunk: Pick<UnembeddedChunk, 'title' | 'content'>): string {
  return chunk.title ? `${chunk.title}\n${chunk.content}` : chunk.content;
}

/** SHA-256 of a parsed document: the same hash means the same chunks. */
function contentHash(doc: ParsedDocument): string {
  return createHash('sha256').update(JSON.stringify(doc)).digest('base64url');
}

function withoutEmpty(fields: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, string] => Boolean(entry[1])));
}

/** A gateway's worker as the configuration describes it: two sources at a time. */
export function ingestionWorkerFor(deps: Omit<IngestionDeps, 'crawl'>, config: Config): IngestionWorker {
  return new IngestionWorker(
    { ...deps, crawl: { allowPrivate: config.CRAWL_ALLOW_PRIVATE, maxPages: config.CRAWL_MAX_PAGES } },
    { concurrency: 2, leaseMs: 60_000, pollMs: 1000, maxInterruptions: 2 },
  );
}
