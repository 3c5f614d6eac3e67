import type { VectorSearchMethod } from './vector-index.ts';

/** Turns texts into vectors of one embedding space. */
export interface Embedder {
  /** Names the space, e.g. `local-384` or `openai-text-embedding-3-small`; one search index per space. */
  readonly space: string;
  /** Vector length when known in advance (0: known from the first vectors; engines read it there). */
  readonly dimensions: number;
  /**
   * How the in-process engine searches this space's vectors past its exact size (default `hnsw`, for
   * dense model embeddings); `scan` for vectors whose queries weigh on few dimensions.
   */
  readonly vectorSearch?: VectorSearchMethod;
  /** One L2-normalised vector per text, in order. Implementations batch as their provider allows. */
  embed(texts: string[]): Promise<Float32Array[]>;
}
