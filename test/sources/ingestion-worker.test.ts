import { createServer, type Server } from 'node:http';
import { createClient } from 'redis';
import t from 'tap';
import { ingestionWorkerFor } from '../../src/sources/ingestion-worker.ts';
import { createLogger } from '../../src/logger.ts';
import { ConnectorReader } from '../../src/sources/connector-reader.ts';
import { connectorLimits } from '../../src/sources/connectors/connector-settings.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';
import { until } from '../support/until.ts';
import { apiFetch } from '../support/openapi-contract.ts';

const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'answered' });

/** A small website on loopback: two linked pages, one broken link, a sitemap. */
const site: Server = createServer((req, res) => {
  const pages: Record<string, string> = {
    '/': `<html><head><title>Acme Help</title></head><body><nav>Menu Home About</nav>
      <main><h1>Acme Help</h1><p>Welcome to the Acme help centre.</p><a href="/returns">Returns</a>
      <a href="/broken">Broken</a></main><footer>Copyright Acme</footer></body></html>`,
    '/returns': `<html><head><title>Returns</title></head><body><main><h1>Returns policy</h1>
      <p>Unworn shoes can be returned within 30 days for a full refund.</p>
      <p style="display:none">secret hidden coupon code</p></main></body></html>`,
  };
  const page = pages[req.url ?? ''];
  if (req.url === '/robots.txt' || req.url === '/sitemap.xml') {
    res.statusCode = 404;
    res.end();
  } else if (!page) {
    res.statusCode = 500;
    res.end('boom');
  } else {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(page);
  }
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
const siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/`;

/**
 * A site whose start page answers only when `release` is called; it links to `/next`. Records the
 * paths asked for and whether the start page's request was dropped by the crawler.
 */
const slow = { paths: [] as string[], dropped: false, release: () => {} };
const slowSite: Server = createServer((req, res) => {
  slow.paths.push(req.url ?? '');
  if (req.url !== '/') {
    res.statusCode = 404;
    res.end();
    return;
  }
  res.on('close', () => (slow.dropped ||= !res.writableFinished));
  slow.release = () => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(
      '<html><head><title>Slow</title></head><body><main><p>Slow page.</p><a href="/next">Next</a></main></body></html>',
    );
  };
});
await new Promise<void>((resolve) => slowSite.listen(0, '127.0.0.1', resolve));
const slowUrl = `http://127.0.0.1:${(slowSite.address() as { port: number }).port}/`;

const logs: Array<{ msg: string; source_id?: string }> = [];
const logTo = { write: (line: string) => logs.push(JSON.parse(line) as { msg: string }) };
const gw = await startGateway(
  {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    CRAWL_ALLOW_PRIVATE: '1',
    SEARCH_ENGINE: 'in-process',
    LOG_LEVEL: 'warn',
  },
  {},
  logTo,
);
const redis = createClient({ url: gw.redis.url });
await redis.connect();
t.teardown(async () => {
  redis.destroy();
  await gw.stop();
  await openai.stop();
  await new Promise((resolve) => site.close(resolve));
  slowSite.closeAllConnections();
  await new Promise((resolve) => slowSite.close(resolve));
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);

async function settled(sourceId: string) {
  for (let i = 0; i < 300; i += 1) {
    const source = await services.sources.get(sourceId);
    if (source.status === 'done' || source.status === 'failed') return source;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('source never settled');
}

t.test('a text source is ingested and the chat answers from it, end to end', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Shoes' });
  const added = await services.intake.addText(
    bot.id,
    'Our store opens at 9 am and closes at 6 pm on weekdays.',
    'Hours',
  );
  t.equal(added.status, 'pending');
  const done = await settled(added.id);
  t.match(done, { status: 'done', page_count: 0, error: '', title: 'Hours' });
  const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}` },
    body: JSON.stringify({ message: 'When does the store open?', session_id: 'api-hours' }),
  });
  t.same(await res.json(), { response: 'answered' });
  const system = openai.requests.at(-1)!.body.messages[0].content as string;
  t.match(system, /<reference id="1" title="Hours"[^>]*>\nOur store opens at 9 am/);
});

t.test('a url source is crawled: main content only, page titles, page_count, a broken page tolerated', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Site' });
  const added = await services.intake.addUrl(bot.id, siteUrl);
  const done = await settled(added.id);
  t.match(done, { status: 'done', page_count: 2, title: 'Acme Help', url: siteUrl });
  const hits = await gw.app.retrieval.retriever.search(bot.id, 'return shoes refund', 5);
  t.equal(hits[0]!.chunk.title, 'Returns');
  t.equal(hits[0]!.chunk.url, `${siteUrl}returns`);
  const all = hits.map((hit) => hit.chunk.content).join('\n');
  t.notMatch(all, /secret hidden coupon/);
  t.notMatch(all, /Menu Home About/);
  t.notMatch(all, /Copyright Acme/);
});

t.test(
  'a failing source is marked failed with its reason; deleting one removes it from retrieval at once',
  async (t) => {
    const bot = await services.chatbots.create(owner.user.id, { name: 'Failing' });
    const unreachable = await services.intake.addUrl(bot.id, 'http://127.0.0.1:1/');
    const failed = await settled(unreachable.id);
    t.equal(failed.status, 'failed');
    t.match(failed.error, /no page could be read/);
    const kept = await services.intake.addText(bot.id, 'Parking is free behind the building.');
    await settled(kept.id);
    t.equal((await gw.app.retrieval.retriever.search(bot.id, 'parking', 5)).length, 1);
    await services.intake.remove(kept.id, gw.app.retrieval.index);
    t.same(await gw.app.retrieval.retriever.search(bot.id, 'parking', 5), []);
  },
);

t.test('a source left leased by a dead process is ingested again; too many interruptions fail it', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Crashy' });
  const source = await services.sources.create(bot.id, { type: 'text', content: 'Recovered after a crash.' });
  const queue = services.ingestion;
  // The gateway's worker is stopped while the test plays the dead processes, so that it claims
  // nothing in between, and started again as a process would be.
  await gw.app.ingestion.stop();
  // A claim by a process that died a second ago: its 1 ms lease ran out long since.
  await queue.enqueue(bot.id, source.id, 0);
  const claimed = await queue.claimOne(bot.id, source.id, Date.now() * 1000 - 1_000_000, 1);
  t.ok(claimed);
  await services.sources.setStatus(source.id, 'processing');
  gw.app.ingestion.start();
  t.match(await settled(source.id), { status: 'done' });

  await gw.app.ingestion.stop();
  const stuck = await services.sources.create(bot.id, { type: 'text', content: 'Never finishes.' });
  await queue.enqueue(bot.id, stuck.id, 0);
  // Three processes claimed it, a millisecond apart, and died: each claim first puts the lease the
  // one before left (expired by then) back in the queue, as any process's next claim does.
  const at = Date.now() * 1000;
  for (let i = 0; i < 3; i += 1) {
    const claims = await queue.claim(1, at + i * 1000, 1);
    t.same(
      claims.map((claim) => [claim.sourceId, claim.interrupted]),
      [[stuck.id, i]],
      `claim ${i + 1}`,
    );
  }
  gw.app.ingestion.start();
  t.match(await settled(stuck.id), { status: 'failed', error: 'ingestion was interrupted repeatedly' });
  t.equal(await queue.size(), 0);
});

t.test('a run whose lease another claim took stops at its next renewal and writes nothing', async (t) => {
  // The gateway's worker stands aside for one on a simulated clock, whose lease renewals the test times.
  await gw.app.ingestion.stop();
  const clock = new SimulatedClock(Date.now() * 1000);
  const logger = createLogger('warn', logTo);
  const connectors = new ConnectorReader({
    credentials: services.credentials,
    http: services.connectorHttp,
    limits: connectorLimits(gw.config),
    logger,
  });
  const retrieval = gw.app.retrieval;
  const worker = ingestionWorkerFor(
    { ...services, queue: services.ingestion, retrieval, clock, logger, connectors },
    gw.config,
  );
  t.teardown(async () => {
    await worker.stop();
    gw.app.ingestion.start();
  });
  const bot = await services.chatbots.create(owner.user.id, { name: 'Slow' });
  const added = await services.intake.addUrl(bot.id, slowUrl);
  worker.start();
  await until(() => slow.paths.includes('/'), 'the crawl asks for the start page');
  const { keys } = gw.app.services;
  const member = `${bot.id}/${added.id}`;
  // The lease lapsed and another gateway's claim took the source: its token is now the other claim's.
  t.equal(await redis.hSet(keys.ingestLeaseTokens(), member, 'another-claim'), 0);
  // The run finds out at its next renewal, a third of a lease on.
  await clock.advance(gw.config.INGEST_LEASE_MS / 3);
  await until(() => logs.some((l) => l.msg === 'ingestion lease lost' && l.source_id === added.id), 'lease lost');
  await until(() => slow.dropped, "the crawl's request is dropped");
  slow.release();
  const source = await services.sources.get(added.id);
  t.match(source, { status: 'crawling', page_count: 0 }, 'no result written');
  t.same(await gw.app.retrieval.index.chunks.ids(bot.id, added.id), []);
  t.same(slow.paths.toSorted(), ['/', '/robots.txt', '/sitemap.xml'], 'no page asked for after the lease was lost');
  t.equal(await redis.hGet(keys.ingestLeaseTokens(), member), 'another-claim', "the other claim's lease is left alone");
  t.ok(await redis.zScore(keys.ingestLeases(), member), 'and still leased to it');
});

t.test('a progress line that cannot be written fails the crawl it belongs to, not the process', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Unrecorded' });
  const setProgress = services.sources.setProgress.bind(services.sources);
  // Redis refuses the crawl's progress lines (as it does while unreachable); the crawl goes on meanwhile.
  services.sources.setProgress = async (source, line) => {
    if (line.startsWith('crawled')) throw new Error('Redis is not reachable');
    return setProgress(source, line);
  };
  t.teardown(() => {
    delete (services.sources as Partial<typeof services.sources>).setProgress;
  });
  const added = await services.intake.addUrl(bot.id, siteUrl);
  t.match(await settled(added.id), { status: 'failed', error: 'Redis is not reachable' });
});
