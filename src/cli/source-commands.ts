import type { Command } from 'commander';
import { operatorSourceView } from '../views.ts';
import { CliError, runCommand } from './cli-runtime.ts';

interface AddOptions {
  bot: string;
  text?: string;
  title?: string;
  url?: string;
  file?: string;
  type?: string;
  wait?: boolean;
}

/** `source add|delete`. */
export function registerSourceCommands(program: Command): void {
  const source = program.command('source').description('training sources');
  source
    .command('add')
    .requiredOption('--bot <id>', 'chatbot id')
    .option('--text <text>', 'raw text to train on')
    .option('--title <label>', 'label for a text source')
    .option('--url <url>', 'website to crawl')
    .option('--file <path>', 'file to upload (PDF, DOCX, PPTX, TXT, MD, CSV)')
    .option('--type <type>', 'backend source type, with --url')
    .option('--wait', 'return after the source reaches done or failed')
    .action((opts: AddOptions) =>
      runCommand(async (s) => {
        if (opts.url !== undefined || opts.file !== undefined || opts.type !== undefined || opts.wait) {
          throw new CliError('source add: only --text is supported yet (url and file ingestion are not built)');
        }
        if (opts.text === undefined) throw new CliError('source add: one of --text, --url or --file is required');
        await s.chatbots.get(opts.bot);
        const created = await s.sources.create(opts.bot, { type: 'text', title: opts.title, content: opts.text });
        return operatorSourceView(created);
      }),
    );
  source
    .command('delete')
    .requiredOption('--source <id>', 'source id')
    .action((opts: { source: string }) =>
      runCommand(async (s) => {
        await s.sources.softDelete(opts.source);
        return { id: opts.source, deleted: true };
      }),
    );
}
