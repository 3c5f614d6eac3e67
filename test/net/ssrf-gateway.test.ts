import { createClient } from 'redis';
import t from 'tap';
import { NOT_PUBLIC_URL } from '../../src/net/ssrf-guard.ts';
import { REFUSED_DESTINATION } from '../../src/webhooks/webhook-sender.ts';
import { CountingServer, fakeEgress } from '../fakes/fake-egress.ts';
import { cliFailure, runCli } from '../support/cli.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { FAKE_DNS, PUBLIC_ADDRESS, redirectHosts, ssrfCorpus, type CorpusEntry } from './ssrf-corpus.ts';

// The corpus through a real gateway with WEBHOOK_ALLOW_PRIVATE and CRAWL_ALLOW_PRIVATE off (their
// defaults): the dashboard API that creates webhooks and url sources, the webhook dispatcher's
// deliveries and the ingestion worker's crawls. The fake resolver answers the corpus's names and the
// test's agent lands every connection the guard allows on loopback, where a canary listens on the
// port every refused form names: it must never see a connection.
const canary = await new CountingServer((_req, res) => res.end('canary')).start();
const redirects = redirectHosts(canary.port);
const redirector = await new CountingServer((req, res) => {
  const target = redirects.get((req.headers.host ?? '').replace(/:\d+$/, ''));
  res.writeHead(target ? 302 : 404, target ? { location: target } : {});
  res.end();
}).start();
const table = { ...FAKE_DNS };
for (const host of redirects.keys()) table[host] = [PUBLIC_ADDRESS];
const gw = await startGateway(
  { WEBHOOK_POLL_MS: '50', WEBHOOK_TIMEOUT_MS: '2000', SEARCH_ENGINE: 'in-process' },
  { egress: fakeEgress(table) },
);
t.teardown(async () => {
  await gw.stop();
  await Promise.all([canary.stop(), redirector.stop()]);
});
const { services } = gw.app;
const corpus = ssrfCorpus(canary.port, redirector.port);
const owner = await createOwner(gw.app);
const client = await DashboardClient.signIn(gw.baseUrl, owner);
const bot = await services.chatbots.create(owner.id, { name: 'Guarded' });
const redis = await createClient({ url: gw.redis.url }).connect();
t.teardown(() => redis.destroy());

/** What creating `entry` must answer: one text for every refused destination, static rules apart. */
function expectedCreation(entry: CorpusEntry, kind: 'webhook' | 'source'): [number, string | undefined] {
  if (entry.kind === 'redirect') return [201, undefined];
  if (new URL(entry.url).username === '') return [400, NOT_PUBLIC_URL];
  return [
    400,
    kind === 'webhook'
      ? 'url must not contain credentials.'
      : 'url must be an absolute http or https URL without credentials.',
  ];
}

async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

t.test(`the dashboard API refuses all ${corpus.length} forms alike, for webhooks and url sources`, async (t) => {
  t.ok(corpus.length >= 60);
  for (const entry of corpus) {
    const hook = await client.post(`/dashboard/api/chatbots/${bot.id}/webhooks`, {
      url: entry.url,
      events: ['message.received'],
    });
    const source = await client.post(`/dashboard/api/chatbots/${bot.id}/sources`, { type: 'url', url: entry.url });
    for (const [kind, res] of [
      ['webhook', hook],
      ['source', source],
    ] as const) {
      const [status, detail] = expectedCreation(entry, kind);
      t.same(
        [res.status, detail === undefined ? undefined : res.body],
        [status, detail && { detail }],
        `${kind} ${entry.url}`,
      );
    }
    if (hook.status === 201) await services.webhooks.delete(hook.body.id);
  }
});

t.test('the CLI checks url sources and webhooks the same way (statically; no gateway-side fetch)', async (t) => {
  const env = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
  for (const url of [
    `http://[::127.0.0.1]:${canary.port}/`,
    `http://0x7f.1:${canary.port}/`,
    `http://localhost.:${canary.port}/`,
  ]) {
    t.same(await runCli(['source', 'add', '--bot', bot.id, '--url', url], env), cliFailure(NOT_PUBLIC_URL), url);
    t.same(
      await runCli(['webhook', 'create', '--bot', bot.id, '--url', url, '--events', 'message.received'], env),
      cliFailure(NOT_PUBLIC_URL),
      url,
    );
  }
});

t.test('stored anyway, none of them is ever delivered to: every attempt is refused or not followed', async (t) => {
  const deliveries: Array<[CorpusEntry, string]> = [];
  for (const entry of corpus) {
    // Written past the creation check, as a record from before it (or from an allow-private gateway).
    const hook = await services.webhooks.create(bot.id, `https://${PUBLIC_ADDRESS}/hook`, ['message.received']);
    await writeUrl(hook.id, entry.url);
    const res = await client.post(`/dashboard/api/webhooks/${hook.id}/test`, { event: 'message.received' });
    t.equal(res.status, 201, entry.url);
    deliveries.push([entry, res.body.id as string]);
  }
  for (const [entry, id] of deliveries) {
    const attempt = await until(async () => (await services.deliveries.get(id)).attempts[0], `${entry.url} attempted`);
    const expected = entry.kind === 'redirect' ? [302, null] : [null, REFUSED_DESTINATION];
    t.same([attempt.status_code, attempt.error], expected, entry.url);
  }
  t.equal(canary.connections, 0, 'the canary saw no connection');
  const askedHosts = new Set(redirector.requests.map((req) => req.host.replace(/:\d+$/, '')));
  t.same([...askedHosts].sort(), [...redirects.keys()].sort(), 'each public-looking site was posted to');
});

t.test('stored anyway, no url source is ever crawled into a refused destination', async (t) => {
  const before = redirector.requests.length;
  const ids: string[] = [];
  for (const entry of corpus) {
    const source = await services.sources.create(bot.id, { type: 'url', url: entry.url });
    await services.ingestion.enqueue(bot.id, source.id, Date.now() * 1000);
    ids.push(source.id);
  }
  gw.app.ingestion.kick();
  for (const [i, id] of ids.entries()) {
    const source = await until(async () => {
      const found = await services.sources.get(id);
      return found.status === 'failed' || found.status === 'done' ? found : undefined;
    }, `${corpus[i]!.url} ingested`);
    t.same(
      [source.status, /is not a public address/.test(source.error)],
      ['failed', true],
      `${corpus[i]!.url}: ${source.error}`,
    );
  }
  t.equal(canary.connections, 0, 'the canary saw no connection');
  t.same(
    redirector.requests.slice(before).map((req) => req.path),
    [...redirects.keys()].map(() => '/robots.txt'),
    'each public-looking site was asked for its robots.txt, whose redirect was refused',
  );
});

/** Sets a stored webhook's URL without the creation check. */
async function writeUrl(webhookId: string, url: string): Promise<void> {
  await redis.hSet(services.keys.webhook(bot.id, webhookId), 'url', url);
}
