import type { Command } from 'commander';
import { ValidationError } from '../errors.ts';
import { BACKEND_ONLY_TYPES } from '../sources/connectors/connector.ts';
import { runCommand } from './cli-runtime.ts';
import { readPassword } from './password-prompt.ts';

/** `user create|list|plan|password|invite|connectors` and `key create|list|revoke`. */
export function registerAccountCommands(program: Command): void {
  const user = program.command('user').description('owner accounts');
  user
    .command('create')
    .requiredOption('--email <email>', 'account email address')
    .option('--plan <plan>', "plan name (see PLAN_QUOTAS; default: the gateways' DEFAULT_PLAN)")
    .action((opts: { email: string; plan?: string }) =>
      runCommand(async (s, { config }) => {
        // The gateways' default; the CLI's own only when no gateway has run on this Redis.
        const plan = opts.plan ?? (await s.gateways.setup())?.default_plan ?? config.DEFAULT_PLAN;
        return s.accounts.create(opts.email, plan);
      }),
    );
  user
    .command('list')
    .description('every owner account, newest first')
    .action(() => runCommand((s) => s.accounts.list()));
  user
    .command('plan')
    .requiredOption('--user <id>', 'account id')
    .requiredOption('--plan <plan>', 'plan name (see PLAN_QUOTAS)')
    .action((opts: { user: string; plan: string }) => runCommand((s) => s.accounts.setPlan(opts.user, opts.plan)));
  user
    .command('password')
    .description('set the dashboard password (read from stdin; ends every dashboard session of the owner)')
    .requiredOption('--user <id>', 'account id')
    .action((opts: { user: string }) =>
      runCommand(async (s) => {
        const account = await s.ownerAuth.setPassword(opts.user, await readPassword(process.stdin, process.stderr));
        return { id: account.id, email: account.email, password_set: true };
      }),
    );
  user
    .command('invite')
    .description('a one-time link whose page lets the owner set a dashboard password')
    .requiredOption('--user <id>', 'account id')
    .option('--hours <n>', 'how long the link works', '72')
    .action((opts: { user: string; hours: string }) =>
      runCommand(async (s, { config }) => {
        // The gateways' address; the CLI's own settings only when no gateway has run on this Redis.
        const base = (await s.gateways.linkBase()) ?? config.PUBLIC_URL ?? `http://localhost:${config.PORT}`;
        return s.ownerAuth.invite(opts.user, base, Number(opts.hours));
      }),
    );

  user
    .command('connectors')
    .description('backend-only source types (onedrive, sharepoint, zendesk, gitbook) for an account')
    .requiredOption('--user <id>', 'account id')
    .option('--enable <types>', 'comma-separated types to enable')
    .option('--disable <types>', 'comma-separated types to disable')
    .action((opts: { user: string; enable?: string; disable?: string }) =>
      runCommand(async (s) => {
        const connectors = await s.accounts.setConnectors(
          opts.user,
          backendTypes(opts.enable),
          backendTypes(opts.disable),
        );
        return { user_id: opts.user, connectors };
      }),
    );

  const key = program.command('key').description('API keys');
  key
    .command('create')
    .requiredOption('--user <id>', 'account id')
    .requiredOption('--name <name>', 'label for the key')
    .action((opts: { user: string; name: string }) => runCommand((s) => s.apiKeys.create(opts.user, opts.name)));
  key
    .command('list')
    .requiredOption('--user <id>', 'account id')
    .action((opts: { user: string }) => runCommand((s) => s.apiKeys.list(opts.user)));
  key
    .command('revoke')
    .requiredOption('--user <id>', 'account id')
    .requiredOption('--key <id>', 'key id')
    .action((opts: { user: string; key: string }) => runCommand((s) => s.apiKeys.revoke(opts.user, opts.key)));
}

/** A comma-separated list of backend-only source types. */
function backendTypes(list: string | undefined): string[] {
  const types = (list ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = types.find((t) => !(BACKEND_ONLY_TYPES as readonly string[]).includes(t));
  if (unknown !== undefined) throw new ValidationError(`connectors must be among: ${BACKEND_ONLY_TYPES.join(', ')}.`);
  return types;
}
