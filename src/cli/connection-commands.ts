import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { OAUTH_STATE_TTL_SECONDS } from '../connections/oauth-flow.ts';
import { assertOAuthService, isOAuthService } from '../connections/oauth-clients.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import type { Services } from '../services.ts';
import { CONNECTION_SERVICES, type ConnectionService } from '../sources/connectors/connector.ts';
import type { NewConnection } from '../connections/connection.ts';
import { connectionView } from '../views.ts';
import { CliError, runCommand } from './cli-runtime.ts';

interface CreateOptions {
  user: string;
  service: string;
  token?: string;
  email?: string;
  baseUrl?: string;
  serviceAccountFile?: string;
  clientId?: string;
  clientSecret?: string;
  tenant?: string;
  includeRestricted?: boolean;
  includeDrafts?: boolean;
}

/** `connection create|list|delete|oauth`. */
export function registerConnectionCommands(program: Command): void {
  const connection = program.command('connection').description("users' connections to knowledge services");
  connection
    .command('create')
    .requiredOption('--user <id>', 'account id')
    .requiredOption('--service <service>', CONNECTION_SERVICES.join('|'))
    .option('--token <token>', 'API or integration token (notion, zendesk, gitbook)')
    .option('--email <email>', 'the agent email the Zendesk API token belongs to')
    .option('--base-url <url>', 'the Zendesk help centre, like https://acme.zendesk.com')
    .option('--service-account-file <path>', 'a Google service account JSON key (google_drive)')
    .option('--client-id <id>', 'Microsoft app-only: application (client) id')
    .option('--client-secret <secret>', 'Microsoft app-only: client secret')
    .option('--tenant <tenant>', 'Microsoft app-only: tenant id or domain')
    .option('--include-restricted', 'zendesk: also read articles restricted to a user segment')
    .option('--include-drafts', 'zendesk: also read draft articles')
    .action((opts: CreateOptions) =>
      runCommand(async (s) => {
        await s.accounts.get(opts.user);
        return connectionView(await s.connections.create(opts.user, await newConnection(opts)));
      }),
    );
  connection
    .command('list')
    .requiredOption('--user <id>', 'account id')
    .action((opts: { user: string }) =>
      runCommand(async (s) => {
        await s.accounts.get(opts.user);
        return (await s.connections.listForUser(opts.user)).map(connectionView);
      }),
    );
  connection
    .command('delete')
    .requiredOption('--connection <id>', 'connection id')
    .action((opts: { connection: string }) =>
      runCommand(async (s) => {
        await s.connections.delete(opts.connection);
        return { id: opts.connection, deleted: true };
      }),
    );
  connection
    .command('oauth')
    .description('prints a sign-in link on stderr and waits (10 minutes) for the owner to allow access')
    .requiredOption('--user <id>', 'account id')
    .requiredOption('--service <service>', 'google_drive|dropbox|microsoft')
    .action((opts: { user: string; service: string }) => runCommand(async (s) => oauth(s, opts.user, opts.service)));
}

async function newConnection(opts: CreateOptions): Promise<NewConnection> {
  const service = opts.service as ConnectionService;
  if (!(CONNECTION_SERVICES as readonly string[]).includes(service)) {
    throw new ValidationError(`service must be one of: ${CONNECTION_SERVICES.join(', ')}.`);
  }
  if (service === 'google_drive' && opts.serviceAccountFile !== undefined) {
    const json = await readFile(opts.serviceAccountFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new CliError(`connection create: cannot read ${opts.serviceAccountFile}: ${error.code ?? error.message}`);
    });
    // Loaded here only: google-auth-library is large, and no other command needs it.
    const { parseServiceAccountKey } = await import('../connections/google-service-account.ts');
    const key = parseServiceAccountKey(json);
    return { service, authKind: 'service_account', secret: { key: json }, label: key.client_email };
  }
  if (service === 'microsoft' && opts.clientId !== undefined) {
    if (!opts.clientSecret || !opts.tenant) {
      throw new ValidationError('--client-id needs --client-secret and --tenant (Microsoft app-only access).');
    }
    const secret = { client_id: opts.clientId, client_secret: opts.clientSecret, tenant: opts.tenant };
    return { service, authKind: 'client_credentials', secret, label: opts.tenant };
  }
  if (isOAuthService(service)) {
    throw new ValidationError(
      service === 'google_drive'
        ? 'google_drive connections take --service-account-file, or connect with `connection oauth`.'
        : service === 'microsoft'
          ? 'microsoft connections take --client-id, --client-secret and --tenant, or connect with `connection oauth`.'
          : 'dropbox connections are made with `connection oauth`.',
    );
  }
  const token = opts.token?.trim();
  if (!token) throw new ValidationError(`--token is required for ${service} connections.`);
  if (service !== 'zendesk') return { service, authKind: 'token', secret: { token } };
  if (!opts.email || !opts.baseUrl) {
    throw new ValidationError(
      'zendesk connections need --email and --base-url (the help centre, like https://acme.zendesk.com).',
    );
  }
  const base = URL.parse(opts.baseUrl);
  if (!base || (base.protocol !== 'https:' && base.protocol !== 'http:')) {
    throw new ValidationError('--base-url must be the help centre URL, like https://acme.zendesk.com.');
  }
  const secret: Record<string, string> = { token, email: opts.email };
  if (opts.includeRestricted) secret.include_restricted = 'true';
  if (opts.includeDrafts) secret.include_drafts = 'true';
  return { service, authKind: 'token', secret, label: opts.email, baseUrl: base.origin };
}

/**
 * Starts an OAuth sign-in for the operator: the link goes to a gateway (the only place that holds
 * the OAuth client and receives the callback), which sends the browser on to the service; this
 * command waits for the gateway to record the result.
 */
async function oauth(s: Services, userId: string, service: string): Promise<unknown> {
  assertOAuthService(service);
  await s.accounts.get(userId);
  const publicUrl = await s.gateways.publicUrl();
  if (!publicUrl) {
    throw new CliError(
      'connection oauth: no gateway has published its PUBLIC_URL; start a gateway with PUBLIC_URL set.',
    );
  }
  const state = await s.oauth.begin(service, userId, { kind: 'cli' });
  const link = `${publicUrl.replace(/\/+$/, '')}/dashboard/oauth/${service}/start?state=${state}`;
  process.stderr.write(
    `Open this link and allow access (it works for ${OAUTH_STATE_TTL_SECONDS / 60} minutes):\n${link}\n`,
  );
  for (;;) {
    const attempt = await s.oauth.attempt(state);
    if (!attempt) throw new CliError('connection oauth: the sign-in link expired before access was allowed.');
    if (attempt.status === 'failed') throw new CliError(`connection oauth: ${attempt.error}`);
    if (attempt.status === 'done') {
      const connection = await s.connections.get(attempt.connectionId).catch((error: unknown) => {
        throw error instanceof NotFoundError
          ? new CliError('connection oauth: the connection was deleted meanwhile.')
          : error;
      });
      return connectionView(connection);
    }
    await sleep(500);
  }
}
