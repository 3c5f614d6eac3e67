/**
 * The in-process `SearchEngine`, for Redis servers without the query engine: chunk records held in
 * memory per chatbot, BM25 over `title + content` (the title's words counted twice), vector search over the embeddings (vector-index.ts:
 * an HNSW graph or a column scan, as the embedding space suits), and the two top lists fused by the
 * shared Reciprocal Rank Fusion. Every chatbot has its own indexes, so a
 * query never touches, let alone returns, another chatbot's chunks.
 */

import { Bm25Index, type ScoredId } from './bm25-index.ts';
import type { ChunkRecord } from './chunk.ts';
import { reciprocalRankFusion } from './reciprocal-rank-fusion.ts';
import { chunkRelevance } from './relevance-floor.ts';
import type { EngineHit, HybridHit, HybridQuery, SearchEngine } from './search-engine.ts';
import { tokenize } from './text-tokenizer.ts';
import {
  DEFAULT_VECTOR_SEARCH,
  VectorIndex,
  type VectorIndexOptions,
  type VectorSearchMethod,
} from './vector-index.ts';

/** Options of the in-process engine; only `dimensions` is required. */
export interface InProcessSearchEngineOptions {
  /** The embedding space's dimensions; every chunk and query embedding must have them. */
  dimensions: number;
  /** How many hits each method contributes to the fusion (default 50; raised to k when k is larger). */
  candidates?: number;
  /** Method and parameters of every chatbot's vector index. */
  vectorIndex?: Omit<VectorIndexOptions, 'dimensions'>;
}

/** One chatbot's chunks and their two indexes. */
interface ChatbotIndex {
  chunks: Map<string, ChunkRecord>;
  /** Chunk ids per source, so that a source leaves every index at once. */
  sources: Map<string, Set<string>>;
  text: Bm25Index;
  vectors: VectorIndex;
}

/** Hybrid retrieval over chunks kept in this process's memory. */
export class InProcessSearchEngine implements SearchEngine {
  readonly name = 'in-process';
  readonly dimensions: number;
  readonly candidates: number;
  /** How every chatbot's vector index searches past its exact size. */
  readonly vectorSearch: VectorSearchMethod;
  readonly #vectorIndexOptions: VectorIndexOptions;
  #chatbots = new Map<string, ChatbotIndex>();
  /** The chatbot that holds each chunk id, so that an upsert moving a chunk leaves no copy behind. */
  #chatbotOfChunk = new Map<string, string>();

  constructor(options: InProcessSearchEngineOptions) {
    const { dimensions, candidates = 50, vectorIndex = {} } = options;
    if (!Number.isInteger(dimensions) || dimensions < 1) {
      throw new RangeError(`dimensions must be a positive integer, got ${dimensions}`);
    }
    if (!Number.isInteger(candidates) || candidates < 1) {
      throw new RangeError(`candidates must be a positive integer, got ${candidates}`);
    }
    this.dimensions = dimensions;
    this.candidates = candidates;
    this.#vectorIndexOptions = { ...vectorIndex, dimensions };
    this.vectorSearch = vectorIndex.method ?? DEFAULT_VECTOR_SEARCH;
  }

  /** Adds chunks, replacing any chunk with the same id; all of them or, on a bad embedding, none. */
  upsert(chunks: ChunkRecord[]): Promise<void> {
    // The work is synchronous, so a search never sees a batch half applied; a throw rejects.
    return new Promise((resolve) => {
      for (const chunk of chunks) this.#requireDimensions(chunk.embedding, `chunk ${chunk.id}`);
      for (const chunk of chunks) this.#upsertOne(chunk);
      resolve();
    });
  }

  /** Removes every chunk of a source from the chatbot's indexes. */
  removeSource(chatbotId: string, sourceId: string): Promise<void> {
    const chatbot = this.#chatbots.get(chatbotId);
    const ids = chatbot?.sources.get(sourceId);
    if (chatbot !== undefined && ids !== undefined) {
      for (const id of [...ids]) this.#removeChunk(chatbot, id);
      if (chatbot.chunks.size === 0) this.#chatbots.delete(chatbotId);
    }
    return Promise.resolve();
  }

  /** The chatbot's k best chunks by RRF over the top `candidates` of BM25 and of vector search. */
  search(query: HybridQuery): Promise<HybridHit[]> {
    return new Promise((resolve) => resolve(this.#search(query)));
  }

  /** How many chunks a chatbot has indexed. */
  size(chatbotId: string): number {
    return this.#chatbots.get(chatbotId)?.chunks.size ?? 0;
  }

  #search(query: HybridQuery): HybridHit[] {
    const { chatbotId, text, embedding, k } = query;
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
    this.#requireDimensions(embedding, 'the query embedding');
    const chatbot = this.#chatbots.get(chatbotId);
    if (chatbot === undefined) return [];
    const candidates = Math.max(this.candidates, k);
    const textHits = chatbot.text.search(tokenize(text), candidates);
    const vectorHits = chatbot.vectors.search(embedding, candidates);
    const fused = reciprocalRankFusion([textHits.map((hit) => hit.id), vectorHits.map((hit) => hit.id)]);
    return fused.slice(0, k).map((entry) => {
      const [textRank, vectorRank] = entry.ranks;
      const chunk = chatbot.chunks.get(entry.id)!;
      const hit: HybridHit = { chunk, score: entry.score, relevance: chunkRelevance(embedding, chunk) };
      if (textRank !== undefined) hit.text = engineHit(textHits, textRank);
      if (vectorRank !== undefined) hit.vector = engineHit(vectorHits, vectorRank);
      return hit;
    });
  }

  #upsertOne(chunk: ChunkRecord): void {
    const previousChatbot = this.#chatbotOfChunk.get(chunk.id);
    if (previousChatbot !== undefined) {
      const holder = this.#chatbots.get(previousChatbot)!;
      this.#removeChunk(holder, chunk.id);
      if (holder.chunks.size === 0 && previousChatbot !== chunk.chatbotId) this.#chatbots.delete(previousChatbot);
    }
    const chatbot = this.#chatbot(chunk.chatbotId);
    chatbot.chunks.set(chunk.id, chunk);
    let sourceChunks = chatbot.sources.get(chunk.sourceId);
    if (sourceChunks === undefined) {
      sourceChunks = new Set();
      chatbot.sources.set(chunk.sourceId, sourceChunks);
    }
    sourceChunks.add(chunk.id);
    chatbot.text.add(chunk.id, bm25Terms(chunk));
    chatbot.vectors.add(chunk.id, chunk.embedding);
    this.#chatbotOfChunk.set(chunk.id, chunk.chatbotId);
  }

  #removeChunk(chatbot: ChatbotIndex, id: string): void {
    const chunk = chatbot.chunks.get(id);
    if (chunk === undefined) return;
    chatbot.chunks.delete(id);
    chatbot.text.remove(id);
    chatbot.vectors.remove(id);
    const sourceChunks = chatbot.sources.get(chunk.sourceId);
    sourceChunks?.delete(id);
    if (sourceChunks?.size === 0) chatbot.sources.delete(chunk.sourceId);
    this.#chatbotOfChunk.delete(id);
  }

  #chatbot(chatbotId: string): ChatbotIndex {
    let chatbot = this.#chatbots.get(chatbotId);
    if (chatbot === undefined) {
      chatbot = {
        chunks: new Map(),
        sources: new Map(),
        text: new Bm25Index(),
        vectors: new VectorIndex(this.#vectorIndexOptions),
      };
      this.#chatbots.set(chatbotId, chatbot);
    }
    return chatbot;
  }

  #requireDimensions(embedding: Float32Array, what: string): void {
    if (embedding.length !== this.dimensions) {
      throw new RangeError(`${what} has ${embedding.length} dimensions, expected ${this.dimensions}`);
    }
  }
}

/**
 * The terms BM25 indexes for a chunk: the title's twice, as the Redis engine's schema weighs the title
 * field 2 (`createIndexArgs`), so that both engines rank alike; on the eval it lifted the company set's
 * paraphrase questions and left the Node.js set unchanged (docs/decisions.md, "Retrieval that finds
 * the answer").
 */
export function bm25Terms(chunk: Pick<ChunkRecord, 'title' | 'content'>): string[] {
  const title = tokenize(chunk.title);
  return [...title, ...title, ...tokenize(chunk.content)];
}

function engineHit(hits: ScoredId[], rank: number): EngineHit {
  return { rank, score: hits[rank - 1]!.score };
}
