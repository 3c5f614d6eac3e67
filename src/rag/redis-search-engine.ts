import type { FtSearchOptions } from '@redis/search/dist/lib/commands/SEARCH.js';
import type { ChunkStore } from '../store/chunk-store.ts';
import { float32Bytes } from '../store/chunk-store.ts';
import { sendRawCommand, type RedisClient } from '../redis/redis-client.ts';
import { isUuid } from '../uuid.ts';
import type { ChunkRecord } from './chunk.ts';
import { reciprocalRankFusion, type FusedEntry } from './reciprocal-rank-fusion.ts';
import { chunkRelevance } from './relevance-floor.ts';
import type { HybridHit, HybridQuery, SearchEngine } from './search-engine.ts';

/** Candidates each method contributes before fusion. */
export const CANDIDATES = 50;

/** Escapes a TAG value (a UUID's dashes, among others) for the query syntax. */
export function escapeTag(value: string): string {
  return value.replace(/[^A-Za-z0-9_]/g, (c) => `\\${c}`);
}

/** The chatbot filter of the vector query: a chatbot only ever retrieves its own chunks. */
export function chatbotFilter(chatbotId: string): string {
  return `@chatbot_id:{${escapeTag(chatbotId)}}`;
}

/** The query's words: runs of letters and digits, lowercased, each once, at most 64. */
export function textTerms(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 64);
}

/**
 * The full-text match: the query's words OR-ed over title and content (Redis stems them itself), or
 * undefined for a query with no words. Only letters and digits reach Redis, so no query syntax does.
 */
export function textQuery(text: string): string | undefined {
  const terms = textTerms(text);
  return terms.length > 0 ? `@title|content:(${terms.join('|')})` : undefined;
}

/**
 * FT.AGGREGATE arguments for the text half: the words scored by BM25STD over the whole index, the
 * chatbot's rows kept by FILTER, the best CANDIDATES by score. Intersecting the words with the
 * `@chatbot_id` TAG in the query instead makes RediSearch (2.10) score each chunk by its first matching
 * word only (docs/decisions.md, "Redis text ranking"). Undefined when the query has no words: the
 * vector half alone answers it, rather than a text half that matches everything.
 */
export function textAggregateArgs(index: string, query: HybridQuery): string[] | undefined {
  // The id goes into a FILTER expression between quotes: it is checked, not escaped.
  if (!isUuid(query.chatbotId)) {
    throw new RangeError(`chatbot id must be a UUID, got ${JSON.stringify(query.chatbotId)}`);
  }
  const match = textQuery(query.text);
  if (match === undefined) return undefined;
  return [
    'FT.AGGREGATE', index, match,
    'ADDSCORES', 'SCORER', 'BM25STD',
    'LOAD', '2', '@__key', '@chatbot_id',
    'FILTER', `@chatbot_id=='${query.chatbotId}'`,
    'SORTBY', '2', '@__score', 'DESC',
    'LIMIT', '0', String(CANDIDATES),
    'DIALECT', '2',
  ]; // prettier-ignore
}

/** One row of the text aggregate: a chunk hash's key and its BM25STD score. */
export interface TextRow {
  key: string;
  score: number;
}

/**
 * Reads the text aggregate's reply in either protocol: RESP3's map, whose `results` rows carry the
 * loaded fields and `__score` in `extra_attributes`, or RESP2's `[total, [field, value, …], …]`.
 */
export function parseTextAggregateReply(reply: unknown): TextRow[] {
  const rows = Array.isArray(reply) ? reply.slice(1) : fieldsOf(reply).get('results');
  if (!Array.isArray(rows)) throw new Error(`unexpected FT.AGGREGATE reply: ${JSON.stringify(reply)}`);
  return rows.flatMap((row: unknown) => {
    const fields = fieldsOf(Array.isArray(row) ? row : fieldsOf(row).get('extra_attributes'));
    const key = textOf(fields.get('__key'));
    const score = textOf(fields.get('__score'));
    return key === undefined || score === undefined ? [] : [{ key, score: Number(score) }];
  });
}

/** A reply value as text: a string, or the bytes of a blob string, or a RESP3 number. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString();
  return typeof value === 'number' ? String(value) : undefined;
}

/** A RESP map as the client decodes it (a plain object, a Map, or a flat array of pairs). */
function fieldsOf(value: unknown): Map<string, unknown> {
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [textOf(k) ?? '', v]));
  if (Array.isArray(value)) {
    const fields = new Map<string, unknown>();
    for (let i = 0; i + 1 < value.length; i += 2) fields.set(textOf(value[i]) ?? '', value[i + 1]);
    return fields;
  }
  if (typeof value === 'object' && value !== null) return new Map(Object.entries(value));
  return new Map();
}

/** One row of the KNN search: a chunk hash's key and its COSINE distance (1 − cosine similarity). */
export interface VectorRow {
  key: string;
  distance: number;
}

/** Reads the KNN FT.SEARCH reply as the client decodes it (`documents[].value.vector_distance`). */
export function parseKnnReply(reply: {
  documents: ReadonlyArray<{ id: string; value: Record<string, unknown> }>;
}): VectorRow[] {
  return reply.documents.map((document) => ({
    key: document.id,
    distance: Number(textOf(document.value.vector_distance)),
  }));
}

/**
 * The fused hits from both halves' rows, the fused entries kept and the chunk hashes read for them
 * (aligned with `fused`; a chunk deleted in between is left out). Each hit's relevance comes from
 * the query embedding and the chunk's stored one (`chunkRelevance`), as in the in-process engine,
 * also for a chunk the KNN half did not return.
 */
export function hybridHits(
  query: Pick<HybridQuery, 'embedding'>,
  halves: {
    textRows: readonly TextRow[];
    vectorRows: readonly VectorRow[];
    fused: readonly FusedEntry[];
    records: ReadonlyArray<ChunkRecord | undefined>;
  },
): HybridHit[] {
  const { textRows, vectorRows, fused, records } = halves;
  return fused.flatMap((entry, i) => {
    const chunk = records[i];
    if (!chunk) return [];
    const hit: HybridHit = { chunk, score: entry.score, relevance: chunkRelevance(query.embedding, chunk) };
    const [textRank, vectorRank] = entry.ranks;
    if (textRank) hit.text = { rank: textRank, score: textRows[textRank - 1]!.score };
    if (vectorRank) hit.vector = { rank: vectorRank, score: 1 - vectorRows[vectorRank - 1]!.distance };
    return [hit];
  });
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

/** FT.SEARCH for the vector half: KNN within the chatbot's chunks (the TAG is a pre-filter of the KNN). */
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

/**
 * The production retrieval path: Redis's query engine over the chunk hashes (HNSW vector field and
 * BM25STD full text). On every server the text aggregate and the KNN search run as two commands fused
 * here by `reciprocalRankFusion`, the in-process engine's fusion. Not FT.HYBRID (8.4+): its SEARCH
 * clause can restrict the text half to a chatbot only inside the query string (the TAG-and-words form
 * that ranks by one word), and its FILTER applies after COMBINE, when the text window has been filled
 * from every chatbot's chunks.
 */
export class RedisSearchEngine implements SearchEngine {
  readonly name = 'redis' as const;
  private readonly redis: RedisClient;
  private readonly chunks: ChunkStore;
  private readonly index: string;
  private ready = false;

  constructor(redis: RedisClient, chunks: ChunkStore, index: string) {
    this.redis = redis;
    this.chunks = chunks;
    this.index = index;
  }

  /** The chunk hashes are the index's documents: once saved they are indexed; this makes sure the index exists. */
  async upsert(chunks: ChunkRecord[]): Promise<void> {
    if (chunks.length === 0) return;
    await this.ensureIndex(chunks[0]!.embedding.length);
  }

  /** Deleting the chunk hashes (ChunkStore.removeSource) removes them from the index. */
  async removeSource(): Promise<void> {}

  async search(query: HybridQuery): Promise<HybridHit[]> {
    const textArgs = textAggregateArgs(this.index, query);
    if (!(await this.indexExists())) return [];
    const knn = knnSearch(query);
    const [vectorReply, textRows] = await Promise.all([
      this.redis.ft.search(this.index, knn.query, knn.options),
      textArgs ? sendRawCommand(this.redis, textArgs).then(parseTextAggregateReply) : [],
    ]);
    const vectorRows = parseKnnReply(vectorReply);
    const fused = reciprocalRankFusion([textRows.map((row) => row.key), vectorRows.map((row) => row.key)]);
    const top = fused.slice(0, query.k);
    const records = await this.chunks.byKeys(top.map((entry) => entry.id));
    return hybridHits(query, { textRows, vectorRows, fused: top, records });
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
    await sendRawCommand(redis, createIndexArgs(index, prefix, dimensions));
  } catch (error) {
    if (!(error instanceof Error) || !/already exists/i.test(error.message)) throw error;
  }
}

/** Drops a space's search index, if there is one; its chunk hashes are left to the caller. */
export async function dropSearchIndex(redis: RedisClient, index: string): Promise<void> {
  try {
    await sendRawCommand(redis, ['FT.DROPINDEX', index]);
  } catch (error) {
    // No query engine on this server, or no index of that space: nothing to drop.
    if (!(error instanceof Error) || !/unknown (index|command)|no such index/i.test(error.message)) throw error;
  }
}
