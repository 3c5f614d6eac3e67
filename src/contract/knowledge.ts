/**
 * What a chatbot finds for a question, and the embedding space it finds it in. Part of the contract
 * (see README.md beside this file).
 */

/** What one search method (BM25 text or vector) said of a passage. */
export interface MethodHit {
  rank: number;
  score: number;
}

/**
 * `GET /dashboard/api/chatbots/{id}/retrieve` (and the CLI's `retrieve`): the engine, and the fused
 * passages in rank order with each method's rank and score (null when the method did not return it).
 */
export interface RetrievedPassages {
  engine: string;
  results: Array<{
    rank: number;
    score: number;
    text: MethodHit | null;
    vector: MethodHit | null;
    chunk_id: string;
    source_id: string;
    title: string;
    url: string;
    content: string;
  }>;
}

/** Where a re-embedding into another space stands. */
export type MigrationPhase = 'copying' | 'switched' | 'done' | 'failed';

/**
 * `GET /dashboard/api/knowledge` (and `switchboard status`): the embedding space the chatbots answer
 * from, and the last re-embedding into another one, if any.
 */
export interface KnowledgeStatus {
  space: string | null;
  embeddings: string | null;
  migration: {
    from: string;
    to: string;
    embeddings: string;
    phase: MigrationPhase;
    done: number;
    total: number;
    started_at: string;
    updated_at: string;
    error: string | null;
  } | null;
}
