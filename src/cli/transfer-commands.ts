import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { systemClock } from '../clock.ts';
import type { Services } from '../services.ts';
import { readExportStream } from '../transfer/export-stream.ts';
import { exportOwner } from '../transfer/owner-export.ts';
import { importOwner } from '../transfer/owner-import.ts';
import { CliError, runCommand, runStreamingCommand } from './cli-runtime.ts';

/**
 * `export --user ID [--file PATH]` and `import [--file PATH] [--user ID] [--plan P]`: an owner's
 * chatbots, settings, sources, conversations, leads and webhooks as one JSON Lines stream, for moving
 * them between installs. Without `--file`, export prints the stream itself (each line one JSON value,
 * the one command whose stdout is more than one), and import reads it from stdin.
 */
export function registerTransferCommands(program: Command): void {
  program
    .command('export')
    .description(
      "an owner's chatbots, sources, conversations, leads and webhooks as JSON Lines (see the operator guide)",
    )
    .requiredOption('--user <id>', 'owner account id')
    .option('--file <path>', 'write the stream to this file and print a summary instead')
    .action((opts: { user: string; file?: string }) => {
      if (opts.file === undefined) {
        return runStreamingCommand(async (s, _context, write) => {
          for await (const record of exportOwner(s, opts.user, systemClock.nowMicros())) {
            await write(JSON.stringify(record));
          }
        });
      }
      const file = opts.file;
      return runCommand(async (s) => {
        await s.accounts.get(opts.user);
        let counts: unknown;
        const lines = async function* (records: ReturnType<typeof exportOwner>) {
          for await (const record of records) {
            if (record.type === 'end') counts = record.counts;
            yield `${JSON.stringify(record)}\n`;
          }
        };
        // Written as it is read (the file is only complete, with its end line, once it succeeded).
        await pipeline(
          Readable.from(lines(exportOwner(s, opts.user, systemClock.nowMicros()))),
          createWriteStream(file),
        );
        return { user_id: opts.user, file, counts };
      });
    });
  program
    .command('import')
    .description('an export (from stdin or --file) into this install; sources are queued for the gateways')
    .option('--file <path>', 'read the stream from this file (default: stdin)')
    .option('--user <id>', "import into this existing account instead of creating the export's")
    .option('--plan <plan>', "the new account's plan (default: the export's)")
    .action((opts: { file?: string; user?: string; plan?: string }) =>
      runCommand(async (s) => {
        const text = await readInput(opts.file);
        return importOwner(importDeps(s), readExportStream(text), { userId: opts.user, plan: opts.plan });
      }),
    );
}

function importDeps(s: Services) {
  return { ...s, clock: systemClock };
}

async function readInput(file: string | undefined): Promise<string> {
  if (file !== undefined) return readFile(file, 'utf8');
  if (process.stdin.isTTY) throw new CliError('import: give the export on stdin or with --file');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
