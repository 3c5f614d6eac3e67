import type { Logger } from '../logger.ts';
import type { ChunkStore } from '../store/chunk-store.ts';
import type { SpaceSetting } from '../store/embedding-space-store.ts';
import type { Embedder } from './embedder.ts';
import type { HybridRetriever } from './hybrid-retriever.ts';
import type { QueryEmbedder } from './query-embedder.ts';
import type { Retrieval } from './retrieval-setup.ts';
import type { RetrievalIndex } from './retrieval-index.ts';
import type { RetrievedChunk, Retriever } from './retriever.ts';
import type { SearchEngine } from './search-engine.ts';

/** What a gateway's served retrieval needs to move to another embedding space. */
export interface ServedRetrievalDeps {
  /** Opens the retrieval of a space, its in-process engine loaded from Redis. */
  open(setting: SpaceSetting): Promise<Retrieval>;
  /** Tells the others this gateway serves `space` now. */
  serving(space: string): Promise<void>;
  logger: Logger;
}

/**
 * The retrieval of the embedding space a gateway serves, for everything that retrieves or ingests
 * (conversation turns, the ingestion worker, the dashboard, signals): when a re-embedding switches
 * the space, the new space's retrieval is opened and loaded beside the old one, and swapped in at
 * once, so no turn finds an empty index on the way.
 */
export class ServedRetrieval implements Retrieval, Retriever {
  private readonly deps: ServedRetrievalDeps;
  private current: Retrieval;
  private switching: { space: string; done: Promise<void> } | undefined;

  constructor(deps: ServedRetrievalDeps, first: Retrieval) {
    this.deps = deps;
    this.current = first;
  }

  get space(): string {
    return this.current.embedder.space;
  }
  get embedder(): Embedder {
    return this.current.embedder;
  }
  get queries(): QueryEmbedder {
    return this.current.queries;
  }
  get engine(): SearchEngine {
    return this.current.engine;
  }
  get chunks(): ChunkStore {
    return this.current.chunks;
  }
  get index(): RetrievalIndex {
    return this.current.index;
  }
  get retriever(): HybridRetriever {
    return this.current.retriever;
  }

  retrieve(chatbotId: string, query: string): Promise<RetrievedChunk[]> {
    return this.current.retriever.retrieve(chatbotId, query);
  }

  /** Serves `setting`'s space from now on (once; a second call for the same space waits for the first). */
  async serve(setting: SpaceSetting): Promise<void> {
    if (this.switching?.space === setting.space) return this.switching.done;
    if (this.switching === undefined && setting.space === this.space) return;
    const done = (async () => {
      // After a switch still under way has settled, whatever its outcome (its own caller hears of a failure).
      await Promise.allSettled([this.switching?.done]);
      const next = await this.deps.open(setting);
      const from = this.space;
      this.current = next;
      await this.deps.serving(next.embedder.space);
      this.deps.logger.info({ from, to: next.embedder.space }, 'retrieval switched to another embedding space');
    })();
    const switching = { space: setting.space, done };
    this.switching = switching;
    try {
      await done;
    } finally {
      if (this.switching === switching) this.switching = undefined;
    }
  }
}
