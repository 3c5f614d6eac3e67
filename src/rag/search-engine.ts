import type { ChunkRecord } from './chunk.ts';

/** One engine's view of a hit: its 1-based rank and its own score. */
export interface EngineHit {
  rank: number;
  score: number;
}

/** A fused result with what each method said of it (absent when the method did not return it). */
export interface HybridHit {
  chunk: ChunkRecord;
  /** The Reciprocal Rank Fusion score: where the chunk ranked, not how well it matches. */
  score: number;
  /** How relevant the chunk is to the query, in [0, 1], the same whichever engine found it (`chunkRelevance`). */
  relevance: number;
  text?: EngineHit;
  vector?: EngineHit;
}

/** A hybrid query: the text for BM25 and its embedding for vector search. */
export interface HybridQuery {
  chatbotId: string;
  text: string;
  embedding: Float32Array;
  /** How many fused hits to return. */
  k: number;
}

/**
 * The retrieval port: keeps chunks searchable and answers hybrid queries (BM25 + vector, fused by
 * Reciprocal Rank Fusion). A chatbot only ever retrieves its own chunks.
 */
export interface SearchEngine {
  readonly name: 'redis' | 'in-process';
  /** Adds or replaces chunks. */
  upsert(chunks: ChunkRecord[]): Promise<void>;
  /** Removes every chunk of a source. */
  removeSource(chatbotId: string, sourceId: string): Promise<void>;
  search(query: HybridQuery): Promise<HybridHit[]>;
}
