import { randomUUID } from 'node:crypto';
import { LeaseKeeper } from '../channels/lease-keeper.ts';
import type { Clock } from '../clock.ts';
import { waitUnlessAborted } from '../wait-unless-aborted.ts';
import type { IngestionQueue } from '../store/ingestion-queue.ts';
import type { Logger } from '../logger.ts';
import { ChunkStore } from '../store/chunk-store.ts';
import type { EmbeddingSpaceStore, SpaceSetting } from '../store/embedding-space-store.ts';
import type { GatewayPresence } from '../store/gateway-presence.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import type { Embedder } from './embedder.ts';
import { copySpace, dropSpace, MixedDimensionsError } from './space-chunks.ts';
import { dimensionsOf } from './retrieval-setup.ts';

/** The re-embedding lost its lease (Redis unreachable for a while, or another gateway took it over). */
class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

export interface SpaceMigrationDeps {
  redis: RedisClient;
  keys: RedisKeys;
  store: EmbeddingSpaceStore;
  gateways: Pick<GatewayPresence, 'ids'>;
  /** Sources being ingested now: the copy begins once none is. */
  ingestion: Pick<IngestionQueue, 'state'>;
  /** The embedder a setting names (with this gateway's provider keys). */
  embedderFor(embeddings: string): Embedder;
  /**
   * Readies the new space before chunks are copied into it: the gateways' Redis query engine gets its
   * index now, so each copy is indexed as it is written and the space is searchable at the switch.
   */
  prepare(space: string, dimensions: number): Promise<void>;
  /** Makes this gateway and then every other serve the new space (the signal). */
  switched(setting: SpaceSetting): Promise<void>;
  clock: Clock;
  logger: Logger;
}

export interface SpaceMigrationOptions {
  leaseMs: number;
  /** How often it looks again while it waits (for the lease, running ingestions, other gateways). */
  pollMs: number;
  /** How long after a failed try (a provider error) it tries again. */
  retryMs: number;
  /** How long after the switch it waits for every gateway to serve the new space before dropping the old. */
  servedTimeoutMs: number;
  /** Chunks read, and embedded per call, at a time. */
  batch: number;
}

export const SPACE_MIGRATION_OPTIONS: SpaceMigrationOptions = {
  leaseMs: 30_000,
  pollMs: 1000,
  retryMs: 30_000,
  servedTimeoutMs: 10 * 60_000,
  batch: 64,
};

/**
 * Re-embeds every stored chunk into the space of this gateway's `EMBEDDINGS` when the gateways serve
 * another: under a lease, so N gateways started with the new setting do it once (another takes over
 * where it stopped if its gateway dies). While it copies, ingestion pauses (sources stay queued) and
 * every gateway keeps answering from the old space; when every chunk has its copy, the served space
 * switches in one script, every gateway loads the new one and says so, and only then are the old
 * chunks dropped. Progress is in Redis (the dashboard and `switchboard status`) and in the log.
 */
export class SpaceMigration {
  private readonly deps: SpaceMigrationDeps;
  private readonly options: SpaceMigrationOptions;
  private readonly holder = randomUUID();
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;
  private keeper: LeaseKeeper | undefined;
  private leaseLost = false;
  private pausing = true;

  constructor(deps: SpaceMigrationDeps, options: SpaceMigrationOptions = SPACE_MIGRATION_OPTIONS) {
    this.deps = deps;
    this.options = options;
  }

  /** Runs in the background until the gateways serve `target` (or the target embedder is refused). */
  start(target: SpaceSetting): void {
    this.running = this.loop(target);
  }

  /** Ends the background run; a copy under way stops and lets go of its lease (another gateway resumes it). */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  /** Resolves when the run has ended (tests). */
  async ended(): Promise<void> {
    await this.running;
  }

  private async loop(target: SpaceSetting): Promise<void> {
    try {
      await this.tries(target);
    } finally {
      // Stopped between tries, the lease kept meanwhile is let go at once.
      await this.letGo();
    }
  }

  private async tries(target: SpaceSetting): Promise<void> {
    const { store, logger } = this.deps;
    while (!this.stopping.signal.aborted) {
      try {
        const active = await store.active();
        const migration = await store.migration();
        const unfinished = migration?.to === target.space && migration.phase === 'switched';
        if (active?.space === target.space && !unfinished) return;
        if (await store.hold(this.holder, this.options.leaseMs, false)) {
          if (active?.space === target.space) await this.finish(migration!.from, target.space);
          else await this.migrate(active!, target);
          return;
        }
      } catch (error) {
        if (error instanceof MixedDimensionsError) {
          await this.refuse(target, error);
          return;
        }
        if (error instanceof LeaseLostError || this.stopping.signal.aborted) {
          await this.letGo();
          if (this.stopping.signal.aborted) return;
        } else {
          // The lease is kept between tries (nobody else starts over), but ingestion goes on meanwhile.
          await this.pause(false);
        }
        await store.update({ error: errorText(error) }, this.now()).catch((failed: unknown) => this.unrecorded(failed));
        logger.warn(
          { err: error, to: target.space, retry_ms: this.options.retryMs },
          're-embedding failed; it will try again',
        );
        await this.wait(this.options.retryMs);
        continue;
      }
      await this.wait(this.options.pollMs);
    }
  }

  /** The target embedder's vectors do not fit its space: its copies are dropped, the gateways keep the old space. */
  private async refuse(target: SpaceSetting, error: MixedDimensionsError): Promise<void> {
    const { store, logger } = this.deps;
    try {
      await dropSpace(this.deps, target.space);
      await store.update({ phase: 'failed', error: error.message }, this.now());
    } catch (failed) {
      this.unrecorded(failed);
    }
    await this.letGo();
    logger.error({ err: error, to: target.space }, 're-embedding refused; the gateways keep the old space');
  }

  private unrecorded(error: unknown): void {
    this.deps.logger.warn({ err: error }, 're-embedding progress not recorded');
  }

  /** Copies every chunk of `from` into `to`, switches, then drops the old space. */
  private async migrate(from: SpaceSetting, to: SpaceSetting): Promise<void> {
    const { store, logger } = this.deps;
    await this.keep();
    const resumed = await this.begin(from, to);
    while ((await this.deps.ingestion.state(this.now())).running > 0) await this.wait(this.options.pollMs, true);
    const old = new ChunkStore(this.deps.redis, this.deps.keys, from.space);
    const total = await old.count();
    await store.update({ total, done: 0, error: '' }, this.now());
    logger.info({ from: from.space, to: to.space, chunks: total, resumed }, 're-embedding started');
    const embedder = this.deps.embedderFor(to.embeddings);
    const dimensions = await dimensionsOf(embedder);
    await this.deps.prepare(to.space, dimensions);
    this.check();
    let logged = performance.now();
    const copy = await copySpace({
      from: old,
      to: new ChunkStore(this.deps.redis, this.deps.keys, to.space),
      embedder,
      dimensions,
      batch: this.options.batch,
      onBatch: async (done) => {
        await store.update({ done: Math.min(done, total) }, this.now());
        if (performance.now() - logged >= 5000) {
          logged = performance.now();
          logger.info({ to: to.space, done, total }, 're-embedding');
        }
        this.check();
      },
    });
    this.check();
    if (!(await store.switchTo(this.holder, to, this.now())))
      throw new LeaseLostError('the re-embedding lost its lease');
    const { done, embedded, seconds } = copy;
    const rate = Math.round(done / Math.max(seconds, 0.001));
    logger.info(
      { from: from.space, to: to.space, chunks: done, embedded, chunks_per_second: rate },
      're-embedding copied every chunk; the gateways switch',
    );
    await this.deps.switched(to);
    await this.finish(from.space, to.space);
  }

  /**
   * Records a re-embedding from `from` into `to`, or finds the one to resume (true); what dead
   * gateways left of other re-embeddings is dropped first.
   */
  private async begin(from: SpaceSetting, to: SpaceSetting): Promise<boolean> {
    const earlier = await this.deps.store.migration();
    if (earlier?.phase === 'copying' && earlier.to !== to.space && earlier.to !== from.space) {
      // A re-embedding into a third space was left half done: its copies would never be dropped.
      await dropSpace(this.deps, earlier.to);
    }
    if (earlier?.phase === 'switched' && earlier.to === from.space) {
      // The gateways switched to the space served now, and its re-embedding's gateway died before it
      // dropped the space they switched from.
      await dropSpace(this.deps, earlier.from);
    }
    if (earlier?.phase === 'copying' && earlier.from === from.space && earlier.to === to.space) return true;
    const now = this.now();
    await this.deps.store.begin({
      from: from.space,
      to: to.space,
      to_embeddings: to.embeddings,
      phase: 'copying',
      done: 0,
      total: 0,
      started_at: now,
      updated_at: now,
    });
    return false;
  }

  /** After the switch: once every running gateway serves the new space, drops the old one and ends. */
  private async finish(fromSpace: string, toSpace: string): Promise<void> {
    const { store, logger } = this.deps;
    await this.keep();
    const deadline = performance.now() + this.options.servedTimeoutMs;
    for (;;) {
      const served = await store.served();
      const running = await this.deps.gateways.ids();
      const behind = running.filter((id) => served[id] !== toSpace);
      if (behind.length === 0) {
        // Gateways that died without a word said what they served for the last time.
        await store.forgetServed(Object.keys(served).filter((id) => !running.includes(id)));
        break;
      }
      if (performance.now() >= deadline) {
        logger.error(
          { gateways: behind, to: toSpace },
          'gateways still serve the old embedding space; dropping it anyway',
        );
        break;
      }
      await this.wait(this.options.pollMs, true);
    }
    const dropped = await dropSpace(this.deps, fromSpace);
    await store.update({ phase: 'done', error: '' }, this.now());
    await this.letGo();
    logger.info({ from: fromSpace, to: toSpace, dropped }, 're-embedding done; the old chunks are dropped');
  }

  /** Keeps the lease (and with it the pause of ingestion) in the background while this run works. */
  private async keep(): Promise<void> {
    if (this.keeper) return this.pause(true);
    this.leaseLost = false;
    this.pausing = true;
    this.keeper = new LeaseKeeper({
      ttlMs: this.options.leaseMs,
      clock: this.deps.clock,
      hold: () => this.deps.store.hold(this.holder, this.options.leaseMs, this.pausing),
      release: () => this.deps.store.release(this.holder),
      onHeld: (held) => {
        if (!held) this.leaseLost = true;
      },
      onError: (error) => this.deps.logger.warn({ err: error }, 're-embedding lease not renewed'),
    });
    this.keeper.start();
    // Ingestion is paused once this resolves, before the copy looks for runs still going.
    await this.keeper.renew();
  }

  /** Pauses ingestion with the lease, or lets it go on while the lease is kept (between tries). */
  private async pause(pausing: boolean): Promise<void> {
    this.pausing = pausing;
    await this.keeper?.renew();
  }

  private async letGo(): Promise<void> {
    const keeper = this.keeper;
    this.keeper = undefined;
    keeper?.stop();
    await this.deps.store.release(this.holder).catch((error: unknown) => {
      this.deps.logger.warn({ err: error }, 're-embedding lease not released; it lapses');
    });
  }

  private check(): void {
    if (this.stopping.signal.aborted) throw new LeaseLostError('the gateway is stopping');
    if (this.leaseLost) throw new LeaseLostError('the re-embedding lost its lease');
  }

  private async wait(ms: number, checked = false): Promise<void> {
    await waitUnlessAborted(ms, this.stopping.signal, { ref: false });
    if (checked) this.check();
  }

  private now(): number {
    return this.deps.clock.nowMicros();
  }
}

/**
 * A re-embedding left `copying` with no gateway working on it (its lease lapsed: every gateway with its
 * `EMBEDDINGS` stopped, or was started again with the served one) is ended as failed and its copies
 * dropped, so neither the dashboard nor `status` shows it under way for ever. One that a gateway with
 * `wanted` would run is left to it.
 */
export async function endAbandonedMigration(
  deps: Pick<SpaceMigrationDeps, 'redis' | 'keys' | 'store' | 'clock' | 'logger'>,
  wanted: string,
): Promise<void> {
  const migration = await deps.store.migration();
  if (migration?.phase !== 'copying' || migration.to === wanted) return;
  const holder = randomUUID();
  // Held only while it drops the copies: a short lease, whatever REEMBED_LEASE_MS says.
  if (!(await deps.store.hold(holder, SPACE_MIGRATION_OPTIONS.leaseMs, false))) return;
  try {
    const dropped = await dropSpace(deps, migration.to);
    const error = `abandoned: no running gateway has EMBEDDINGS=${migration.to_embeddings}`;
    await deps.store.update({ phase: 'failed', error }, deps.clock.nowMicros());
    deps.logger.warn({ to: migration.to, dropped }, `re-embedding ${error}`);
  } finally {
    await deps.store.release(holder);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
