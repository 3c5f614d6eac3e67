/** A passage of a source, as stored in Redis and indexed by both search engines. */
export interface ChunkRecord {
  /** Unique across all chatbots: `<source_id>:<position>`. */
  id: string;
  chatbotId: string;
  sourceId: string;
  /** Order of the chunk within its source. */
  position: number;
  title: string;
  url: string;
  content: string;
  /** L2-normalised embedding in the deployment's embedding space. */
  embedding: Float32Array;
}

/** A chunk before it is embedded. */
export type UnembeddedChunk = Omit<ChunkRecord, 'embedding'>;

/** The text a chunk is embedded from (at ingestion and when re-embedded into another space). */
export function embeddingText(chunk: Pick<ChunkRecord, 'title' | 'content'>): string {
  return chunk.title ? `${chunk.title}\n${chunk.content}` : chunk.content;
}
