import type { Command } from 'commander';
import type { Agent } from '../agents/agent.ts';
import { runCommand } from './cli-runtime.ts';

const view = ({ id, name, created_at, active }: Agent) => ({ id, name, created_at, active });

/** `agent create|list|revoke`. */
export function registerAgentCommands(program: Command): void {
  const agent = program.command('agent').description('human agents');
  agent
    .command('create')
    .description('a new agent; its token is shown once')
    .requiredOption('--user <id>', 'owner account id')
    .requiredOption('--name <name>', 'the name visitors and other agents see')
    .option('--initial <letters>', "one or two letters for the agent's avatar (default: the name's first letter)")
    .action((opts: { user: string; name: string; initial?: string }) =>
      runCommand((s) => s.agents.create(opts.user, opts.name, opts.initial ?? '')),
    );
  agent
    .command('list')
    .requiredOption('--user <id>', 'owner account id')
    .action((opts: { user: string }) =>
      runCommand(async (s) => {
        await s.accounts.get(opts.user);
        return (await s.agents.list(opts.user)).map(view);
      }),
    );
  agent
    .command('revoke')
    .requiredOption('--agent <id>', 'agent id')
    .action((opts: { agent: string }) => runCommand(async (s) => view(await s.agents.revoke(opts.agent))));
}
