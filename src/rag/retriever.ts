/** A passage of a chatbot's sources that answers the question, with where it came from. */
export interface RetrievedChunk {
  /** The chunk's id (what rankings are fused by). */
  id: string;
  text: string;
  title: string;
  url: string;
  /** The fused rank score (RRF): meaningful only against the other passages of the same ranking. */
  score: number;
  /** How relevant the passage is to the question, in [0, 1] (`chunkRelevance`): what a floor compares. */
  relevance: number;
}

/** The retrieval port the conversation actor calls before building a prompt. */
export interface Retriever {
  retrieve(chatbotId: string, query: string): Promise<RetrievedChunk[]>;
}
