import type { Command } from 'commander';
import { runCommand } from './cli-runtime.ts';

/** `lead list`. */
export function registerLeadCommands(program: Command): void {
  const lead = program.command('lead').description('leads left through the widget');
  lead
    .command('list')
    .description('leads of a chatbot, newest first')
    .requiredOption('--bot <id>', 'chatbot id')
    .action((opts: { bot: string }) =>
      runCommand(async (s) => {
        await s.chatbots.get(opts.bot);
        return s.leads.list(opts.bot);
      }),
    );
}
