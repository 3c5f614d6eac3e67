import { RESP_TYPES } from 'redis';
import type { ChunkRecord } from '../rag/chunk.ts';
import { scanKeys, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { otherSpace } from './embedding-space-store.ts';

/**
 * Chunk records in Redis: one hash per chunk (the documents the Redis query engine indexes, and what
 * the in-process engine loads), plus a set of chunk ids per source for removal. Embeddings are stored
 * as little-endian FLOAT32 bytes, the format of a Redis VECTOR field.
 */
export class ChunkStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  readonly space: string;

  constructor(redis: RedisClient, keys: RedisKeys, space: string) {
    this.redis = redis;
    this.keys = keys;
    this.space = space;
  }

  /** The key prefix shared by every chunk hash of this embedding space (the index's PREFIX). */
  get prefix(): string {
    return this.keys.chunkPrefix(this.space);
  }

  /** Writes chunks of one source (replacing chunks with the same ids). */
  async save(chunks: ChunkRecord[]): Promise<void> {
    await Promise.all(
      chunks.map(async (chunk) => {
        await this.write(chunk);
        await this.redis.sAdd(this.keys.sourceChunks(chunk.chatbotId, chunk.sourceId), chunk.id);
      }),
    );
  }

  /**
   * Writes chunks re-embedded from another space under the ids they have there: the ids a source's
   * chunks set holds are the same in every space, so it is not touched (a source removed meanwhile
   * stays removed; its copies are swept before the switch).
   */
  async copy(chunks: ChunkRecord[]): Promise<void> {
    await Promise.all(chunks.map((chunk) => this.write(chunk)));
  }

  /** Deletes copies made by `copy` (their hashes only; a source's chunk-id set is not touched). */
  async discard(chunks: ChunkRecord[]): Promise<void> {
    await Promise.all(chunks.map((chunk) => this.redis.del(this.keyOf(chunk))));
  }

  /**
   * Deletes every chunk of a source; returns how many there were. While a re-embedding is under way
   * the source's chunks in the other space go too, so a removed source never comes back with a switch.
   */
  async removeSource(chatbotId: string, sourceId: string): Promise<number> {
    const setKey = this.keys.sourceChunks(chatbotId, sourceId);
    const ids = await this.redis.sMembers(setKey);
    const other = await otherSpace(this.redis, this.keys, this.space);
    for (const space of other === undefined ? [this.space] : [this.space, other]) {
      if (ids.length > 0) await this.redis.del(ids.map((id) => this.keys.chunk(space, chatbotId, id)));
    }
    await this.redis.del(setKey);
    return ids.length;
  }

  /** Deletes every chunk of this space (the old space once a re-embedding has switched); returns how many. */
  async drop(batchSize = 500): Promise<number> {
    let count = 0;
    for await (const keys of scanKeys(this.redis, { MATCH: `${this.prefix}*`, COUNT: batchSize })) {
      if (keys.length === 0) continue;
      // One DEL per key: in a Redis Cluster the chunks of different chatbots are in different slots.
      await Promise.all(keys.map((key) => this.redis.del(key)));
      count += keys.length;
    }
    return count;
  }

  /** How many chunks this space holds. */
  async count(batchSize = 1000): Promise<number> {
    let count = 0;
    for await (const keys of scanKeys(this.redis, { MATCH: `${this.prefix}*`, COUNT: batchSize })) {
      count += keys.length;
    }
    return count;
  }

  /** The key of a chunk of this space. */
  keyOf(chunk: Pick<ChunkRecord, 'chatbotId' | 'id'>): string {
    return this.keys.chunk(this.space, chunk.chatbotId, chunk.id);
  }

  private async write(chunk: ChunkRecord): Promise<void> {
    await this.redis.hSet(this.keyOf(chunk), {
      chatbot_id: chunk.chatbotId,
      source_id: chunk.sourceId,
      position: String(chunk.position),
      title: chunk.title,
      url: chunk.url,
      content: chunk.content,
      embedding: float32Bytes(chunk.embedding),
    });
  }

  /** The ids of a source's chunks. */
  async ids(chatbotId: string, sourceId: string): Promise<string[]> {
    return this.redis.sMembers(this.keys.sourceChunks(chatbotId, sourceId));
  }

  /** Deletes some chunks of a source. */
  async remove(chatbotId: string, sourceId: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.redis.del(ids.map((id) => this.keys.chunk(this.space, chatbotId, id)));
    await this.redis.sRem(this.keys.sourceChunks(chatbotId, sourceId), ids);
  }

  /** The chunks of one source, in order. */
  async forSource(chatbotId: string, sourceId: string): Promise<ChunkRecord[]> {
    const ids = await this.redis.sMembers(this.keys.sourceChunks(chatbotId, sourceId));
    const chunks = await this.load(ids.map((id) => this.keys.chunk(this.space, chatbotId, id)));
    return chunks.sort((a, b) => a.position - b.position);
  }

  /** Whether this embedding space holds any chunk. */
  async any(): Promise<boolean> {
    for await (const keys of scanKeys(this.redis, { MATCH: `${this.prefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) return true;
    }
    return false;
  }

  /** Every chunk of this embedding space, in batches (the in-process engine's startup load). */
  async *all(batchSize = 500): AsyncGenerator<ChunkRecord[]> {
    let batch: string[] = [];
    for await (const keys of scanKeys(this.redis, { MATCH: `${this.prefix}*`, COUNT: batchSize })) {
      batch.push(...keys);
      if (batch.length >= batchSize) {
        yield await this.load(batch);
        batch = [];
      }
    }
    if (batch.length > 0) yield await this.load(batch);
  }

  /**
   * The keys of every chunk of this space, by chatbot (the order SCAN found them in): what the
   * in-process engine's background load walks, one chatbot after another.
   */
  async keysByChatbot(batchSize = 1000): Promise<Map<string, string[]>> {
    const byChatbot = new Map<string, string[]>();
    for await (const keys of scanKeys(this.redis, { MATCH: `${this.prefix}*`, COUNT: batchSize })) {
      for (const key of keys) {
        const chatbotId = chatbotIdFromKey(key);
        const listed = byChatbot.get(chatbotId);
        if (listed === undefined) byChatbot.set(chatbotId, [key]);
        else listed.push(key);
      }
    }
    return byChatbot;
  }

  /** Chunks of a chatbot by id, aligned with `ids` (undefined where a chunk does not exist). */
  byIds(chatbotId: string, ids: string[]): Promise<Array<ChunkRecord | undefined>> {
    return this.byKeys(ids.map((id) => this.keys.chunk(this.space, chatbotId, id)));
  }

  /** Chunks by their full keys, aligned with `keys` (undefined where a chunk no longer exists). */
  async byKeys(keys: string[]): Promise<Array<ChunkRecord | undefined>> {
    const binary = this.redis.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
    const rows = await Promise.all(keys.map((key) => binary.hGetAll(key)));
    return rows.map((row, i) => toChunk(keys[i]!, row as unknown as Record<string, Buffer>));
  }

  /** The chunks at `keys` that exist now (a key whose chunk was deleted meanwhile is left out). */
  async load(keys: string[]): Promise<ChunkRecord[]> {
    return (await this.byKeys(keys)).filter((chunk): chunk is ChunkRecord => chunk !== undefined);
  }
}

function toChunk(key: string, fields: Record<string, Buffer>): ChunkRecord | undefined {
  if (!fields.chatbot_id || !fields.embedding) return undefined;
  const bytes = fields.embedding;
  const embedding = new Float32Array(bytes.byteLength / 4);
  for (let j = 0; j < embedding.length; j += 1) embedding[j] = bytes.readFloatLE(j * 4);
  return {
    id: chunkIdFromKey(key),
    chatbotId: fields.chatbot_id.toString(),
    sourceId: fields.source_id!.toString(),
    position: Number(fields.position!.toString()),
    title: fields.title!.toString(),
    url: fields.url!.toString(),
    content: fields.content!.toString(),
    embedding,
  };
}

/** Chunk keys hold the chatbot's hash tag, `{b:<chatbot_id>}`. */
function chatbotIdFromKey(key: string): string {
  const start = key.indexOf('{b:') + 3;
  return key.slice(start, key.indexOf('}', start));
}

/** Chunk keys end in `}:<source_id>:<position>`; the chunk id is that tail. */
function chunkIdFromKey(key: string): string {
  return key.slice(key.indexOf('}:') + 2);
}

/** Little-endian FLOAT32 bytes, the layout of a Redis VECTOR field whatever the host's byte order. */
export function float32Bytes(vector: Float32Array): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes;
}
