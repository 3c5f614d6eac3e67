import type { Logger } from '../logger.ts';
import type { ChunkStore } from '../store/chunk-store.ts';
import type { SignalBus } from '../store/signal-bus.ts';
import type { ChunkRecord } from './chunk.ts';
import type { SearchEngine } from './search-engine.ts';

/**
 * Keeps a process's search engine in step with the chunk records in Redis: chunks are written to
 * Redis first (the record), then to the engine, then announced, so every other gateway's in-process
 * engine reloads the source; deletions go the same way. The Redis engine indexes the records
 * themselves, so for it the announcements change nothing.
 */
export class RetrievalIndex {
  readonly engine: SearchEngine;
  private readonly chunks: ChunkStore;
  private readonly signals: SignalBus;
  private readonly logger: Logger;

  constructor(engine: SearchEngine, chunks: ChunkStore, signals: SignalBus, logger: Logger) {
    this.engine = engine;
    this.chunks = chunks;
    this.signals = signals;
    this.logger = logger;
  }

  /** Loads every stored chunk into an in-process engine (a no-op for the Redis engine). */
  async load(): Promise<number> {
    if (this.engine.name !== 'in-process') return 0;
    let count = 0;
    for await (const batch of this.chunks.all()) {
      await this.engine.upsert(batch);
      count += batch.length;
    }
    this.logger.info({ chunks: count }, 'in-process search index loaded');
    return count;
  }

  /** Replaces a source's chunks everywhere. */
  async replaceSource(chatbotId: string, sourceId: string, chunks: ChunkRecord[]): Promise<void> {
    await this.chunks.removeSource(chatbotId, sourceId);
    await this.engine.removeSource(chatbotId, sourceId);
    await this.chunks.save(chunks);
    await this.engine.upsert(chunks);
    await this.announce(chatbotId, sourceId);
  }

  /** Removes a source's chunks from retrieval at once, everywhere. */
  async removeSource(chatbotId: string, sourceId: string): Promise<void> {
    await this.chunks.removeSource(chatbotId, sourceId);
    await this.engine.removeSource(chatbotId, sourceId);
    await this.announce(chatbotId, sourceId);
  }

  /** Another process changed a source: reload it from Redis. */
  async reloadSource(chatbotId: string, sourceId: string): Promise<void> {
    if (this.engine.name !== 'in-process') return;
    const chunks = await this.chunks.forSource(chatbotId, sourceId);
    await this.engine.removeSource(chatbotId, sourceId);
    await this.engine.upsert(chunks);
  }

  private announce(chatbotId: string, sourceId: string): Promise<void> {
    return this.signals.publish({ kind: 'source-chunks', chatbot_id: chatbotId, source_id: sourceId });
  }
}
