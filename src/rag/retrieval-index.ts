import type { Logger } from '../logger.ts';
import type { ChunkStore } from '../store/chunk-store.ts';
import type { SignalBus } from '../redis/signal-bus.ts';
import { ChatbotLoads, type ChatbotLoadsOptions, type LoadProgress } from './chatbot-loads.ts';
import type { ChunkRecord } from './chunk.ts';
import type { HybridHit, HybridQuery, SearchEngine } from './search-engine.ts';

/**
 * Keeps a process's search engine in step with the chunk records in Redis: chunks are written to
 * Redis first (the record), then to the engine, then announced, so every other gateway's in-process
 * engine reloads the source; deletions go the same way. The Redis engine indexes the records
 * themselves, so for it the announcements change nothing.
 *
 * The in-process engine loads in the background (`load`); until a chatbot is loaded, a search for
 * it loads it first, and every change to it waits its turn behind its load (chatbot-loads.ts).
 */
export class RetrievalIndex {
  readonly engine: SearchEngine;
  /** The chunk records this index keeps the engine in step with. */
  readonly chunks: ChunkStore;
  private readonly signals: SignalBus;
  private readonly logger: Logger;
  /** The in-process engine's load, chatbot by chatbot (undefined for the Redis engine). */
  private readonly loads: ChatbotLoads | undefined;

  constructor(
    engine: SearchEngine,
    chunks: ChunkStore,
    signals: SignalBus,
    logger: Logger,
    loading: ChatbotLoadsOptions = {},
  ) {
    this.engine = engine;
    this.chunks = chunks;
    this.signals = signals;
    this.logger = logger;
    this.loads =
      engine.name === 'in-process'
        ? new ChatbotLoads(
            { engine, chunks, usable: (batch, onBad) => this.usable(batch, onBad) },
            {
              onListingFailed: (error, attempt) =>
                logger.warn({ err: error, attempt }, 'search index: listing the chunks failed; trying again'),
              ...loading,
            },
          )
        : undefined;
  }

  /**
   * Loads every stored chunk into an in-process engine (a no-op for the Redis engine), chatbot by
   * chatbot, yielding to the event loop between batches: searches and changes are served meanwhile
   * (see `search`). Resolves when everything listed at its start is loaded. A chunk whose embedding
   * does not have the space's dimensions is skipped and logged, and its source handed to
   * `onBadSource` once (the gateway marks it failed): one bad record never stops a gateway starting.
   */
  async load(onBadSource: (chatbotId: string, sourceId: string, reason: string) => Promise<void>): Promise<number> {
    if (this.loads === undefined) return 0;
    const { chunks, bad, stopped } = await this.loads.loadAll();
    if (stopped) return chunks;
    for (const { chatbotId, sourceId, reason } of bad) await onBadSource(chatbotId, sourceId, reason);
    this.logger.info({ chunks, skipped_sources: bad.length }, 'in-process search index loaded');
    return chunks;
  }

  /** Ends `load` early (the gateway is stopping). */
  stopLoading(): void {
    this.loads?.stop();
  }

  /** How far the in-process engine has loaded (done at once for the Redis engine, which loads nothing). */
  get progress(): LoadProgress {
    return this.loads?.progress ?? { loaded: 0, total: 0, done: true };
  }

  /**
   * The engine's answer, once the chatbot is searchable: a chatbot the background load has not reached
   * yet is loaded first (concurrent searches of it share the load), so it is never answered from a
   * part of its chunks, nor found empty.
   */
  async search(query: HybridQuery): Promise<HybridHit[]> {
    await this.loads?.ready(query.chatbotId);
    return this.engine.search(query);
  }

  /**
   * The vector length of this space, when known before any vector is stored (the in-process engine's,
   * or the embedder's own); the Redis engine's index takes it from the first chunks.
   */
  get dimensions(): number | undefined {
    return 'dimensions' in this.engine && typeof this.engine.dimensions === 'number'
      ? this.engine.dimensions
      : undefined;
  }

  /**
   * Brings a source's chunks to a new state in place: `upserts` written (replacing chunks with the
   * same ids), `removals` deleted. Chunks not named stay as they are, so retrieval answers from the
   * source throughout.
   */
  async updateSource(chatbotId: string, sourceId: string, upserts: ChunkRecord[], removals: string[]): Promise<void> {
    if (upserts.length === 0 && removals.length === 0) return;
    await this.chunks.save(upserts);
    await this.chunks.remove(chatbotId, sourceId, removals);
    if (this.engine.name === 'in-process') await this.reloadSource(chatbotId, sourceId);
    else await this.engine.upsert(upserts);
    await this.announce(chatbotId, sourceId);
  }

  /** Replaces a source's chunks everywhere. */
  async replaceSource(chatbotId: string, sourceId: string, chunks: ChunkRecord[]): Promise<void> {
    const kept = new Set(chunks.map((chunk) => chunk.id));
    const stale = (await this.chunks.ids(chatbotId, sourceId)).filter((id) => !kept.has(id));
    await this.updateSource(chatbotId, sourceId, chunks, stale);
  }

  /** Removes a source's chunks from retrieval at once, everywhere. */
  async removeSource(chatbotId: string, sourceId: string): Promise<void> {
    await this.chunks.removeSource(chatbotId, sourceId);
    if (this.loads === undefined) await this.engine.removeSource(chatbotId, sourceId);
    else await this.loads.change(chatbotId, () => this.engine.removeSource(chatbotId, sourceId));
    await this.announce(chatbotId, sourceId);
  }

  /**
   * Another process changed a source: reload it from Redis (a chunk of the wrong size skipped, as by
   * `load`), after the chatbot's load if that is under way, from a read made then.
   */
  async reloadSource(chatbotId: string, sourceId: string): Promise<void> {
    if (this.loads === undefined) return;
    await this.loads.change(chatbotId, async () => {
      const chunks = this.usable(await this.chunks.forSource(chatbotId, sourceId), () => {});
      await this.engine.removeSource(chatbotId, sourceId);
      await this.engine.upsert(chunks);
    });
  }

  /** The chunks whose embeddings have the space's dimensions; each other one logged and handed to `onBad`. */
  private usable(chunks: ChunkRecord[], onBad: (chunk: ChunkRecord, reason: string) => void): ChunkRecord[] {
    const dimensions = this.dimensions!;
    return chunks.filter((chunk) => {
      if (chunk.embedding.length === dimensions) return true;
      const reason = `a stored chunk has ${chunk.embedding.length} dimensions, expected ${dimensions}; sync the source again`;
      this.logger.error({ chunk_id: chunk.id, chatbot_id: chunk.chatbotId, reason }, 'stored chunk skipped');
      onBad(chunk, reason);
      return false;
    });
  }

  private announce(chatbotId: string, sourceId: string): Promise<void> {
    return this.signals.publish({ kind: 'source-chunks', chatbot_id: chatbotId, source_id: sourceId });
  }
}
