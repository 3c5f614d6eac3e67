import { randomUUID } from 'node:crypto';
import { RESP_TYPES } from 'redis';
import type { Clock } from '../clock.ts';
import { NotFoundError } from '../errors.ts';
import { formatTimestamp } from '../timestamp.ts';
import {
  checkNewSource,
  MAX_TITLE_LENGTH,
  refreshFor,
  type NewSource,
  type Refresh,
  type Source,
  type SourceDocument,
  type SourceStatus,
  type SourceType,
  type SyncRecord,
} from '../sources/source.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

/** Training sources of a chatbot: newest first (created_at, then id, descending), soft delete. */
export class SourceStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
  }

  /**
   * Stores a new source, `pending`. `restored` (a source brought from another install by `import`)
   * keeps its id unless a source here has it, its creation time, and may store it `failed` with the
   * reason (a connector source whose connection did not come with it).
   */
  async create(
    chatbotId: string,
    input: NewSource,
    restored?: { id: string; createdAtMicros: number; failed?: string },
  ): Promise<Source> {
    const title = checkNewSource(input);
    const kept = restored && (await this.redis.exists(this.keys.sourceOwner(restored.id))) === 0;
    const id = kept ? restored.id : randomUUID();
    const createdAt = restored?.createdAtMicros ?? this.clock.nowMicros();
    if (input.content !== undefined) {
      await this.redis.set(this.keys.sourceContent(chatbotId, id), input.content);
    }
    await this.redis.set(this.keys.sourceOwner(id), chatbotId);
    await this.redis.hSet(this.keys.source(chatbotId, id), {
      id,
      chatbot_id: chatbotId,
      type: input.type,
      title,
      url: input.url ?? '',
      status: restored?.failed ? 'failed' : 'pending',
      page_count: '0',
      created_at: String(createdAt),
      error: restored?.failed ?? '',
      reference: input.reference ?? '',
      connection_id: input.connectionId ?? '',
      refresh: refreshFor(input.type, input.refresh),
      deleted: '0',
    });
    await this.redis.zAdd(this.keys.sourcesOf(chatbotId), { score: createdAt, value: id });
    return this.get(id);
  }

  /** Live sources of a chatbot, newest first; equal times are ordered by id, descending. */
  async listForChatbot(chatbotId: string): Promise<Source[]> {
    return (await this.liveRows(chatbotId)).map(toSource);
  }

  /** {@link listForChatbot}, each source with its progress line, from the same reads. */
  async listWithProgress(chatbotId: string): Promise<Array<{ source: Source; progress: string }>> {
    return (await this.liveRows(chatbotId)).map((row) => ({ source: toSource(row), progress: row.progress ?? '' }));
  }

  private async liveRows(chatbotId: string): Promise<Array<Record<string, string>>> {
    const ids = await this.redis.zRange(this.keys.sourcesOf(chatbotId), 0, -1, { REV: true });
    const rows = await Promise.all(ids.map((id) => this.redis.hGetAll(this.keys.source(chatbotId, id))));
    return rows.filter((row) => row.id && row.deleted === '0');
  }

  async get(sourceId: string): Promise<Source> {
    const chatbotId = await this.redis.get(this.keys.sourceOwner(sourceId));
    const row = chatbotId ? await this.redis.hGetAll(this.keys.source(chatbotId, sourceId)) : {};
    if (!row.id || row.deleted !== '0') throw new NotFoundError('Source not found.');
    return toSource(row);
  }

  /** A live source, or undefined when it does not exist or was deleted (other failures throw). */
  async find(sourceId: string): Promise<Source | undefined> {
    try {
      return await this.get(sourceId);
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  /** Moves a live source to a status, with its page count and failure reason when known. */
  async setStatus(
    sourceId: string,
    status: SourceStatus,
    details: { pageCount?: number; error?: string; title?: string } = {},
  ): Promise<Source> {
    const source = await this.get(sourceId);
    await this.redis.hSet(this.keys.source(source.chatbot_id, sourceId), statusFields(status, details));
    return this.get(sourceId);
  }

  async setRefresh(source: Source, refresh: Refresh): Promise<Source> {
    await this.redis.hSet(this.keys.source(source.chatbot_id, source.id), 'refresh', refresh);
    return { ...source, refresh };
  }

  /**
   * Ends a run (a sync, or the first ingestion) in one write, so no reader sees half of it: how it
   * ended at `atMicros`, the status it leaves (when it changes one) and an empty progress line.
   */
  async finishRun(
    source: Source,
    record: Omit<SyncRecord, 'at'>,
    atMicros: number,
    outcome?: { status: SourceStatus; pageCount?: number; error?: string; title?: string },
  ): Promise<void> {
    await this.redis.hSet(this.keys.source(source.chatbot_id, source.id), {
      ...(outcome ? statusFields(outcome.status, outcome) : {}),
      synced_at: String(atMicros),
      sync_error: record.error,
      sync_added: String(record.added),
      sync_changed: String(record.changed),
      sync_removed: String(record.removed),
      sync_unchanged: String(record.unchanged),
      progress: '',
    });
  }

  /** The last sync's record. */
  async lastSync(source: Source): Promise<SyncRecord> {
    const key = this.keys.source(source.chatbot_id, source.id);
    const fields = ['synced_at', 'sync_error', 'sync_added', 'sync_changed', 'sync_removed', 'sync_unchanged'];
    const [at, error, added, changed, removed, unchanged] = await this.redis.hmGet(key, fields);
    return {
      at: at ? formatTimestamp(Number(at)) : '',
      error: error ?? '',
      added: Number(added ?? 0),
      changed: Number(changed ?? 0),
      removed: Number(removed ?? 0),
      unchanged: Number(unchanged ?? 0),
    };
  }

  /** What ingestion reads: the stored text or file bytes (undefined for url sources). */
  async content(source: Source): Promise<Buffer | undefined> {
    const binary = this.redis.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
    const bytes = await binary.get(this.keys.sourceContent(source.chatbot_id, source.id));
    return bytes ?? undefined;
  }

  /** A short progress line while a source is ingested ('' when idle). */
  async setProgress(source: Source, progress: string): Promise<void> {
    await this.redis.hSet(this.keys.source(source.chatbot_id, source.id), 'progress', progress);
  }

  async progress(source: Source): Promise<string> {
    return (await this.redis.hGet(this.keys.source(source.chatbot_id, source.id), 'progress')) ?? '';
  }

  /** Records the documents a connector source was built from (replacing the previous record). */
  async setDocuments(source: Source, documents: Map<string, SourceDocument>): Promise<void> {
    const key = this.keys.sourceDocuments(source.chatbot_id, source.id);
    const fields = Object.fromEntries([...documents].map(([id, doc]) => [id, JSON.stringify(doc)]));
    const multi = this.redis.multi().del(key);
    if (documents.size > 0) multi.hSet(key, fields);
    await multi.exec();
  }

  /** The documents recorded by {@link setDocuments}. */
  async documents(source: Source): Promise<Map<string, SourceDocument>> {
    const rows = await this.redis.hGetAll(this.keys.sourceDocuments(source.chatbot_id, source.id));
    return new Map(Object.entries(rows).map(([id, json]) => [id, JSON.parse(json) as SourceDocument]));
  }

  async softDelete(sourceId: string): Promise<void> {
    const source = await this.get(sourceId);
    await this.redis.hSet(this.keys.source(source.chatbot_id, sourceId), {
      deleted: '1',
      deleted_at: String(this.clock.nowMicros()),
    });
    await this.redis.zRem(this.keys.sourcesOf(source.chatbot_id), sourceId);
    await this.redis.del(this.keys.sourceDocuments(source.chatbot_id, sourceId));
  }
}

function statusFields(
  status: SourceStatus,
  details: { pageCount?: number; error?: string; title?: string },
): Record<string, string> {
  const fields: Record<string, string> = { status };
  if (details.title !== undefined) fields.title = details.title.slice(0, MAX_TITLE_LENGTH);
  if (details.pageCount !== undefined) fields.page_count = String(details.pageCount);
  if (details.error !== undefined) fields.error = details.error;
  return fields;
}

function toSource(row: Record<string, string>): Source {
  return {
    id: row.id!,
    chatbot_id: row.chatbot_id!,
    type: row.type as SourceType,
    title: row.title!,
    url: row.url!,
    status: row.status as SourceStatus,
    page_count: Number(row.page_count),
    created_at: formatTimestamp(Number(row.created_at)),
    error: row.error!,
    reference: row.reference ?? '',
    connection_id: row.connection_id ?? '',
    // Sources stored before schedules existed sync weekly, like new ones.
    refresh: (row.refresh ?? refreshFor(row.type as SourceType)) as Refresh | '',
  };
}
