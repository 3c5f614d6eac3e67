import t, { type Test } from 'tap';
import { FakeSite, html } from '../ingest/fake-site.ts';
import { cliFailure as failure, runCli, runCliAtTerminal, runCliJson } from '../support/cli.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';

// `source add --refresh`, `source list`, `source show` and `source sync`: the CLI asks, a gateway syncs.
const site = await new FakeSite().start();
const gw = await startGateway({ CRAWL_ALLOW_PRIVATE: '1', SEARCH_ENGINE: 'in-process' });
t.teardown(async () => {
  await gw.stop();
  await site.stop();
});
const env = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
const ok = (args: string[]) => runCliJson(args, env);
const DAY_MS = 24 * 3600_000;

t.test('a url source with its schedule and syncs: add --refresh, list, show, sync', async (t) => {
  site.routes.set('/', html('Home', '<main><h1>Home</h1><p>We ship worldwide within five days.</p></main>'));
  const { user } = await scaleAccount(gw.app);
  const bot = await gw.app.services.chatbots.create(user.id, { name: 'Docs' });
  const added = await ok(['source', 'add', '--bot', bot.id, '--url', `${site.url}/`, '--refresh', 'daily', '--wait']);
  t.same(added, {
    id: added.id,
    type: 'url',
    title: 'Home',
    url: `${site.url}/`,
    status: 'done',
    page_count: 1,
    created_at: added.created_at,
    chatbot_id: bot.id,
    error: '',
    refresh: 'daily',
    last_sync: { at: added.last_sync.at, error: '', added: 1, changed: 0, removed: 0, unchanged: 0 },
    next_sync_at: added.next_sync_at,
  });
  t.equal(Date.parse(added.next_sync_at) - Date.parse(added.last_sync.at), DAY_MS);
  const text = await ok(['source', 'add', '--bot', bot.id, '--text', 'Boots are waterproof.', '--wait']);

  const listed = await ok(['source', 'list', '--bot', bot.id]);
  t.same(listed, [text, added], 'newest first; a text source has no schedule');
  t.same(await ok(['source', 'show', '--source', added.id]), { ...added, progress: '' });

  const synced = await ok(['source', 'sync', '--source', added.id]);
  t.same(synced, { ...added, sync: 'queued' });
  const after = await until(
    async () => {
      const shown = await ok(['source', 'show', '--source', added.id]);
      return shown.last_sync.at > added.last_sync.at && shown.progress === '' && shown;
    },
    'the sync',
    20_000,
  );
  t.same(after.last_sync, { at: after.last_sync.at, error: '', added: 0, changed: 0, removed: 0, unchanged: 1 });
  t.equal(Date.parse(after.next_sync_at) - Date.parse(after.last_sync.at), DAY_MS);
});

t.test('what source list, show and sync refuse', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await gw.app.services.chatbots.create(user.id, { name: 'Refusals' });
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--url', `${site.url}/`, '--refresh', 'hourly'], env),
    failure('refresh must be one of: off, daily, weekly.'),
  );
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--text', 'x', '--refresh', 'daily'], env),
    failure('source add: --refresh applies to url and connector sources'),
  );
  const text = await ok(['source', 'add', '--bot', bot.id, '--text', 'Boots are waterproof.', '--wait']);
  t.same(
    await runCli(['source', 'sync', '--source', text.id], env),
    failure('Only url and connector sources are synced; upload a file or text again to change it.'),
  );
  t.same(await runCli(['source', 'list', '--bot', crypto.randomUUID()], env), failure('Chatbot not found.'));
  t.same(await runCli(['source', 'show', '--source', crypto.randomUUID()], env), failure('Source not found.'));
  t.same(await runCli(['source', 'sync', '--source', crypto.randomUUID()], env), failure('Source not found.'));
});

t.test("retrieve and delete go by the gateways' embedding space, not the CLI's EMBEDDINGS", async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await gw.app.services.chatbots.create(user.id, { name: 'Spaces' });
  const source = await ok(['source', 'add', '--bot', bot.id, '--text', 'Boots are waterproof.', '--wait']);
  const other = {
    ...env,
    EMBEDDINGS: 'openai:text-embedding-3-small',
    OPENAI_API_KEY: 'sk-test',
    SEARCH_ENGINE: 'in-process',
  };
  // The question is embedded in the gateways' space (local needs no key; openai would fail to connect).
  const retrieved = (await runCliJson(['retrieve', '--bot', bot.id, '--query', 'boots'], other)) as {
    results: Array<{ chunk_id: string; content: string }>;
  };
  t.same(
    retrieved.results.map((hit) => [hit.chunk_id, hit.content]),
    [[`${source.id}:0`, 'Boots are waterproof.']],
  );
  t.same((await gw.app.retrieval.chunks.byIds(bot.id, [`${source.id}:0`]))[0]?.content, 'Boots are waterproof.');
  t.same(await runCliJson(['source', 'delete', '--source', source.id], other), { id: source.id, deleted: true });
  t.same(await gw.app.retrieval.chunks.byIds(bot.id, [`${source.id}:0`]), [undefined], 'the stored chunk is gone');
});

/**
 * `source add --url … --wait` at a terminal of `columns` columns, its page held back until the terminal
 * has shown that the source is being crawled: what the terminal showed, and the source printed.
 */
async function addAtTerminal(t: Test, name: string, columns?: number): Promise<{ screen: string; added: any }> {
  let release!: () => void;
  const heldUntil = new Promise<void>((resolve) => (release = resolve));
  site.routes.set(`/${name}`, { ...html(name, '<main><p>Returns are free within thirty days.</p></main>'), heldUntil });
  const { user } = await scaleAccount(gw.app);
  const bot = await gw.app.services.chatbots.create(user.id, { name });
  const run = runCliAtTerminal(
    ['source', 'add', '--bot', bot.id, '--url', `${site.url}/${name}`, '--wait'],
    env,
    columns,
  );
  t.teardown(run.end);
  await until(() => run.screen().includes('crawling'), 'the progress on the terminal').catch((error: Error) => {
    throw new Error(`${error.message}; the terminal showed ${JSON.stringify(run.screen().slice(0, 500))}`);
  });
  release();
  t.equal(await run.exited, 0);
  const printed = await run.printed();
  t.equal(printed.split('\n').length, 2, 'one JSON line on stdout');
  const added = JSON.parse(printed);
  t.match(added, { title: name, status: 'done', page_count: 1, chatbot_id: bot.id });
  return { screen: run.screen(), added };
}

t.test('--wait at a terminal: a spinner with the progress on stderr; stdout has only the source', async (t) => {
  const { screen } = await addAtTerminal(t, 'Spinner', 80);
  // ora: the cursor hidden while it spins, a frame of its dots before the text, the line cleared and
  // the cursor shown again at the end.
  t.ok(screen.startsWith('\u001b[?25l'), 'the cursor hidden first');
  t.match(screen, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] crawling/);
  t.ok(screen.endsWith('\u001b[?25h'), 'the cursor shown last');
  t.ok(screen.length < 10_000, `${screen.length} characters shown`);
});

// Issue found with the test above: ora counts the lines to clear by dividing by the width, and with 0
// columns cleared for ever (the CLI spun at full CPU, its memory growing, and never finished).
t.test('--wait at a terminal that reports no width: each new progress line once, then the source', async (t) => {
  const { screen } = await addAtTerminal(t, 'Unsized');
  const lines = screen.split('\r\n');
  t.equal(lines.pop(), '', 'every line ended');
  t.ok(lines.includes('crawling'), 'the crawl shown');
  t.same(
    lines.filter((line, i) => line === lines[i - 1]),
    [],
    'no line twice in a row',
  );
  t.same(
    lines.filter(
      (line) => !/^(pending|crawling|processing|crawled \d+ of \d+ pages|embedded \d+ of \d+ chunks)$/.test(line),
    ),
    [],
    'nothing but progress lines',
  );
});
