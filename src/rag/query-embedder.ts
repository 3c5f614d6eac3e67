import { LRUCache } from 'lru-cache';
import type { Embedder } from './embedder.ts';

/** Bytes of question embeddings one process keeps (about 5,000 `local` ones, 680 of 1,536 dimensions). */
export const QUERY_EMBEDDINGS_BYTES = 8 * 1024 * 1024;

/**
 * The embeddings of the questions a gateway retrieves for, remembered by their exact text: a
 * question asked again (by another visitor, or by the unanswered inbox recording the turn that just
 * retrieved for it) is not embedded again, which with a provider's embeddings is a request and its
 * cost saved. Concurrent requests for one text share one embedding call; a failed one is not kept.
 * An embedding space names one model, so a text's vector never changes within it. The vectors are
 * shared: callers read them and never change them.
 */
export class QueryEmbedder implements Embedder {
  readonly space: string;
  readonly dimensions: number;
  private readonly cache: LRUCache<string, Float32Array>;

  constructor(embedder: Embedder, maxBytes = QUERY_EMBEDDINGS_BYTES) {
    this.space = embedder.space;
    this.dimensions = embedder.dimensions;
    this.cache = new LRUCache<string, Float32Array>({
      maxSize: maxBytes,
      sizeCalculation: (vector, text) => vector.byteLength + 2 * text.length + 64,
      // A question still being embedded when others push it out of the cache is answered all the same.
      ignoreFetchAbort: true,
      fetchMethod: async (text) => {
        const [vector] = await embedder.embed([text]);
        if (!vector) throw new Error(`the ${embedder.space} embedder returned no vector`);
        return vector;
      },
    });
  }

  /** One vector per question, each from the cache or embedded alone. */
  embed(texts: string[]): Promise<Float32Array[]> {
    return Promise.all(texts.map(async (text) => (await this.cache.fetch(text))!));
  }
}
