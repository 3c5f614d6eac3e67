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
import type { Source, SourceDocument, SourceStore } from '../store/source-store.ts';
import type { ConnectorReader } from '../sources/connector-reader.ts';
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

/** The documents of a source, chunk-id part, and page count as read. */
interface ReadSource {
  documents: Array<{ doc: ParsedDocument; url: string; key?: string; changeToken?: string; id?: string }>;
  pageCount: number;
  /** The title the source takes unless its owner gave one. */
  title?: string;
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
    const free = this.options.concurrency - this.running;
    if (free <= 0) return;
    const claims = await this.deps.queue.claim(free, this.deps.clock.nowMicros(), this.options.leaseMs);
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
      if (source && source.status !== 'done' && source.status !== 'failed') {
        if (claim.interrupted > this.options.maxInterruptions) {
          await this.deps.sources.setStatus(source.id, 'failed', { error: 'ingestion was interrupted repeatedly' });
        } else {
          await this.ingest(source);
        }
      }
      await this.deps.queue.finish(claim);
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

  private async ingest(source: Source): Promise<void> {
    const progress = (line: string) => this.deps.sources.setProgress(source, line);
    try {
      const { documents, pageCount, title: readTitle } = await this.read(source, progress);
      await this.deps.sources.setStatus(source.id, 'processing');
      // Pages of a crawl and documents of a connector keep their own titles; a file or text is
      // titled by its source.
      const ownTitles = source.type === 'url' || isConnectorType(source.type);
      const title = ownTitles ? undefined : source.title || undefined;
      const records = new Map<string, SourceDocument>();
      let position = 0;
      const unembedded = documents.flatMap(({ doc, url, key, id, changeToken }) => {
        const chunks = chunkDocument(doc, { chatbotId: source.chatbot_id, sourceId: source.id, url, title });
        if (id !== undefined)
          records.set(id, { title: doc.title, change_token: changeToken ?? '', chunks: chunks.length });
        // Connector chunks carry their document (`{source}:{document}:{n}`), so one can be replaced alone.
        return chunks.map((chunk, n) => ({
          ...chunk,
          id: key === undefined ? `${source.id}:${position}` : `${source.id}:${key}:${n}`,
          position: position++,
        }));
      });
      const chunks = await this.embed(unembedded, progress);
      // A source deleted meanwhile must not come back into retrieval.
      const live = await this.deps.sources.find(source.id);
      if (!live) return;
      await this.deps.index.replaceSource(source.chatbot_id, source.id, chunks);
      if (records.size > 0) await this.deps.sources.setDocuments(source, records);
      // A URL source is titled by its start page, a connector source by its folder, space or
      // document, unless the owner gave it a title.
      const pageTitle = source.title
        ? undefined
        : (readTitle ?? (source.type === 'url' ? documents[0]?.doc.title : undefined));
      await this.deps.sources.setStatus(source.id, 'done', { pageCount, error: '', title: pageTitle });
      await progress('');
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.deps.logger.warn({ source_id: source.id, reason }, 'ingestion failed');
      // Deleted meanwhile: nothing to report. A failure to record it reaches `run`, whose lease
      // then lapses and another claim ingests the source again.
      if (!(await this.deps.sources.find(source.id))) return;
      await this.deps.sources.setStatus(source.id, 'failed', { error: reason });
      await progress('');
    }
  }

  /** The documents of a source, and SPEC's page_count (pages indexed; 0 for single documents). */
  private async read(source: Source, progress: (line: string) => Promise<void>): Promise<ReadSource> {
    if (isConnectorType(source.type)) return this.readConnector(source, progress);
    if (source.type === 'url') {
      await this.deps.sources.setStatus(source.id, 'crawling');
      const result = await crawlSite(source.url, this.deps.crawl, {
        onProgress: (p) => void progress(`crawled ${p.done} of ${p.done + p.queued} pages`),
      });
      if (result.pages.length === 0) {
        throw new Error(
          result.errors[0] ? `no page could be read: ${result.errors[0].message}` : 'no page could be read',
        );
      }
      return {
        documents: result.pages.map((page) => ({ doc: page.document, url: page.url })),
        pageCount: result.pages.length,
      };
    }
    await this.deps.sources.setStatus(source.id, 'processing');
    const bytes = (await this.deps.sources.content(source)) ?? Buffer.alloc(0);
    if (source.type === 'text') {
      const doc = await parseDocument({ filename: 'text.txt', bytes });
      return { documents: [{ doc, url: '' }], pageCount: 0 };
    }
    const doc = await parseDocument({ filename: source.title || 'file', bytes });
    const multiPage = /\.(pdf|pptx)$/i.test(source.title);
    return { documents: [{ doc, url: source.url }], pageCount: multiPage ? doc.pages.length : 0 };
  }

  private async readConnector(source: Source, progress: (line: string) => Promise<void>): Promise<ReadSource> {
    await this.deps.sources.setStatus(source.id, 'crawling');
    const read = await this.deps.connectors.read(source, progress);
    const only = read.documents[0]!;
    // SPEC's page_count: documents indexed for a collection; pages or slides of a single paged file.
    const pageCount = read.single ? (only.paged ? only.parsed.pages.length : 0) : read.documents.length;
    return {
      title: read.title,
      pageCount,
      documents: read.documents.map(({ key, document, parsed }) => ({
        doc: parsed,
        url: document.url,
        key,
        id: document.id,
        changeToken: document.changeToken,
      })),
    };
  }

  private async embed(chunks: UnembeddedChunk[], progress: (line: string) => Promise<void>): Promise<ChunkRecord[]> {
    const out: ChunkRecord[] = [];
    for (let i = 0; i < chunks.length; i += EMBED_BATCH) {
      const batch = chunks.slice(i, i + EMBED_BATCH);
      const vectors = await this.deps.embedder.embed(
        batch.map((c) => (c.title ? `${c.title}\n${c.content}` : c.content)),
      );
      batch.forEach((chunk, j) => out.push({ ...chunk, embedding: vectors[j]! }));
      await progress(`embedded ${Math.min(i + EMBED_BATCH, chunks.length)} of ${chunks.length} chunks`);
    }
    return out;
  }
}

/** A gateway's worker as the configuration describes it: two sources at a time. */
export function ingestionWorkerFor(deps: Omit<IngestionDeps, 'crawl'>, config: Config): IngestionWorker {
  return new IngestionWorker(
    { ...deps, crawl: { allowPrivate: config.CRAWL_ALLOW_PRIVATE } },
    { concurrency: 2, leaseMs: 60_000, pollMs: 1000, maxInterruptions: 2 },
  );
}
