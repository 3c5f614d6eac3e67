import type { Command } from 'commander';
import { runCommand } from './cli-runtime.ts';

/** `canned list|add|delete`: an owner's canned replies for their agents (the dashboard's Canned replies page). */
export function registerCannedCommands(program: Command): void {
  const canned = program.command('canned').description("an owner's canned replies for agents");
  canned
    .command('list')
    .description("the owner's canned replies, by shortcut")
    .requiredOption('--user <id>', 'owner account id')
    .action((opts: { user: string }) =>
      runCommand(async (s) => {
        await s.accounts.get(opts.user);
        return s.cannedReplies.list(opts.user);
      }),
    );
  canned
    .command('add')
    .description('a new canned reply')
    .requiredOption('--user <id>', 'owner account id')
    .requiredOption('--shortcut <shortcut>', 'what agents type after / (1-32 of a-z, 0-9, - and _)')
    .requiredOption('--text <text>', 'the reply (1-4000 characters)')
    .action((opts: { user: string; shortcut: string; text: string }) =>
      runCommand((s) => s.cannedReplies.create(opts.user, { shortcut: opts.shortcut, text: opts.text })),
    );
  canned
    .command('delete')
    .requiredOption('--user <id>', 'owner account id')
    .requiredOption('--reply <id>', 'canned reply id')
    .action((opts: { user: string; reply: string }) =>
      runCommand(async (s) => {
        await s.cannedReplies.delete(opts.user, opts.reply);
        return { id: opts.reply.toLowerCase(), deleted: true };
      }),
    );
}
