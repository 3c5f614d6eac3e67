// Issue 18: with Redis down, requests queued behind the reconnecting client and hung. Now they fail
// fast, /readyz says so, and the gateway carries on by itself once Redis is back, having lost
// nothing it acknowledged.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { freePort } from '../support/redis-server.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'sb-outage-'));
const port = await freePort();
const url = `redis://127.0.0.1:${port}`;

/** redis-server on `port`, writing every command to its append-only file before answering. */
async function startDurableRedis(): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always'],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 200; i += 1) {
    const ready = await fetch(`http://127.0.0.1:${port}`).then(
      () => true,
      (error: { cause?: { code?: string } }) => error.cause?.code !== 'ECONNREFUSED',
    );
    if (ready) return child;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('redis-server did not start');
}

let redis = await startDurableRedis();
const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'Hello from the assistant.' });
const config = loadConfig({
  REDIS_URL: url,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  LLM_MAX_RETRIES: '0',
  SEARCH_ENGINE: 'in-process',
});
const app = await startApp(config, createLogger('silent'), { shutdownGraceMs: 1000 });
const baseUrl = `http://127.0.0.1:${app.port}`;
t.teardown(async () => {
  await app.stop();
  redis.kill('SIGKILL');
  await openai.stop();
  rmSync(dir, { recursive: true, force: true });
});

const owner = await createOwner(app);
const key = (await app.services.apiKeys.create(owner.id, 'outage')).key;
const bot = await app.services.chatbots.create(owner.id, {
  name: 'Outage Bot',
  provider: 'chatgpt',
  model: 'gpt-test',
});
const dashboard = await DashboardClient.signIn(baseUrl, owner);

const timed = async (request: () => Promise<Response>) => {
  const started = performance.now();
  const response = await request();
  return { status: response.status, body: await response.json(), ms: performance.now() - started };
};
const chat = (message: string) =>
  timed(() =>
    fetch(`${baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message, session_id: 'outage-visitor' }),
    }),
  );

t.test('Redis killed and restarted: requests fail fast, /readyz says so, nothing acknowledged is lost', async (t) => {
  for (const message of ['first question', 'second question']) {
    t.same((await chat(message)).body, { response: 'Hello from the assistant.' });
  }

  redis.kill('SIGKILL');
  await new Promise((resolve) => redis.once('exit', resolve));
  // The client notices the connection is gone.
  let ready = await timed(() => fetch(`${baseUrl}/readyz`));
  for (let i = 0; i < 200 && ready.status === 200; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    ready = await timed(() => fetch(`${baseUrl}/readyz`));
  }
  t.same([ready.status, ready.body], [503, { detail: 'Redis is not reachable.' }]);
  const down = await chat('asked while Redis is down');
  // The public API's statuses are SPEC's: an outage is its "internal fault".
  t.same([down.status, down.body], [500, { detail: 'Internal server error.' }]);
  const page = await dashboard.get('/dashboard/api/chatbots');
  t.same([page.status, page.body], [503, { detail: 'Service unavailable: Redis is not reachable.' }]);
  t.ok(
    ready.ms < 1000 && down.ms < 1000,
    `answered at once (readyz ${ready.ms.toFixed(0)} ms, chat ${down.ms.toFixed(0)} ms)`,
  );
  const health = await timed(() => fetch(`${baseUrl}/healthz`));
  t.same([health.status, health.body], [200, { status: 'ok' }]);

  redis = await startDurableRedis();
  let back = ready;
  for (let i = 0; i < 300 && back.status !== 200; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    back = await timed(() => fetch(`${baseUrl}/readyz`));
  }
  t.same([back.status, back.body], [200, { status: 'ready' }], 'the gateway reconnected by itself');
  t.same((await chat('third question')).body, { response: 'Hello from the assistant.' });
  const transcript = await app.services.conversations.transcript(bot.id, 'outage-visitor');
  t.same(
    transcript.messages.filter((m) => m.role === 'user').map((m) => m.content),
    ['first question', 'second question', 'third question'],
    'every acknowledged message kept; the refused one never stored',
  );
});
