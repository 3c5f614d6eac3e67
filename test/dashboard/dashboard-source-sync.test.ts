import t from 'tap';
import { fixedTimeClock } from '../../src/clock.ts';
import { formatTimestamp } from '../../src/timestamp.ts';
import { FakeSite, html } from '../ingest/fake-site.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';

// The dashboard's sync routes against a gateway that crawls a loopback site. Time is a simulated
// clock that moves only when the test says so: every sync time and schedule is exact.
const DAY_US = 24 * 60 * 60 * 1_000_000;
let now = Date.now() * 1000;
const clock = fixedTimeClock(() => now);

const site = await new FakeSite().start();
const returns = (policy: string) => html('Returns', `<main><h1>Returns policy</h1><p>${policy}</p></main>`);
site.routes.set(
  '/',
  html(
    'Acme Help',
    '<main><h1>Acme Help</h1><p>Welcome to the Acme help centre.</p><a href="/returns">Returns</a></main>',
  ),
);
site.routes.set('/returns', returns('Unworn shoes can be returned within 30 days.'));
const gw = await startGateway({ CRAWL_ALLOW_PRIVATE: '1', SEARCH_ENGINE: 'in-process' }, { clock });
t.teardown(async () => {
  await gw.stop();
  await site.stop();
});
const client = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
const bot = (await client.post('/dashboard/api/chatbots', { name: 'Synced' })).body;
const sourcesPath = `/dashboard/api/chatbots/${bot.id}/sources`;
const NOT_SYNCED = 'Only url and connector sources are synced; upload a file or text again to change it.';
const NEVER = { at: '', error: '', added: 0, changed: 0, removed: 0, unchanged: 0 };

/** One source as the list shows it. */
async function listed(sourceId: string) {
  const res = await client.get(sourcesPath);
  return (res.body as Array<{ id: string }>).find((source) => source.id === sourceId) as any;
}

/** The source once a run has ended at the clock's time and its next sync is settled (none when off). */
function syncedNow(sourceId: string) {
  return until(async () => {
    const source = await listed(sourceId);
    const settled = source.refresh === 'off' || source.next_sync_at !== '';
    return source.last_sync.at === formatTimestamp(now) && source.progress === '' && settled && source;
  }, 'the sync to end');
}

// A url source crawled once, shared by the tests below in order.
const added = await client.post(sourcesPath, { type: 'url', url: `${site.url}/` });
const firstSync = now;
let url: any;

t.test('a url source comes with its schedule and syncs; a text source with none of them', async (t) => {
  t.same(
    [added.status, added.body],
    [
      201,
      {
        id: added.body.id,
        type: 'url',
        title: '',
        url: `${site.url}/`,
        status: 'pending',
        page_count: 0,
        created_at: formatTimestamp(now),
        chatbot_id: bot.id,
        error: '',
        refresh: 'weekly',
        last_sync: NEVER,
        next_sync_at: '',
        progress: '',
      },
    ],
  );
  url = await syncedNow(added.body.id);
  t.same(url, {
    ...added.body,
    title: 'Acme Help',
    status: 'done',
    page_count: 2,
    last_sync: { at: formatTimestamp(firstSync), error: '', added: 2, changed: 0, removed: 0, unchanged: 0 },
    next_sync_at: formatTimestamp(firstSync + 7 * DAY_US),
  });

  const text = await client.post(sourcesPath, { type: 'text', text: 'Opening hours: 9 to 5.', title: 'Hours' });
  t.equal(text.status, 201);
  const done = await until(async () => {
    const source = await listed(text.body.id);
    return source.status === 'done' && source;
  }, 'the text source');
  t.same(done, {
    id: text.body.id,
    type: 'text',
    title: 'Hours',
    url: '',
    status: 'done',
    page_count: 0,
    created_at: formatTimestamp(now),
    chatbot_id: bot.id,
    error: '',
    characters: 22,
    words: 5,
    progress: '',
  });
});

t.test('PATCH refresh: the next sync falls one interval from now, none when off', async (t) => {
  now += 60_000_000;
  const daily = await client.patch(`/dashboard/api/sources/${url.id}`, { refresh: 'daily' });
  const dailyView = { ...url, refresh: 'daily', next_sync_at: formatTimestamp(now + DAY_US) };
  t.same([daily.status, daily.body], [200, dailyView]);
  t.same(await listed(url.id), dailyView, 'the list shows the same');

  const off = await client.patch(`/dashboard/api/sources/${url.id}`, { refresh: 'off' });
  t.same([off.status, off.body], [200, { ...url, refresh: 'off', next_sync_at: '' }]);
  t.same(await listed(url.id), off.body);

  now += 60_000_000;
  const weekly = await client.patch(`/dashboard/api/sources/${url.id}`, { refresh: 'weekly' });
  url = { ...url, next_sync_at: formatTimestamp(now + 7 * DAY_US) };
  t.same([weekly.status, weekly.body], [200, url]);
});

t.test('POST sync: queued, the site read again, unchanged pages counted, then a changed one', async (t) => {
  now += 60_000_000;
  const queued = await client.post(`/dashboard/api/sources/${url.id}/sync`);
  // The scheduled sync stays as it is until this one ends and schedules the next.
  t.same([queued.status, queued.body], [202, { ...url, sync: 'queued' }]);
  const synced = await syncedNow(url.id);
  t.same(synced, {
    ...url,
    last_sync: { at: formatTimestamp(now), error: '', added: 0, changed: 0, removed: 0, unchanged: 2 },
    next_sync_at: formatTimestamp(now + 7 * DAY_US),
  });

  site.routes.set('/returns', returns('Unworn shoes can be returned within 60 days.'));
  now += 60_000_000;
  t.equal((await client.post(`/dashboard/api/sources/${url.id}/sync`)).status, 202);
  url = await syncedNow(url.id);
  t.same(url.last_sync, { at: formatTimestamp(now), error: '', added: 0, changed: 1, removed: 0, unchanged: 1 });
  t.match(url, { status: 'done', page_count: 2, next_sync_at: formatTimestamp(now + 7 * DAY_US) });
});

t.test('POST sync while a gateway reads the source: running, and synced again once that run ends', async (t) => {
  // The run in progress reads the page as it is; the one asked for during it finds it changed.
  let reads = 0;
  site.routes.set('/returns', () => {
    reads += 1;
    return reads === 1
      ? { ...returns('Unworn shoes can be returned within 60 days.'), delayMs: 1500 }
      : returns('Unworn shoes can be returned within 90 days.');
  });
  now += 60_000_000;
  t.equal((await client.post(`/dashboard/api/sources/${url.id}/sync`)).body.sync, 'queued');
  const reading = await until(async () => {
    const source = await listed(url.id);
    return reads === 1 && source.progress !== '' && source;
  }, 'the run to be reading the site');
  t.same(reading, { ...url, progress: reading.progress }, 'done throughout, its chunks kept');
  const running = await client.post(`/dashboard/api/sources/${url.id}/sync`);
  t.same([running.status, running.body], [202, { ...reading, sync: 'running' }]);
  // The run in progress records no change; the second read of the page is the next run's.
  const synced = await until(async () => {
    const source = await listed(url.id);
    const ended = reads === 2 && source.last_sync.changed === 1;
    return ended && source.progress === '' && source.next_sync_at !== '' && source;
  }, 'the second run');
  t.same(synced.last_sync, { at: formatTimestamp(now), error: '', added: 0, changed: 1, removed: 0, unchanged: 1 });
  t.equal(await gw.app.services.ingestion.size(), 0, 'nothing left queued');
  url = synced;
  site.routes.set('/returns', returns('Unworn shoes can be returned within 90 days.'));
});

t.test('a failed url source is ingested afresh by POST sync', async (t) => {
  const failing = await client.post(sourcesPath, { type: 'url', url: `${site.url}/docs/`, refresh: 'daily' });
  t.equal(failing.status, 201);
  const failed = await syncedNow(failing.body.id);
  const reason = 'no page could be read: HTTP 404';
  t.match(failed, { status: 'failed', error: reason, refresh: 'daily', page_count: 0 });
  t.same(failed.last_sync, { ...NEVER, at: formatTimestamp(now), error: reason });

  site.routes.set('/docs/', html('Docs', '<main><h1>Docs</h1><p>How to use Acme.</p></main>'));
  now += 60_000_000;
  const again = await client.post(`/dashboard/api/sources/${failing.body.id}/sync`);
  t.same([again.status, again.body.status, again.body.sync], [202, 'pending', 'queued']);
  const done = await syncedNow(failing.body.id);
  t.same(done, {
    ...failed,
    title: 'Docs',
    status: 'done',
    page_count: 1,
    error: '',
    last_sync: { ...NEVER, at: formatTimestamp(now), added: 1 },
    next_sync_at: formatTimestamp(now + DAY_US),
  });
});

t.test('refused: file and text sources, a missing or unknown schedule', async (t) => {
  const text = await client.post(sourcesPath, { type: 'text', text: 'Parking is free.' });
  const file = await client.post(`/dashboard/api/chatbots/${bot.id}/files`, new TextEncoder().encode('# Prices'), {
    'x-filename': 'prices.md',
  });
  for (const source of [text.body, file.body]) {
    const patched = await client.patch(`/dashboard/api/sources/${source.id}`, { refresh: 'daily' });
    t.same([patched.status, patched.body], [400, { detail: NOT_SYNCED }], `PATCH ${source.type}`);
    const synced = await client.post(`/dashboard/api/sources/${source.id}/sync`);
    t.same([synced.status, synced.body], [400, { detail: NOT_SYNCED }], `sync ${source.type}`);
  }
  const refused: Array<[unknown, string]> = [
    [{}, 'refresh is required.'],
    [{ refresh: 'hourly' }, 'refresh must be one of: off, daily, weekly.'],
    [{ refresh: 7 }, 'refresh must be a string.'],
  ];
  for (const [body, detail] of refused) {
    const res = await client.patch(`/dashboard/api/sources/${url.id}`, body);
    t.same([res.status, res.body], [400, { detail }], detail);
  }
  // Compared whole below: nothing may be still ingesting.
  const before = await until(async () => {
    const list = (await client.get(sourcesPath)).body as Array<{ status: string }>;
    return list.every((source) => source.status === 'done' || source.status === 'failed') && list;
  }, 'the text and the file to be ingested');
  for (const body of [
    { type: 'url', url: `${site.url}/hourly`, refresh: 'hourly' },
    { type: 'youtube', url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ', refresh: 'hourly' },
  ]) {
    const res = await client.post(sourcesPath, body);
    t.same([res.status, res.body], [400, { detail: 'refresh must be one of: off, daily, weekly.' }], body.type);
  }
  t.same((await client.get(sourcesPath)).body, before, 'nothing added, the url source unchanged');
  t.same(await listed(url.id), url);
});

t.test("another owner's source is not found, and stays as it was", async (t) => {
  const other = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  const patched = await other.patch(`/dashboard/api/sources/${url.id}`, { refresh: 'off' });
  t.same([patched.status, patched.body], [404, { detail: 'Source not found.' }]);
  const synced = await other.post(`/dashboard/api/sources/${url.id}/sync`);
  t.same([synced.status, synced.body], [404, { detail: 'Source not found.' }]);
  t.same(await listed(url.id), url);
});
