import t from 'tap';
import { startApp, type App } from '../../src/app.ts';
import { fixedTimeClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import type { Source } from '../../src/sources/source.ts';
import { FakeDropbox } from '../fakes/fake-dropbox.ts';
import { FakeOpenAiEmbeddings } from '../fakes/fake-openai-embeddings.ts';
import { FakeSite, html } from '../ingest/fake-site.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';

// Re-sync with change detection, against a loopback site and the Dropbox fake, with a provider
// embedder (OpenAI's wire protocol on loopback) that records every text it embeds. Time is a
// simulated clock: a week passes when the test says so.
const DAY_US = 24 * 60 * 60 * 1_000_000;
let now = Date.now() * 1000;
const clock = fixedTimeClock(() => now);

const site = await new FakeSite().start();
const embeddings = await new FakeOpenAiEmbeddings().start();
const dropbox = await new FakeDropbox().start();
const env = {
  CRAWL_ALLOW_PRIVATE: '1',
  SEARCH_ENGINE: 'in-process',
  EMBEDDINGS: 'openai:fake-embed',
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: embeddings.url,
  DROPBOX_API_BASE_URL: dropbox.apiUrl,
  DROPBOX_CONTENT_BASE_URL: dropbox.contentUrl,
  DROPBOX_APP_KEY: 'fake-app-key',
  DROPBOX_APP_SECRET: 'fake-app-secret',
  SECRET_KEY: '5e'.repeat(32),
};
const gw = await startGateway(env, { clock });
t.teardown(async () => {
  await gw.stop();
  await site.stop();
  await embeddings.stop();
  await dropbox.stop();
});
const { services } = gw.app;

/** Words enough for a section of its own chunk (a chunk closes at a heading once it holds 100 tokens). */
const prose = (topic: string) =>
  Array.from({ length: 12 }, (_, n) => `The ${topic} rule number ${n} says what to do about ${topic}.`).join(' ');

/** The source's chunks by id: their text, to compare before and after. */
async function chunkTexts(source: Source): Promise<Map<string, string>> {
  const chunks = await gw.app.retrieval.chunks.forSource(source.chatbot_id, source.id);
  return new Map(chunks.map((chunk) => [chunk.id, chunk.content]));
}

/** Waits until a source's last sync ended after `after` (ISO), and returns the source and the sync. */
async function syncedAfter(sourceId: string, after: string) {
  return until(async () => {
    const source = await services.sources.get(sourceId);
    const state = await services.intake.syncState(source);
    const progress = await services.sources.progress(source);
    const settled = source.status === 'done' || source.status === 'failed';
    return settled && state && state.last_sync.at > after && progress === '' && { source, state };
  }, 'the sync');
}

/** Lets a week and a second pass, and has every gateway look for due work. */
function weekPasses(...apps: App[]): void {
  now += 7 * DAY_US + 1_000_000;
  for (const app of apps) app.ingestion.kick();
}

t.test(
  'a changed site: the edited page alone is re-embedded, only its changed chunk, the removed page pruned, the new one added',
  async (t) => {
    const { user } = await scaleAccount(gw.app);
    const bot = await services.chatbots.create(user.id, { name: 'Site' });
    let version = 1;
    const sitemapEntries = () =>
      [
        `<url><loc>${site.url}/a</loc><lastmod>2026-11-01</lastmod></url>`,
        `<url><loc>${site.url}/b</loc></url>`,
        `<url><loc>${site.url}/c</loc></url>`,
        version === 1 ? `<url><loc>${site.url}/d</loc></url>` : `<url><loc>${site.url}/e</loc></url>`,
      ].join('');
    site.routes.set('/sitemap.xml', () => ({
      headers: { 'content-type': 'application/xml' },
      body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${sitemapEntries()}</urlset>`,
    }));
    // The home page answers 304 to its ETag; /a has a sitemap lastmod; /b has neither and stays the same.
    site.routes.set('/', (request) =>
      request.headers['if-none-match'] === '"home-1"'
        ? { status: 304 }
        : {
            ...html('Home', '<main><h1>Home</h1><p>Welcome to the shop.</p></main>'),
            headers: { 'content-type': 'text/html', etag: '"home-1"' },
          },
    );
    site.routes.set('/a', html('Shipping', '<main><h1>Shipping</h1><p>We ship worldwide in five days.</p></main>'));
    site.routes.set('/b', html('Sizes', '<main><h1>Sizes</h1><p>Our shoes run true to size.</p></main>'));
    site.routes.set('/c', () =>
      html(
        'Returns',
        `<main><h1>Returns</h1><h2>Window</h2><p>${prose('window')}</p><h2>Refunds</h2><p>${
          version === 1 ? prose('refund') : `${prose('refund')} Refunds now take three days.`
        }</p></main>`,
      ),
    );
    site.routes.set('/d', () =>
      version === 1 ? html('Old offer', '<main><h1>Old offer</h1><p>Half price boots.</p></main>') : { status: 404 },
    );
    site.routes.set('/e', html('Care', '<main><h1>Care</h1><p>Wipe leather with a damp cloth.</p></main>'));

    const added = await services.intake.addUrl(bot.id, `${site.url}/`);
    const first = await syncedAfter(added.id, '');
    t.match(first.source, { status: 'done', page_count: 5, title: 'Home', refresh: 'weekly' });
    t.same(first.state.last_sync, {
      at: first.state.last_sync.at,
      error: '',
      added: 5,
      changed: 0,
      removed: 0,
      unchanged: 0,
    });
    t.equal(Date.parse(first.state.next_sync_at) - Date.parse(first.state.last_sync.at), 7 * 24 * 3600_000);
    const before = await chunkTexts(first.source);
    const returns = [...before].filter(([, text]) => text.includes('rule number'));
    t.equal(returns.length, 2, 'the returns page has two chunks');

    version = 2;
    site.requests.length = 0;
    embeddings.inputs.length = 0;
    weekPasses(gw.app);
    const second = await syncedAfter(added.id, first.state.last_sync.at);
    t.same(second.state.last_sync, {
      at: second.state.last_sync.at,
      error: '',
      added: 1,
      changed: 1,
      removed: 1,
      unchanged: 3,
    });
    t.match(second.source, { status: 'done', page_count: 5, error: '' });
    // The embedder saw the edited chunk and the new page, nothing else.
    t.equal(embeddings.inputs.length, 2);
    t.match(embeddings.inputs, [/Refunds now take three days/, /damp cloth/]);
    // Unchanged pages: /a not even requested (same lastmod), / asked conditionally (304).
    t.notOk(site.paths.includes('/a'), 'a page with the recorded lastmod is not requested');
    t.ok(site.paths.includes('/'));
    const after = await chunkTexts(second.source);
    const kept = [...before].filter(([id, text]) => after.get(id) === text).map(([id]) => id);
    const changed = [...after].filter(([id, text]) => before.has(id) && before.get(id) !== text);
    const removed = [...before.keys()].filter((id) => !after.has(id));
    const addedIds = [...after.keys()].filter((id) => !before.has(id));
    t.equal(kept.length, before.size - 2, 'every chunk but the edited one and the removed page stays as it was');
    t.equal(changed.length, 1);
    t.match(changed[0]![1], /Refunds now take three days/);
    t.equal(removed.length, 1);
    t.match(before.get(removed[0]!), /Half price boots/);
    t.equal(addedIds.length, 1);
    t.match(after.get(addedIds[0]!), /damp cloth/);
    const hits = await gw.app.retrieval.retriever.search(bot.id, 'how do I clean leather', 1);
    t.match(hits[0]!.chunk.content, /damp cloth/);
  },
);

t.test(
  'an unchanged site syncs without embedding anything; a 304 and a sitemap lastmod each spare a download',
  async (t) => {
    const { user } = await scaleAccount(gw.app);
    const bot = await services.chatbots.create(user.id, { name: 'Still' });
    site.routes.clear();
    site.routes.set('/sitemap.xml', {
      headers: { 'content-type': 'application/xml' },
      body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${site.url}/s</loc><lastmod>2026-10-01</lastmod></url></urlset>`,
    });
    site.routes.set('/', (request) =>
      request.headers['if-modified-since'] === 'Mon, 02 Nov 2026 00:00:00 GMT'
        ? { status: 304 }
        : {
            headers: { 'content-type': 'text/html', 'last-modified': 'Mon, 02 Nov 2026 00:00:00 GMT' },
            body: '<title>Still</title><main><p>Nothing changes here.</p><a href="/linked">more</a></main>',
          },
    );
    site.routes.set('/s', html('Listed', '<main><p>Listed in the sitemap.</p></main>'));
    site.routes.set('/linked', html('Linked', '<main><p>Only linked from the home page.</p></main>'));
    const added = await services.intake.addUrl(bot.id, `${site.url}/`, undefined, 'daily');
    const first = await syncedAfter(added.id, '');
    t.equal(first.state.refresh, 'daily');
    t.equal(Date.parse(first.state.next_sync_at) - Date.parse(first.state.last_sync.at), 24 * 3600_000);
    site.requests.length = 0;
    embeddings.inputs.length = 0;
    now += 60_000_000;
    await services.intake.syncNow(added.id);
    const second = await syncedAfter(added.id, first.state.last_sync.at);
    t.same(second.state.last_sync, {
      at: second.state.last_sync.at,
      error: '',
      added: 0,
      changed: 0,
      removed: 0,
      unchanged: 3,
    });
    t.same(embeddings.inputs, []);
    // robots.txt and the sitemap, the home page (304), and /linked (no validators: read, same hash).
    t.same(site.paths.sort(), ['/', '/linked', '/robots.txt', '/sitemap.xml']);
    t.equal(second.source.page_count, 3);
  },
);

t.test('a sync that fails keeps the chunks and the source done, with the error in its sync record', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Down' });
  site.routes.clear();
  site.routes.set('/', html('Up', '<main><p>The site is up today.</p></main>'));
  const added = await services.intake.addUrl(bot.id, `${site.url}/`);
  const first = await syncedAfter(added.id, '');
  const before = await chunkTexts(first.source);
  site.routes.set('/robots.txt', { status: 503 });
  now += 60_000_000;
  await services.intake.syncNow(added.id);
  const second = await syncedAfter(added.id, first.state.last_sync.at);
  t.match(second.source, { status: 'done', error: '' });
  t.match(second.state.last_sync, { error: /^no page could be read: /, added: 0, changed: 0, removed: 0 });
  t.same(await chunkTexts(second.source), before);
});

t.test(
  'a connector: only the edited and the new file are downloaded and embedded; the deleted one is pruned',
  async (t) => {
    dropbox.reset();
    const { user } = await scaleAccount(gw.app);
    const grant = dropbox.oauth.issueGrant();
    await services.connections.create(user.id, {
      service: 'dropbox',
      authKind: 'oauth',
      secret: {
        access_token: grant.access_token,
        refresh_token: grant.refresh_token,
        expires_at: String(Date.now() + 365 * 24 * 3600_000),
      },
    });
    const bot = await services.chatbots.create(user.id, { name: 'Handbook' });
    dropbox.addFile('/Handbook/Returns.md', '# Returns\n\nUnworn shoes can be returned within 30 days.\n');
    dropbox.addFile('/Handbook/Shipping.txt', 'We ship worldwide within five days.');
    dropbox.addFile('/Handbook/Care.md', '# Care\n\nWipe leather with a damp cloth.\n');
    const link = dropbox.share('/Handbook');
    const added = await services.intake.addConnector(user.id, bot.id, { type: 'dropbox', reference: link });
    const first = await syncedAfter(added.id, '');
    t.match(first.source, { status: 'done', page_count: 3 });

    dropbox.entry('/Handbook/Returns.md').bytes = Buffer.from(
      '# Returns\n\nUnworn shoes can be returned within 60 days.\n',
    );
    dropbox.delete('/Handbook/Care.md');
    dropbox.addFile('/Handbook/Sizes.txt', 'Our shoes run true to size.');
    dropbox.requests.length = 0;
    embeddings.inputs.length = 0;
    weekPasses(gw.app);
    const second = await syncedAfter(added.id, first.state.last_sync.at);
    t.same(second.state.last_sync, {
      at: second.state.last_sync.at,
      error: '',
      added: 1,
      changed: 1,
      removed: 1,
      unchanged: 1,
    });
    t.equal(second.source.page_count, 3);
    const downloads = dropbox.requests
      .filter((r) => r.route === 'sharing/get_shared_link_file')
      .map((r) => JSON.stringify(r.arg));
    t.equal(downloads.length, 2);
    t.ok(downloads.some((arg) => arg.includes('Returns.md')) && downloads.some((arg) => arg.includes('Sizes.txt')));
    t.equal(embeddings.inputs.length, 2);
    t.match(embeddings.inputs.join('\n'), /60 days[\s\S]*true to size|true to size[\s\S]*60 days/);
    const texts = [...(await chunkTexts(second.source)).values()].sort();
    t.equal(texts.length, 3);
    t.notOk(
      texts.some((text) => text.includes('damp cloth')),
      'the deleted file is pruned',
    );
    t.ok(texts.some((text) => text.includes('60 days')));
  },
);

t.test('three gateways on one Redis and one due source: it syncs once', async (t) => {
  const config = loadConfig({ ...env, REDIS_URL: gw.redis.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
  const others = await Promise.all(
    [1, 2].map(() => startApp(config, createLogger('silent'), { clock, shutdownGraceMs: 1000 })),
  );
  t.teardown(() => Promise.all(others.map((app) => app.stop())));
  // A site of its own: the sources of the tests above fall due in the same week.
  const own = await new FakeSite().start();
  t.teardown(() => own.stop());
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Shared' });
  own.routes.set('/', html('Shared', '<main><p>One site, three gateways.</p></main>'));
  const added = await services.intake.addUrl(bot.id, `${own.url}/`);
  const first = await syncedAfter(added.id, '');
  own.requests.length = 0;
  weekPasses(gw.app, ...others);
  const second = await syncedAfter(added.id, first.state.last_sync.at);
  // The next sync is a week on.
  t.equal(Date.parse(second.state.next_sync_at) - Date.parse(second.state.last_sync.at), 7 * 24 * 3600_000);
  t.same(
    own.paths.filter((path) => path === '/robots.txt'),
    ['/robots.txt'],
    'one crawl',
  );
});

t.test('vectors of the wrong size fail a first ingestion with the reason, and leave no chunk behind', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Sizes' });
  embeddings.dimensions = 64;
  t.teardown(() => void (embeddings.dimensions = 384));
  const added = await services.intake.addText(bot.id, 'Our shoes run true to size.');
  const failed = await until(async () => {
    const source = await services.sources.get(added.id);
    return source.status === 'failed' && source;
  }, 'the failure');
  t.equal(
    failed.error,
    'the embedder returned a vector of 64 dimensions; the embedding space openai-fake-embed has 384',
  );
  t.same(await gw.app.retrieval.chunks.ids(bot.id, added.id), []);
});

t.test(
  'a stored chunk of the wrong size is skipped at startup and its source failed; the gateway starts',
  async (t) => {
    const { user } = await scaleAccount(gw.app);
    const bot = await services.chatbots.create(user.id, { name: 'Mixed' });
    const good = await services.intake.addText(bot.id, 'Unworn shoes can be returned within 30 days.');
    const bad = await services.intake.addText(bot.id, 'Boots are waterproof.');
    for (const id of [good.id, bad.id]) {
      await until(async () => (await services.sources.get(id)).status === 'done', 'ingestion');
    }
    // A record as an older version could leave it: 64 numbers in a 384-dimension space.
    const [chunk] = await gw.app.retrieval.chunks.forSource(bot.id, bad.id);
    await gw.app.retrieval.chunks.save([{ ...chunk!, embedding: new Float32Array(64).fill(0.125) }]);

    const config = loadConfig({ ...env, REDIS_URL: gw.redis.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
    const restarted = await startApp(config, createLogger('silent'), { clock, shutdownGraceMs: 1000 });
    t.teardown(() => restarted.stop());
    // The index loads in the background: the source is failed once the load has come to it.
    const failed = await until(async () => {
      const source = await restarted.services.sources.get(bad.id);
      return source.status === 'failed' && source;
    }, 'the bad source failed');
    t.match(failed, {
      status: 'failed',
      error: 'a stored chunk has 64 dimensions, expected 384; sync the source again',
    });
    t.equal((await restarted.services.sources.get(good.id)).status, 'done');
    const hits = await restarted.retrieval.retriever.search(bot.id, 'how long do I have to return shoes', 5);
    t.same(
      hits.map((hit) => hit.chunk.sourceId),
      [good.id],
    );
  },
);

t.test("deleting a source or its chatbot cancels the source's scheduled syncs", async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Gone' });
  site.routes.clear();
  site.routes.set('/', html('Gone', '<main><p>Soon deleted.</p></main>'));
  const one = await services.intake.addUrl(bot.id, `${site.url}/`);
  const two = await services.intake.addUrl(bot.id, `${site.url}/?two`);
  for (const source of [one, two]) await syncedAfter(source.id, '');
  t.ok(await services.ingestion.nextSync(bot.id, one.id));
  await services.intake.remove(one.id, gw.app.retrieval.index);
  t.equal(await services.ingestion.nextSync(bot.id, one.id), undefined);
  t.ok(await services.ingestion.nextSync(bot.id, two.id));
  await services.chatbotDeletion.delete(bot.id);
  t.equal(await services.ingestion.nextSync(bot.id, two.id), undefined);
});

t.test(
  'after a passing failure nothing unreached is pruned; a 404 is; a 304 records the sitemap lastmod it came with',
  async (t) => {
    const own = await new FakeSite().start();
    t.teardown(() => own.stop());
    let sitemap: { status?: number; lastmod: string } = { lastmod: '2026-10-01' };
    own.routes.set('/sitemap.xml', () =>
      sitemap.status
        ? { status: sitemap.status }
        : {
            headers: { 'content-type': 'application/xml' },
            body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${own.url}/s1</loc><lastmod>${sitemap.lastmod}</lastmod></url><url><loc>${own.url}/s2</loc></url></urlset>`,
          },
    );
    const withEtag = (etag: string, title: string, text: string) => (request: { headers: Record<string, unknown> }) =>
      request.headers['if-none-match'] === etag
        ? { status: 304 }
        : { ...html(title, `<main><p>${text}</p></main>`), headers: { 'content-type': 'text/html', etag } };
    own.routes.set('/', withEtag('"home"', 'Home', 'The home page links nowhere.'));
    own.routes.set('/s1', withEtag('"s1"', 'One', 'Listed in the sitemap, first.'));
    own.routes.set('/s2', html('Two', '<main><p>Listed in the sitemap, second.</p></main>'));
    const { user } = await scaleAccount(gw.app);
    const bot = await services.chatbots.create(user.id, { name: 'Partial' });
    const added = await services.intake.addUrl(bot.id, `${own.url}/`);
    const first = await syncedAfter(added.id, '');
    t.equal(first.source.page_count, 3);
    const before = await chunkTexts(first.source);
    // A chunk stored before pages were recorded (`{source}:{n}`): a partial read leaves it.
    const [sample] = await gw.app.retrieval.chunks.forSource(bot.id, added.id);
    await gw.app.retrieval.chunks.save([{ ...sample!, id: `${added.id}:0`, content: 'From an older version.' }]);

    sitemap = { status: 503, lastmod: '' };
    now += 60_000_000;
    await services.intake.syncNow(added.id);
    const second = await syncedAfter(added.id, first.state.last_sync.at);
    t.same(second.state.last_sync, {
      at: second.state.last_sync.at,
      error: '',
      added: 0,
      changed: 0,
      removed: 0,
      unchanged: 1,
    });
    t.equal(second.source.page_count, 3, 'the pages the sitemap leads to are kept and counted');
    t.same(await chunkTexts(second.source), new Map([...before, [`${added.id}:0`, 'From an older version.']]));

    sitemap = { lastmod: '2026-11-20' };
    own.routes.set('/s2', { status: 404 });
    own.requests.length = 0;
    now += 60_000_000;
    await services.intake.syncNow(added.id);
    const third = await syncedAfter(added.id, second.state.last_sync.at);
    t.same(third.state.last_sync, {
      at: third.state.last_sync.at,
      error: '',
      added: 0,
      changed: 0,
      removed: 1,
      unchanged: 2,
    });
    t.equal(third.source.page_count, 2);
    t.same(
      [...(await chunkTexts(third.source)).values()].sort(),
      [...before.values()].filter((text) => !text.includes('second')).sort(),
      'the 404 page and the unrecorded chunk are gone',
    );
    t.ok(own.paths.includes('/s1'), 'its lastmod changed: asked again (304)');

    own.requests.length = 0;
    now += 60_000_000;
    await services.intake.syncNow(added.id);
    await syncedAfter(added.id, third.state.last_sync.at);
    t.notOk(own.paths.includes('/s1'), 'the lastmod the 304 came with was recorded');
  },
);

t.test("a queued sync of a deleted chatbot's source does nothing and is not scheduled again", async (t) => {
  const own = await new FakeSite().start();
  t.teardown(() => own.stop());
  own.routes.set('/', html('Deleted', '<main><p>Its chatbot goes.</p></main>'));
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Deleted' });
  const added = await services.intake.addUrl(bot.id, `${own.url}/`);
  await syncedAfter(added.id, '');
  await services.chatbotDeletion.delete(bot.id);
  own.requests.length = 0;
  await services.intake.syncNow(added.id);
  await until(async () => (await services.ingestion.size()) === 0, 'the queue to empty');
  t.same(own.paths, []);
  t.equal(await services.ingestion.nextSync(bot.id, added.id), undefined);
});
