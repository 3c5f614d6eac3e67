import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { hashApiKey } from '../src/auth/api-key-token.ts';
import { runCli } from './support/cli.ts';
import { spawnGateway } from './support/gateway-process.ts';
import { startRedis } from './support/redis-server.ts';
import { until } from './support/until.ts';
import { apiFetch } from './support/openapi-contract.ts';

t.test('SIGTERM stops the gateway cleanly; logs carry request ids and never a key, hash or secret', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { REDIS_URL: redis.url, PATH: process.env.PATH ?? '' };
  const user = JSON.parse(
    (await runCli(['user', 'create', '--email', 'logs@example.com', '--plan', 'scale'], env)).stdout,
  );
  const key = JSON.parse((await runCli(['key', 'create', '--user', user.id, '--name', 'k'], env)).stdout).key as string;
  const gw = await spawnGateway({ REDIS_URL: redis.url, LOG_LEVEL: 'info' });
  const ok = await apiFetch(`${gw.baseUrl}/api/v1/chatbots`, { headers: { authorization: `Bearer ${key}` } });
  t.equal(ok.status, 200);
  const requestId = ok.headers.get('x-request-id');
  await apiFetch(`${gw.baseUrl}/api/v1/chatbots?key=${key}`, { headers: { authorization: `Basic ${key}` } });
  await apiFetch(`${gw.baseUrl}/api/v1/chatbots`, { headers: { authorization: `Bearer ${key}x` } });
  gw.child.kill('SIGTERM');
  t.same(await gw.exited, { code: 0, signal: null });
  const logs = gw.stdout();
  const lines = logs
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  t.ok(
    lines.some(
      (l) => l.msg === 'request' && l.req_id === requestId && l.status === 200 && l.path === '/api/v1/chatbots',
    ),
  );
  const ready = lines.find((l) => l.msg === 'gateway ready');
  t.same(
    ready && {
      dashboard: ready.dashboard,
      api: ready.api,
      widget_script: ready.widget_script,
      providers: ready.providers,
      embeddings: ready.embeddings,
      data: ready.data,
      setup_url: ready.setup_url,
    },
    {
      dashboard: `${gw.baseUrl}/dashboard`,
      api: `${gw.baseUrl}/api/v1`,
      widget_script: `${gw.baseUrl}/widget.js`,
      providers: { chatgpt: false, gemini: false, ollama: true },
      embeddings: 'local',
      data: `Redis at 127.0.0.1:${redis.port}`,
      setup_url: undefined,
    },
    'off a terminal, where to go next is one log line (no setup link: an owner exists)',
  );
  const shutdown = lines.findIndex((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM');
  t.ok(shutdown >= 0);
  t.ok(lines.findIndex((l) => l.msg === 'gateway stopped') > shutdown);
  t.notOk(logs.includes(key.slice(3, 20)), 'no part of the key');
  t.notOk(logs.includes(hashApiKey(key)), 'no key hash');
  t.notOk(logs.includes(hashApiKey(`${key}x`)));
  t.equal(gw.stderr(), '');
});

t.test('at a terminal: log lines a person reads, and the banner with the first-run link', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const gw = await spawnGateway({ REDIS_URL: redis.url, LOG_LEVEL: 'info' }, { terminal: true });
  const banner = await until(
    () => /Switchboard is running\.[^]*restarting the gateway prints a new one\)/.exec(gw.stdout()) ?? undefined,
    'the banner',
  );
  const lines = banner[0].split(/\r?\n/);
  t.same(lines.slice(0, 7), [
    'Switchboard is running.',
    `  Dashboard   ${gw.baseUrl}/dashboard`,
    `  API         ${gw.baseUrl}/api/v1`,
    `  Widget      <script src="${gw.baseUrl}/widget.js" data-chatbot="CHATBOT_ID" defer></script>`,
    '  Providers   chatgpt (no API key), gemini (no API key), ollama',
    '  Embeddings  local',
    `  Data        Redis at 127.0.0.1:${redis.port}`,
  ]);
  t.equal(lines[7], 'Next: create the owner account at');
  t.match(lines[8], new RegExp(`^  ${gw.baseUrl}/dashboard/#/setup/[A-Za-z0-9_-]{43}$`));
  // pino-pretty's lines: time of day, coloured level, message, then each field on its own line.
  const plain = gw.stdout().replaceAll(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
  t.match(plain, /^\[\d\d:\d\d:\d\d\] INFO: gateway listening\r?\n {4}port: \d+\r?\n {4}host: "127\.0\.0\.1"/m);
  t.notMatch(plain, /"msg":/, 'no JSON at a terminal');
  gw.child.kill('SIGTERM');
  await gw.exited;
});

t.test('without REDIS_URL the gateway runs its own redis-server under DATA_DIR and stops it', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sb-managed-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const env = { DATA_DIR: dataDir, PATH: process.env.PATH ?? '' };
  const gw = await spawnGateway({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
  t.match(gw.stdout(), /"managed redis-server started"/);
  const readyLine = await until(
    () =>
      gw
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((l) => l.msg === 'gateway ready'),
    "the 'gateway ready' line",
  );
  const setupUrl = String(readyLine?.setup_url);
  t.match(setupUrl, new RegExp(`^${gw.baseUrl}/dashboard/#/setup/[A-Za-z0-9_-]{43}$`), 'no owner yet: the setup link');
  const setup = await fetch(`${gw.baseUrl}/dashboard/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: gw.baseUrl },
    body: JSON.stringify({
      token: setupUrl.split('/').pop(),
      email: 'first@example.com',
      password: 'a long passphrase',
    }),
  });
  t.same(
    [setup.status, ((await setup.json()) as { user?: { email: string } }).user?.email],
    [200, 'first@example.com'],
  );
  const ready = await fetch(`${gw.baseUrl}/readyz`);
  t.same([ready.status, await ready.json()], [200, { status: 'ready' }]);
  // The CLI finds the gateway's server through the socket under DATA_DIR.
  const created = await runCli(['user', 'create', '--email', 'managed@example.com', '--plan', 'scale'], env);
  t.equal(created.code, 0);
  gw.child.kill('SIGTERM');
  t.same(await gw.exited, { code: 0, signal: null });
  t.notOk(existsSync(path.join(dataDir, 'redis.sock')), 'the managed server is gone');
  t.ok((await readdir(path.join(dataDir, 'redis', 'appendonlydir'))).length > 0, 'AOF files under DATA_DIR');
  // Data survives: a CLI run starts the managed server from the AOF, then stops it again.
  const duplicate = await runCli(['user', 'create', '--email', 'managed@example.com'], env);
  t.same(duplicate, { code: 1, stdout: '', stderr: 'A user with this email already exists.\n' });
  t.notOk(existsSync(path.join(dataDir, 'redis.sock')), 'the CLI stopped the server it started');
});

t.test('without redis-server installed, one line says how to install it or set REDIS_URL', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sb-noredis-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const env = { DATA_DIR: dataDir, PATH: path.dirname(process.execPath) };
  const result = await runCli(['user', 'create', '--email', 'x@example.com'], env);
  t.same(result, {
    code: 1,
    stdout: '',
    stderr: 'redis-server is not installed: install it (apt-get install redis-server) or set REDIS_URL\n',
  });
});

t.test('a bad configuration value stops startup with a message naming it', async (t) => {
  await t.rejects(spawnGateway({ PORT_OVERRIDE: '', CONVERSATION_IDLE_MS: 'soon' }), /Invalid CONVERSATION_IDLE_MS/);
});

// A Redis that cannot be reached printed node-redis's stack trace instead of the one-line reason.
t.test('an unreachable REDIS_URL stops startup with one line', async (t) => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const child = spawn(process.execPath, [path.resolve(import.meta.dirname, '../src/main.ts')], {
    env: { PATH: process.env.PATH ?? '', REDIS_URL: `redis://127.0.0.1:${port}` },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 1);
  t.equal(stderr, `switchboard: Redis is not reachable at 127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}\n`);
});

// Issue 18 (and 20): a busy port crashed the process with a stack trace, leaving its redis-server.
t.test('a port in use stops startup with one line, and the managed redis-server is stopped', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sb-busy-'));
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    busy.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const port = (busy.address() as AddressInfo).port;
  const child = spawn(process.execPath, [path.resolve(import.meta.dirname, '../src/main.ts')], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 1);
  t.equal(
    stderr,
    `switchboard: 127.0.0.1:${port} is in use by another process: set PORT (or HOST) to a free address\n`,
  );
  t.notOk(existsSync(path.join(dataDir, 'redis.sock')), 'the managed server is gone');
});
