import type { QuestionEmbedder } from './query-embedder.ts';
import type { Retriever, RetrievedChunk } from './retriever.ts';
import type { HybridHit, SearchEngine } from './search-engine.ts';

/** Passages put into a prompt. */
export const CONTEXT_CHUNKS = 5;

/** The retriever the conversation actor calls: embed the message, hybrid search, top passages. */
export class HybridRetriever implements Retriever {
  private readonly questions: QuestionEmbedder;
  private readonly engine: Pick<SearchEngine, 'search'>;

  /** `engine`: what answers the hybrid query (a gateway's RetrievalIndex, which waits for a chatbot's load). */
  constructor(questions: QuestionEmbedder, engine: Pick<SearchEngine, 'search'>) {
    this.questions = questions;
    this.engine = engine;
  }

  async retrieve(chatbotId: string, query: string): Promise<RetrievedChunk[]> {
    const hits = await this.search(chatbotId, query, CONTEXT_CHUNKS);
    return hits.map((hit) => ({
      id: hit.chunk.id,
      text: hit.chunk.content,
      title: hit.chunk.title,
      url: hit.chunk.url,
      score: hit.score,
      relevance: hit.relevance,
    }));
  }

  /** The fused hits with each method's rank and score (the `retrieve` CLI command shows them). */
  async search(chatbotId: string, query: string, k: number): Promise<HybridHit[]> {
    const embedding = await this.questions.embed(chatbotId, query);
    return this.engine.search({ chatbotId, text: query, embedding, k });
  }
}
