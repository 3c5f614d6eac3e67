import { ChunkStore } from '../store/chunk-store.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { embeddingText, type ChunkRecord } from './chunk.ts';
import type { Embedder } from './embedder.ts';
import { dropSearchIndex } from './redis-search-engine.ts';

/** The target embedder returned vectors of another length than its space's: never stored, never retried. */
export class MixedDimensionsError extends Error {
  override name = 'MixedDimensionsError';
}

/** What copying a space did: chunks gone through, chunks embedded (the others had their copy), seconds. */
export interface SpaceCopy {
  done: number;
  embedded: number;
  seconds: number;
}

/**
 * Copies every chunk of one embedding space into another, re-embedded, `batch` chunks at a time.
 * A chunk whose copy has the same embedding text and the space's length is not embedded again (a copy
 * resumed after a stop); vectors of another length are refused before anything of their batch is
 * written. After each batch `onBatch` hears how many chunks are done (it throws to stop the copy).
 * Copies whose original vanished meanwhile (a source removed) are dropped at the end.
 */
export async function copySpace(copy: {
  from: ChunkStore;
  to: ChunkStore;
  embedder: Embedder;
  dimensions: number;
  batch: number;
  onBatch(done: number): Promise<void>;
}): Promise<SpaceCopy> {
  const started = performance.now();
  let done = 0;
  let embedded = 0;
  for await (const batch of copy.from.all(copy.batch)) {
    embedded += await copyBatch(batch, copy.to, copy.embedder, copy.dimensions);
    done += batch.length;
    await copy.onBatch(done);
  }
  const seconds = (performance.now() - started) / 1000;
  for await (const batch of copy.to.all(copy.batch)) {
    const originals = await copy.from.byKeys(batch.map((chunk) => copy.from.keyOf(chunk)));
    await copy.to.discard(batch.filter((_, i) => originals[i] === undefined));
  }
  return { done, embedded, seconds };
}

/** Deletes every chunk of a space and its search index, if any; returns how many chunks there were. */
export async function dropSpace(deps: { redis: RedisClient; keys: RedisKeys }, space: string): Promise<number> {
  const dropped = await new ChunkStore(deps.redis, deps.keys, space).drop();
  await dropSearchIndex(deps.redis, deps.keys.searchIndex(space));
  return dropped;
}

/** Writes the batch's chunks into the new space, embedding only those not copied already; returns how many were embedded. */
async function copyBatch(batch: ChunkRecord[], copies: ChunkStore, embedder: Embedder, dimensions: number) {
  const existing = await copies.byKeys(batch.map((chunk) => copies.keyOf(chunk)));
  const stale = batch.filter((chunk, i) => {
    const copy = existing[i];
    return copy === undefined || embeddingText(copy) !== embeddingText(chunk) || copy.embedding.length !== dimensions;
  });
  if (stale.length === 0) return 0;
  const vectors = await embedder.embed(stale.map(embeddingText));
  for (const vector of vectors) {
    if (vector.length !== dimensions) {
      throw new MixedDimensionsError(
        `the embedder returned a vector of ${vector.length} dimensions; the embedding space ${embedder.space} has ${dimensions}`,
      );
    }
  }
  await copies.copy(stale.map((chunk, i) => ({ ...chunk, embedding: vectors[i]! })));
  return stale.length;
}
