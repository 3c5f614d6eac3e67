import type { HybridHit } from './search-engine.ts';

/**
 * What `retrieve` shows (the CLI command and the dashboard's "try a question"): the engine, and the
 * fused results in rank order with each method's rank and score and the passage itself.
 */
export function retrievalView(engine: string, hits: HybridHit[]) {
  return {
    engine,
    results: hits.map((hit, i) => ({
      rank: i + 1,
      score: hit.score,
      text: hit.text ?? null,
      vector: hit.vector ?? null,
      chunk_id: hit.chunk.id,
      source_id: hit.chunk.sourceId,
      title: hit.chunk.title,
      url: hit.chunk.url,
      content: hit.chunk.content,
    })),
  };
}
