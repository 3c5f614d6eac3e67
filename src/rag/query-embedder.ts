import { LRUCache } from 'lru-cache';
import type { Embedder } from './embedder.ts';

/** Bytes of question embeddings one process keeps (about 5,000 `local` ones, 1,300 of 1,536 dimensions). */
export const QUERY_EMBEDDINGS_BYTES = 8 * 1024 * 1024;

/** What embeds a chatbot's questions into one space (retrieval and the unanswered inbox ask it). */
export interface QuestionEmbedder {
  readonly space: string;
  embed(chatbotId: string, question: string): Promise<Float32Array>;
}

/**
 * The embeddings of the questions a gateway retrieves for, remembered by chatbot and exact text: a
 * question asked again of the same chatbot (by another visitor, or by the unanswered inbox recording
 * the turn that just retrieved for it) is not embedded again, which with a provider's embeddings is a
 * request and its cost saved. Kept per chatbot, so how fast a question is answered tells nothing of
 * what other owners' visitors asked. Concurrent requests for one question share one embedding call;
 * a failed one is not kept. An embedding space names one model, so a text's vector never changes
 * within it. The vectors are shared: callers read them and never change them. The texts live in this
 * process's memory only, until pushed out by newer ones.
 */
export class QueryEmbedder implements QuestionEmbedder {
  readonly space: string;
  private readonly cache: LRUCache<string, Float32Array, string>;

  constructor(embedder: Embedder, maxBytes = QUERY_EMBEDDINGS_BYTES) {
    this.space = embedder.space;
    this.cache = new LRUCache<string, Float32Array, string>({
      maxSize: maxBytes,
      sizeCalculation: (vector, key) => vector.byteLength + 2 * key.length + 64,
      // A question still being embedded when others push it out of the cache is answered all the same.
      ignoreFetchAbort: true,
      fetchMethod: async (_key, _stale, { context: question }) => {
        const [vector] = await embedder.embed([question]);
        if (!vector) throw new Error(`the ${embedder.space} embedder returned no vector`);
        return vector;
      },
    });
  }

  /** The embedding of one of the chatbot's questions, remembered or made now. */
  async embed(chatbotId: string, question: string): Promise<Float32Array> {
    return (await this.cache.fetch(`${chatbotId}\u0000${question}`, { context: question }))!;
  }
}
