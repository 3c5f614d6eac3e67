import type { Command } from 'commander';
import { systemClock } from '../clock.ts';
import { embeddingStatusView } from '../views.ts';
import { everyChatbot, runCommand } from './cli-runtime.ts';
import { diagnose } from './doctor.ts';

/**
 * `doctor`: what is misconfigured (see `diagnose`).
 *
 * `status`: what the gateways are doing, read from Redis — how many run, the embedding space they
 * serve and a re-embedding into another one with its progress, and the ingestion queue.
 */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('what the gateways are doing: embedding space, re-embedding progress, ingestion queue')
    .action(() =>
      runCommand(async (s) => {
        const [gateways, active, migration, ingestion] = await Promise.all([
          s.gateways.running(),
          s.spaces.active(),
          s.spaces.migration(),
          s.ingestion.state(systemClock.nowMicros()),
        ]);
        return { gateways, embeddings: embeddingStatusView(active, migration), ingestion };
      }),
    );
  program
    .command('doctor')
    .description('what is misconfigured, and what to do about it')
    .action(() =>
      runCommand(async (s) => {
        const [gateways, setup, publicUrl, chatbots] = await Promise.all([
          s.gateways.running(),
          s.gateways.setup(),
          s.gateways.publicUrl(),
          everyChatbot(s),
        ]);
        return diagnose({ gateways, setup, publicUrl, chatbots });
      }),
    );
}
