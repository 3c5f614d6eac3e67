import { LuaScript } from '../redis/lua-script.ts';
import { ProcessLease } from '../redis/process-lease.ts';
import { readPastCache, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

/** An embedding space and the `EMBEDDINGS` setting whose embedder makes its vectors. */
export interface SpaceSetting {
  space: string;
  embeddings: string;
}

/** Where a re-embedding is: copying into the target, switched to it (old chunks being dropped), or ended. */
export type MigrationPhase = 'copying' | 'switched' | 'done' | 'failed';

/** A re-embedding of every stored chunk into another space, as recorded for the log, dashboard and CLI. */
export interface SpaceMigrationState {
  from: string;
  to: string;
  to_embeddings: string;
  phase: MigrationPhase;
  /** Chunks in the target space so far, of `total` in the old one when the copy began. */
  done: number;
  total: number;
  /** Epoch µs. */
  started_at: number;
  updated_at: number;
  /** The last error; while copying, the gateway tries again. */
  error?: string;
}

// The switch: only while the holder has the lease, so a holder whose lease lapsed (and was taken over)
// never switches.
const SWITCH = new LuaScript<{
  keys: [lease: string, space: string, migration: string];
  args: [holder: string, space: string, embeddings: string, nowMicros: number];
  reply: 0 | 1;
}>(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], 'space', ARGV[2], 'embeddings', ARGV[3])
redis.call('HSET', KEYS[3], 'phase', 'switched', 'updated_at', ARGV[4])
return 1
`);

/**
 * The embedding space in Redis: which space every gateway serves (and the `EMBEDDINGS` setting that
 * embeds queries into it), and the re-embedding into another space when a gateway starts with
 * another setting — its lease, the pause of ingestion while it copies, its progress, and which
 * space each gateway serves (so the old chunks are dropped only once none serves them).
 */
export class EmbeddingSpaceStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly lease: ProcessLease;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
    this.lease = new ProcessLease(redis);
  }

  /** The space the gateways serve, if one has started. */
  async active(): Promise<SpaceSetting | undefined> {
    const fields = await readPastCache<Record<string, string>>(this.redis, (multi) =>
      multi.hGetAll(this.keys.embeddingSpace()),
    );
    if (fields.space && fields.embeddings) return { space: fields.space, embeddings: fields.embeddings };
    const legacy = await this.redis.get(this.keys.legacyEmbeddingSpace());
    return legacy ? { space: legacy, embeddings: embeddingsOfSpace(legacy) } : undefined;
  }

  /** Records the space the gateways serve (the first gateway's, before any chunk exists). */
  async record(setting: SpaceSetting): Promise<void> {
    await this.redis.hSet(this.keys.embeddingSpace(), { ...setting });
    await this.redis.del(this.keys.legacyEmbeddingSpace());
  }

  /** The re-embedding in progress or the last one, if any. */
  async migration(): Promise<SpaceMigrationState | undefined> {
    const fields = await readPastCache<Record<string, string>>(this.redis, (multi) =>
      multi.hGetAll(this.keys.spaceMigration()),
    );
    if (!fields.to) return undefined;
    return {
      from: fields.from!,
      to: fields.to,
      to_embeddings: fields.to_embeddings!,
      phase: fields.phase as MigrationPhase,
      done: Number(fields.done ?? 0),
      total: Number(fields.total ?? 0),
      started_at: Number(fields.started_at),
      updated_at: Number(fields.updated_at),
      ...(fields.error ? { error: fields.error } : {}),
    };
  }

  /**
   * Takes or renews the re-embedding's lease; with `pause`, ingestion waits while it is held (the pause
   * is a lease of the same holder and lifetime, so both lapse together if the holder dies), without,
   * ingestion goes on (between tries).
   */
  async hold(holder: string, ttlMs: number, pause: boolean): Promise<boolean> {
    if (!(await this.lease.hold(this.keys.spaceMigrationLease(), holder, ttlMs))) return false;
    if (pause) await this.lease.hold(this.keys.ingestPaused(), holder, ttlMs);
    else await this.lease.release(this.keys.ingestPaused(), holder);
    return true;
  }

  /** Lets go of the pause of ingestion and the lease if `holder` has them. */
  async release(holder: string): Promise<void> {
    await this.lease.release(this.keys.ingestPaused(), holder);
    await this.lease.release(this.keys.spaceMigrationLease(), holder);
  }

  /** Starts recording a re-embedding (replacing the record of an earlier one). */
  async begin(state: SpaceMigrationState): Promise<void> {
    await this.redis.multi().del(this.keys.spaceMigration()).hSet(this.keys.spaceMigration(), flat(state)).exec();
  }

  /** Records progress; `error: ''` clears the last error. */
  async update(fields: Partial<SpaceMigrationState>, nowMicros: number): Promise<void> {
    await this.redis.hSet(this.keys.spaceMigration(), flat({ ...fields, updated_at: nowMicros }));
  }

  /** Makes `setting` the served space, if `holder` still has the lease; false when it does not. */
  async switchTo(holder: string, setting: SpaceSetting, nowMicros: number): Promise<boolean> {
    const switched = await SWITCH.run(
      this.redis,
      [this.keys.spaceMigrationLease(), this.keys.embeddingSpace(), this.keys.spaceMigration()],
      [holder, setting.space, setting.embeddings, nowMicros],
    );
    return switched === 1;
  }

  /** This gateway serves `space` now. */
  async serving(gatewayId: string, space: string): Promise<void> {
    await this.redis.hSet(this.keys.servedSpaces(), gatewayId, space);
  }

  /** A gateway stopped: it serves nothing. */
  async stopServing(gatewayId: string): Promise<void> {
    await this.redis.hDel(this.keys.servedSpaces(), gatewayId);
  }

  /** Forgets what gateways no longer running said they serve. */
  async forgetServed(gatewayIds: string[]): Promise<void> {
    if (gatewayIds.length > 0) await this.redis.hDel(this.keys.servedSpaces(), gatewayIds);
  }

  /** The space each gateway said it serves, by gateway id. */
  async served(): Promise<Record<string, string>> {
    return readPastCache<Record<string, string>>(this.redis, (multi) => multi.hGetAll(this.keys.servedSpaces()));
  }
}

/**
 * While a re-embedding from or into `space` is under way (copying, or switched with the old chunks
 * not dropped yet), the other space of it: chunks removed in one must go in the other too.
 */
export async function otherSpace(redis: RedisClient, keys: RedisKeys, space: string): Promise<string | undefined> {
  const [from, to, phase] = await redis.hmGet(keys.spaceMigration(), ['from', 'to', 'phase']);
  if (phase !== 'copying' && phase !== 'switched') return undefined;
  if (space === from) return to ?? undefined;
  if (space === to) return from ?? undefined;
  return undefined;
}

/** The `EMBEDDINGS` setting that makes a space recorded before the setting was kept with it. */
function embeddingsOfSpace(space: string): string {
  if (space.startsWith('local-')) return 'local';
  const dash = space.indexOf('-');
  return `${space.slice(0, dash)}:${space.slice(dash + 1)}`;
}

function flat(fields: Partial<SpaceMigrationState>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name, String(value)]),
  );
}
