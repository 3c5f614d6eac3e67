import type { Command } from 'commander';
import { checkUnansweredStatus } from '../unanswered/unanswered-status.ts';
import { runCommand } from './cli-runtime.ts';

/** `unanswered list`. */
export function registerUnansweredCommands(program: Command): void {
  const unanswered = program.command('unanswered').description('questions a chatbot did not answer well');
  unanswered
    .command('list')
    .description('groups of questions, open ones last asked first (resolved ones last resolved first)')
    .requiredOption('--bot <id>', 'chatbot id')
    .option('--status <status>', 'open or resolved', 'open')
    .action((opts: { bot: string; status: string }) =>
      runCommand(async (s) => {
        const status = checkUnansweredStatus(opts.status);
        await s.chatbots.get(opts.bot);
        return s.unanswered.list(opts.bot, status);
      }),
    );
}
