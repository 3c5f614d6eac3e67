import type { Command } from 'commander';
import { systemClock } from '../clock.ts';
import { embeddingStatusView } from '../views.ts';
import { everyChatbot, runCommand } from './cli-runtime.ts';
import { diagnose, type RedisFacts } from './doctor.ts';
import { probeQueryEngine } from '../rag/retrieval-setup.ts';
import type { RedisClient } from '../redis/redis-client.ts';

/**
 * `doctor`: what is misconfigured (see `diagnose`).
 *
 * `status`: what the gateways are doing, read from Redis — how many run, how far each one's in-process
 * search index has loaded, the embedding space they serve and a re-embedding into another one with its
 * progress, and the ingestion queue.
 */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('what the gateways are doing: search index load, embedding space, re-embedding, ingestion queue')
    .action(() =>
      runCommand(async (s) => {
        const [gateways, searchIndex, active, migration, ingestion] = await Promise.all([
          s.gateways.running(),
          s.gateways.searchIndexes(),
          s.spaces.active(),
          s.spaces.migration(),
          s.ingestion.state(systemClock.nowMicros()),
        ]);
        return {
          gateways,
          search_index: searchIndex,
          embeddings: embeddingStatusView(active, migration),
          ingestion,
        };
      }),
    );
  program
    .command('doctor')
    .description('what is misconfigured, and what to do about it')
    .action(() =>
      runCommand(async (s, { redis }) => {
        const [gateways, setup, publicUrl, chatbots, redisFacts, queryEngine, active, migration, served] =
          await Promise.all([
            s.gateways.running(),
            s.gateways.setup(),
            s.gateways.publicUrl(),
            everyChatbot(s),
            readRedisFacts(redis),
            probeQueryEngine(redis),
            s.spaces.active(),
            s.spaces.migration(),
            s.spaces.served(),
          ]);
        return diagnose({
          redis: redisFacts,
          queryEngine,
          embeddings: { active, migration, served },
          gateways,
          setup,
          publicUrl,
          chatbots,
        });
      }),
    );
}

/** The server's version and whether it keeps data on disk (CONFIG may be refused by a managed Redis). */
async function readRedisFacts(redis: RedisClient): Promise<RedisFacts> {
  const [server, persistence] = await Promise.all([redis.info('server'), redis.info('persistence')]);
  let snapshots: boolean | undefined;
  try {
    const config = await redis.configGet('save');
    snapshots = (config.save ?? '').trim() !== '';
  } catch {
    snapshots = undefined;
  }
  return {
    version: /redis_version:([^\r\n]+)/.exec(server)?.[1] ?? 'of unknown version',
    aof: /aof_enabled:1/.test(persistence),
    snapshots,
  };
}
