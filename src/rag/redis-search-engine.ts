import type { FtHybridOptions } from '@redis/search/dist/lib/commands/HYBRID.js';
import type { FtSearchOptions } from '@redis/search/dist/lib/commands/SEARCH.js';
import type { ChunkStore } from '../store/chunk-store.ts';
import { float32Bytes } from '../store/chunk-store.ts';
import type { RedisClient } from '../store/redis-client.ts';
import type { ChunkRecord } from './chunk.ts';
import { reciprocalRankFusion, RRF_K } from './reciprocal-rank-fusion.ts';
import type { HybridHit, HybridQuery, SearchEngine } from './search-engine.ts';

/** Candidates each method contributes before fusion. */
export const CANDIDATES = 50;

/** Escapes a TAG value (a UUID's dashes, among others) for the query syntax. */
export function escapeTag(value: string): string {
  return value.replace(/[^A-Za-z0-9_]/g, (c) => `\\${c}`);
}

/** The chatbot filter every query carries: a chatbot only ever retrieves its own chunks. */
export function chatbotFilter(chatbotId: string): string {
  return `@chatbot_id:{${escapeTag(chatbotId)}}`;
}

/**
 * The full-text part: the query's words OR-ed over title and content; Redis stems them itself. Only
 * runs of letters and digits are kept, so no query-syntax character reaches Redis.
 */
export function textQuery(chatbotId: string, text: string): string {
  const terms = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 64);
  const match = terms.length > 0 ? ` @title|content:(${terms.join('|')})` : '';
  return `${chatbotFilter(chatbotId)}${match}`;
}

/** FT.CREATE arguments for the chunk hashes of one embedding space. */
export function createIndexArgs(index: string, prefix: string, dimensions: number): string[] {
  return [
    'FT.CREATE', index, 'ON', 'HASH', 'PREFIX', '1', prefix,
    'SCHEMA',
    'chatbot_id', 'TAG',
    'source_id', 'TAG',
    'title', 'TEXT', 'WEIGHT', '2',
    'content', 'TEXT',
    'embedding', 'VECTOR', 'HNSW', '6', 'TYPE', 'FLOAT32', 'DIM', String(dimensions), 'DISTANCE_METRIC', 'COSINE',
  ]; // prettier-ignore
}

/** FT.HYBRID options (Redis ≥ 8.4): BM25STD text search and KNN vector search fused by RRF in Redis. */
export function hybridOptions(query: HybridQuery): FtHybridOptions {
  return {
    SEARCH: { query: textQuery(query.chatbotId, query.text), SCORER: 'BM25STD', YIELD_SCORE_AS: 'text_score' },
    VSIM: {
      field: '@embedding',
      vector: '$vector',
      method: { type: 'KNN', K: CANDIDATES },
      FILTER: chatbotFilter(query.chatbotId),
      YIELD_SCORE_AS: 'vector_score',
    },
    COMBINE: { method: { type: 'RRF', WINDOW: CANDIDATES, CONSTANT: RRF_K }, YIELD_SCORE_AS: 'score' },
    LOAD: ['@__key', '@text_score', '@vector_score', '@score'],
    LIMIT: { offset: 0, count: query.k },
    PARAMS: { vector: float32Bytes(query.embedding) },
  };
}

/** FT.SEARCH for the vector half on servers without FT.HYBRID: KNN within the chatbot's chunks. */
export function knnSearch(query: HybridQuery): { query: string; options: FtSearchOptions } {
  return {
    query: `(${chatbotFilter(query.chatbotId)})=>[KNN ${CANDIDATES} @embedding $vector AS vector_distance]`,
    options: {
      PARAMS: { vector: float32Bytes(query.embedding) },
      SORTBY: { BY: 'vector_distance', DIRECTION: 'ASC' },
      RETURN: ['vector_distance'],
      LIMIT: { from: 0, size: CANDIDATES },
      DIALECT: 2,
    },
  };
}

/** FT.SEARCH for the text half on servers without FT.HYBRID: BM25STD-scored. */
export function textSearch(query: HybridQuery): { query: string; options: FtSearchOptions } {
  return {
    query: textQuery(query.chatbotId, query.text),
    options: { SCORER: 'BM25STD', WITHSCORES: true, RETURN: [], LIMIT: { from: 0, size: CANDIDATES }, DIALECT: 2 },
  };
}

/**
 * The production retrieval path: Redis's query engine over the chunk hashes (HNSW vector field and
 * BM25STD full text), with FT.HYBRID's RRF on servers ≥ 8.4 and two queries fused in code before.
 */
export class RedisSearchEngine implements SearchEngine {
  readonly name = 'redis' as const;
  private readonly redis: RedisClient;
  private readonly chunks: ChunkStore;
  private readonly index: string;
  private readonly hybrid: boolean;
  private ready = false;

  constructor(redis: RedisClient, chunks: ChunkStore, index: string, options: { hybrid: boolean }) {
    this.redis = redis;
    this.chunks = chunks;
    this.index = index;
    this.hybrid = options.hybrid;
  }

  /** The chunk hashes are the index's documents: once saved they are indexed; this makes sure the index exists. */
  async upsert(chunks: ChunkRecord[]): Promise<void> {
    if (chunks.length === 0) return;
    await this.ensureIndex(chunks[0]!.embedding.length);
  }

  /** Deleting the chunk hashes (ChunkStore.removeSource) removes them from the index. */
  async removeSource(): Promise<void> {}

  async search(query: HybridQuery): Promise<HybridHit[]> {
    if (!(await this.indexExists())) return [];
    return this.hybrid ? this.searchHybrid(query) : this.searchFused(query);
  }

  private async searchHybrid(query: HybridQuery): Promise<HybridHit[]> {
    const reply = await this.redis.ft.hybrid(this.index, hybridOptions(query));
    const rows = reply.results as Array<Record<string, unknown>>;
    const keys = rows.map((row) => String(row.__key));
    const records = await this.chunks.byKeys(keys);
    const rankBy = (field: string) => {
      const order = [...rows].filter((r) => r[field] !== undefined).sort((a, b) => Number(b[field]) - Number(a[field]));
      return (row: Record<string, unknown>) =>
        row[field] === undefined ? undefined : { rank: order.indexOf(row) + 1, score: Number(row[field]) };
    };
    const textRank = rankBy('text_score');
    const vectorRank = rankBy('vector_score');
    return rows.flatMap((row, i) => {
      const chunk = records[i];
      if (!chunk) return [];
      const hit: HybridHit = { chunk, score: Number(row.score) };
      const text = textRank(row);
      const vector = vectorRank(row);
      if (text) hit.text = text;
      if (vector) hit.vector = vector;
      return [hit];
    });
  }

  private async searchFused(query: HybridQuery): Promise<HybridHit[]> {
    const knn = knnSearch(query);
    const text = textSearch(query);
    const [vectorReply, textReply] = await Promise.all([
      this.redis.ft.search(this.index, knn.query, knn.options),
      this.redis.ft.search(this.index, text.query, text.options),
    ]);
    const vectorIds = vectorReply.documents.map((d) => d.id);
    const textIds = textReply.documents.map((d) => d.id);
    const fused = reciprocalRankFusion([textIds, vectorIds]).slice(0, query.k);
    const records = await this.chunks.byKeys(fused.map((f) => f.id));
    return fused.flatMap((entry, i) => {
      const chunk = records[i];
      if (!chunk) return [];
      const hit: HybridHit = { chunk, score: entry.score };
      const [textRank, vectorRank] = entry.ranks;
      if (textRank) hit.text = { rank: textRank, score: Number(textReply.documents[textRank - 1]!.score ?? 0) };
      if (vectorRank) {
        const distance = Number(vectorReply.documents[vectorRank - 1]!.value.vector_distance);
        hit.vector = { rank: vectorRank, score: 1 - distance };
      }
      return [hit];
    });
  }

  private async indexExists(): Promise<boolean> {
    if (this.ready) return true;
    const indexes = await this.redis.ft._list();
    this.ready = indexes.map(String).includes(this.index);
    return this.ready;
  }

  private async ensureIndex(dimensions: number): Promise<void> {
    if (await this.indexExists()) return;
    await createSearchIndex(this.redis, this.index, this.chunks.prefix, dimensions);
    this.ready = true;
  }
}

/** Creates a space's search index unless it exists (another process may create it at the same time). */
export async function createSearchIndex(
  redis: RedisClient,
  index: string,
  prefix: string,
  dimensions: number,
): Promise<void> {
  try {
    await redis.sendCommand(createIndexArgs(index, prefix, dimensions));
  } catch (error) {
    if (!(error instanceof Error) || !/already exists/i.test(error.message)) throw error;
  }
}

/** Drops a space's search index, if there is one; its chunk hashes are left to the caller. */
export async function dropSearchIndex(redis: RedisClient, index: string): Promise<void> {
  try {
    await redis.sendCommand(['FT.DROPINDEX', index]);
  } catch (error) {
    // No query engine on this server, or no index of that space: nothing to drop.
    if (!(error instanceof Error) || !/unknown (index|command)|no such index/i.test(error.message)) throw error;
  }
}
