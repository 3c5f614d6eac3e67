import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { openRetrieval } from '../rag/retrieval-setup.ts';
import { ChunkStore } from '../store/chunk-store.ts';
import type { Services } from '../services.ts';
import type { Source } from '../sources/source.ts';
import { operatorSourceSyncView, retrievalView } from '../views.ts';
import { CONNECTOR_TYPES } from '../sources/connectors/connector.ts';
import { CliError, runCommand } from './cli-runtime.ts';
import { createProgressDisplay } from './progress-display.ts';

interface AddOptions {
  bot: string;
  text?: string;
  title?: string;
  url?: string;
  file?: string;
  type?: string;
  connection?: string;
  refresh?: string;
  wait?: boolean;
}

/** `source add|list|show|sync|delete` and `retrieve`. */
export function registerSourceCommands(program: Command): void {
  const source = program.command('source').description('training sources');
  source
    .command('add')
    .requiredOption('--bot <id>', 'chatbot id')
    .option('--text <text>', 'raw text to train on')
    .option('--title <label>', 'label for the source')
    .option('--url <url>', 'website to crawl')
    .option('--file <path>', 'file to upload (PDF, DOCX, PPTX, TXT, MD, CSV)')
    .option('--type <type>', `source type read through a connector (${CONNECTOR_TYPES.join(', ')}), with --url`)
    .option('--connection <id>', 'the connection a connector source reads through (default: the newest)')
    .option('--refresh <schedule>', 'how often a url or connector source syncs again: off, daily or weekly (default)')
    .option('--wait', 'return after the source reaches done or failed, showing progress')
    .action((opts: AddOptions) =>
      runCommand(async (s) => {
        const chatbot = await s.chatbots.get(opts.bot);
        const added = await add(s, opts, chatbot.user_id);
        const source = opts.wait ? await waitFor(s, added) : added;
        return operatorSourceSyncView(source, await s.intake.syncState(source));
      }),
    );
  source
    .command('list')
    .description("a chatbot's sources, newest first, with their syncs")
    .requiredOption('--bot <id>', 'chatbot id')
    .action((opts: { bot: string }) =>
      runCommand(async (s) => {
        await s.chatbots.get(opts.bot);
        const sources = await s.sources.listForChatbot(opts.bot);
        return Promise.all(sources.map(async (one) => operatorSourceSyncView(one, await s.intake.syncState(one))));
      }),
    );
  source
    .command('show')
    .description('one source, with its syncs and what it is doing now')
    .requiredOption('--source <id>', 'source id')
    .action((opts: { source: string }) =>
      runCommand(async (s) => {
        const one = await s.sources.get(opts.source);
        const progress = await s.sources.progress(one);
        return { ...operatorSourceSyncView(one, await s.intake.syncState(one)), progress };
      }),
    );
  source
    .command('sync')
    .description('sync a url or connector source now, or ingest a failed source again (a gateway does it)')
    .requiredOption('--source <id>', 'source id')
    .action((opts: { source: string }) =>
      runCommand(async (s) => {
        const { source: one, sync } = await s.intake.syncNow(opts.source);
        return { ...operatorSourceSyncView(one, await s.intake.syncState(one)), sync };
      }),
    );
  source
    .command('delete')
    .requiredOption('--source <id>', 'source id')
    .action((opts: { source: string }) =>
      runCommand(async (s, context) => {
        // The chunks are where the gateways stored them, whatever this process's EMBEDDINGS says
        // (none when no gateway has started); gateways drop them from their indexes on the signal.
        const space = (await s.spaces.active())?.space;
        const removal = {
          removeSource: async (chatbotId: string, sourceId: string) => {
            if (space !== undefined)
              await new ChunkStore(context.redis, s.keys, space).removeSource(chatbotId, sourceId);
            await s.signals.publish({ kind: 'source-chunks', chatbot_id: chatbotId, source_id: sourceId });
          },
        };
        await s.intake.remove(opts.source, removal);
        return { id: opts.source, deleted: true };
      }),
    );
  program
    .command('retrieve')
    .description('the fused top results for a query, with each engine rank and score')
    .requiredOption('--bot <id>', 'chatbot id')
    .requiredOption('--query <text>', 'the question')
    .option('--k <n>', 'results', '10')
    .action((opts: { bot: string; query: string; k: string }) =>
      runCommand(async (s, context) => {
        await s.chatbots.get(opts.bot);
        // The question is embedded into the space the gateways serve, whatever this process's EMBEDDINGS says.
        const served = await s.spaces.active();
        const config = served ? { ...context.config, EMBEDDINGS: served.embeddings } : context.config;
        const retrieval = await openRetrieval(context.redis, s.keys, config, s.signals, context.logger);
        if (retrieval.engine.name === 'in-process') {
          for await (const batch of retrieval.chunks.all()) {
            await retrieval.engine.upsert(batch.filter((chunk) => chunk.chatbotId === opts.bot));
          }
        }
        const hits = await retrieval.retriever.search(opts.bot, opts.query, Math.max(1, Number(opts.k) || 10));
        return retrievalView(retrieval.engine.name, hits);
      }),
    );
}

async function add(s: Services, opts: AddOptions, userId: string): Promise<Source> {
  const kinds = [opts.text, opts.url, opts.file].filter((v) => v !== undefined).length;
  if (kinds !== 1) throw new CliError('source add: exactly one of --text, --url or --file is required');
  if (opts.type !== undefined && opts.type !== 'url') {
    if (opts.url === undefined) throw new CliError(`source add: --type ${opts.type} takes --url with the link or id`);
    return s.intake.addConnector(userId, opts.bot, {
      type: opts.type,
      reference: opts.url,
      connectionId: opts.connection,
      title: opts.title,
      refresh: opts.refresh,
    });
  }
  if (opts.url !== undefined) return s.intake.addUrl(opts.bot, opts.url, opts.title, opts.refresh);
  if (opts.refresh !== undefined) throw new CliError('source add: --refresh applies to url and connector sources');
  if (opts.text !== undefined) return s.intake.addText(opts.bot, opts.text, opts.title);
  const bytes = await readFile(opts.file!).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`source add: cannot read ${opts.file}: ${error.code ?? error.message}`);
  });
  return s.intake.addFile(opts.bot, opts.file!, bytes);
}

/**
 * Follows a source a gateway ingests until it is done (printed) or failed (exit 1 with its reason),
 * showing its progress. The CLI never ingests: what shapes stored data (embedding space, crawler
 * policy, limits, connections) is the gateways' configuration. While the source waits in the queue
 * and no gateway is running, it says so rather than wait for ever.
 */
async function waitFor(s: Services, added: Source): Promise<Source> {
  const display = await createProgressDisplay(process.stderr);
  try {
    for (let polls = 0; ; polls += 1) {
      const current = await s.sources.get(added.id);
      if (current.status === 'failed') throw new CliError(`source add: ${current.error}`);
      if (current.status === 'done') return current;
      // Every two seconds while queued: a gateway that just started takes it within a second.
      if (current.status === 'pending' && polls % 8 === 0 && (await s.gateways.running()) === 0) {
        throw new CliError(
          'source add: no gateway is running to ingest the source; it stays queued until one starts (npx switchboard serve)',
        );
      }
      display.update((await s.sources.progress(current)) || current.status);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    display.stop();
  }
}
