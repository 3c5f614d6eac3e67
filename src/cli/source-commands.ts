import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { ingestionWorkerFor } from '../actors/ingestion-worker.ts';
import { systemClock } from '../clock.ts';
import { openRetrieval } from '../rag/retrieval.ts';
import { retrievalView } from '../rag/retrieval-view.ts';
import type { Services } from '../services.ts';
import type { Source } from '../store/source-store.ts';
import { operatorSourceView } from '../views.ts';
import { CliError, runCommand, type CommandContext } from './cli-runtime.ts';
import { createProgressDisplay } from './progress-display.ts';

interface AddOptions {
  bot: string;
  text?: string;
  title?: string;
  url?: string;
  file?: string;
  type?: string;
  wait?: boolean;
}

/** `source add|delete` and `retrieve`. */
export function registerSourceCommands(program: Command): void {
  const source = program.command('source').description('training sources');
  source
    .command('add')
    .requiredOption('--bot <id>', 'chatbot id')
    .option('--text <text>', 'raw text to train on')
    .option('--title <label>', 'label for the source')
    .option('--url <url>', 'website to crawl')
    .option('--file <path>', 'file to upload (PDF, DOCX, PPTX, TXT, MD, CSV)')
    .option('--type <type>', 'backend source type, with --url')
    .option('--wait', 'return after the source reaches done or failed, showing progress')
    .action((opts: AddOptions) =>
      runCommand(async (s, context) => {
        await s.chatbots.get(opts.bot);
        const added = await add(s, opts);
        return operatorSourceView(opts.wait ? await waitFor(s, context, added) : added);
      }),
    );
  source
    .command('delete')
    .requiredOption('--source <id>', 'source id')
    .action((opts: { source: string }) =>
      runCommand(async (s, context) => {
        const retrieval = await openRetrieval(context.redis, s.keys, context.config, s.signals, context.logger);
        await s.intake.remove(opts.source, retrieval.index);
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
        const retrieval = await openRetrieval(context.redis, s.keys, context.config, s.signals, context.logger);
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

async function add(s: Services, opts: AddOptions): Promise<Source> {
  const kinds = [opts.text, opts.url, opts.file].filter((v) => v !== undefined).length;
  if (kinds !== 1) throw new CliError('source add: exactly one of --text, --url or --file is required');
  if (opts.type !== undefined && opts.type !== 'url') {
    throw new CliError(`source add: --type ${opts.type} cannot be ingested yet (supported: url, file, text)`);
  }
  if (opts.text !== undefined) return s.intake.addText(opts.bot, opts.text, opts.title);
  if (opts.url !== undefined) return s.intake.addUrl(opts.bot, opts.url, opts.title);
  const bytes = await readFile(opts.file!).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`source add: cannot read ${opts.file}: ${error.code ?? error.message}`);
  });
  return s.intake.addFile(opts.bot, opts.file!, bytes);
}

/** Ingests the source here when no gateway took it yet; otherwise follows its progress. */
async function waitFor(s: Services, context: CommandContext, added: Source): Promise<Source> {
  const display = createProgressDisplay(process.stderr);
  try {
    const retrieval = await openRetrieval(context.redis, s.keys, context.config, s.signals, context.logger);
    const worker = ingestionWorkerFor(
      {
        queue: s.ingestion,
        sources: s.sources,
        index: retrieval.index,
        embedder: retrieval.embedder,
        clock: systemClock,
        logger: context.logger,
      },
      context.config,
      1,
    );
    await worker.ingestNow(added.chatbot_id, added.id, (line) => display.update(line));
    for (;;) {
      const current = await s.sources.get(added.id);
      if (current.status === 'done' || current.status === 'failed') return current;
      display.update((await s.sources.progress(current)) || current.status);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    display.stop();
  }
}
