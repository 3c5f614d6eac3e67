import t from 'tap';
import { startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { FakeSite, html } from '../ingest/fake-site.ts';
import { cliFailure as failure, runCli, runCliJson } from '../support/cli.ts';
import { fullConversation } from '../support/full-conversation.ts';
import { startGateway } from '../support/gateway.ts';
import { startRedis } from '../support/redis-server.ts';
import { until } from '../support/until.ts';

// `export` and `import` round trip: an owner's data exported from one install (Redis A, where a
// gateway ingested the sources), imported into a second, fresh redis-server, exported again and
// compared; then a gateway on the second Redis ingests the imported sources and answers from them.
const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'Our cakes come in three sizes.' });
const site = await new FakeSite().start();
site.routes.set('/', html('Bakery', '<main><h1>Bakery</h1><p>We bake sourdough every morning.</p></main>'));
const env = {
  OPENAI_API_KEY: 'sk-test',
  CRAWL_ALLOW_PRIVATE: '1',
  WEBHOOK_ALLOW_PRIVATE: '1',
  SEARCH_ENGINE: 'in-process',
};
const a = await startGateway({ ...env, OPENAI_BASE_URL: `${openai.url}/v1` });
const redisB = await startRedis();
t.teardown(async () => {
  await a.stop();
  await redisB.stop();
  await site.stop();
  await openai.stop();
});
const cliA = { REDIS_URL: a.redis.url, PATH: process.env.PATH ?? '', WEBHOOK_ALLOW_PRIVATE: '1' };
const cliB = { ...cliA, REDIS_URL: redisB.url };
const s = a.app.services;

// The owner's data on A: a chatbot with settings, a text, a file and a url source (ingested), a
// conversation with everything a transcript shows and its lead, a webhook; and a second chatbot.
const owner = await s.accounts.create('baker@example.com', 'scale');
const bot = await s.chatbots.create(owner.id, { name: 'Bakery Bot', provider: 'chatgpt', systemPrompt: 'Be warm.' });
await s.chatbots.configure(bot.id, {
  widget: { color: '#0f766e' },
  retention: { conversations_days: 90 },
  lead_fields: [{ name: 'company', label: 'Company' }],
});
const text = await s.intake.addText(bot.id, 'Birthday cakes come in three sizes: small, medium and large.', 'Cakes');
const file = await s.intake.addFile(bot.id, 'opening.md', Buffer.from('# Opening hours\n\nWe open at 7 every day.\n'));
const url = await s.intake.addUrl(bot.id, `${site.url}/`, undefined, 'daily');
await until(
  async () => (await s.sources.listForChatbot(bot.id)).every((source) => source.status === 'done') && 'all done',
  'the sources on A',
);
await fullConversation(s, bot, 'embed-visitor');
const hook = await s.webhooks.create(bot.id, 'http://127.0.0.1:9/hook', ['lead.captured', 'message.received'], {
  standardWebhooks: true,
});
const second = await s.chatbots.create(owner.id, { name: 'Second' });
await s.chatbots.setActive(second.id, false);

/** The lines of an export, parsed. */
function lines(stdout: string): any[] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
}

t.test('export, import into a fresh Redis, export again: the same data', async (t) => {
  const exported = await runCli(['export', '--user', owner.id], cliA);
  t.equal(exported.code, 0, exported.stderr);
  t.equal(exported.stderr, '');
  const first = lines(exported.stdout);
  t.same(
    first.map((record) => record.type),
    ['header', 'chatbot', 'source', 'source', 'source', 'conversation', 'lead', 'webhook', 'chatbot', 'end'],
  );
  t.match(first[0], {
    type: 'header',
    format: 'switchboard-export',
    version: 1,
    account: { id: owner.id, email: 'baker@example.com', plan: 'scale', created_at: owner.created_at, connectors: [] },
  });
  t.same(first.at(-1), {
    type: 'end',
    counts: { chatbots: 2, sources: 3, conversations: 1, leads: 1, webhooks: 1 },
  });
  const sources = first.filter((record) => record.type === 'source');
  t.same(
    sources.map((record) => [record.source.id, record.source.type, record.source.title, record.content]),
    [
      [
        text.id,
        'text',
        'Cakes',
        { encoding: 'utf8', data: 'Birthday cakes come in three sizes: small, medium and large.' },
      ],
      [
        file.id,
        'file',
        'opening.md',
        { encoding: 'base64', data: Buffer.from('# Opening hours\n\nWe open at 7 every day.\n').toString('base64') },
      ],
      [url.id, 'url', 'Bakery', null],
    ],
  );
  t.match(sources[2].source, { url: `${site.url}/`, refresh: 'daily', connection_service: null });
  const conversation = first.find((record) => record.type === 'conversation').conversation;
  t.same(conversation, {
    ...(await s.conversations.transcript(bot.id, 'embed-visitor')),
    created_at: conversation.created_at,
    last_activity_at: conversation.last_activity_at,
  });
  t.match(conversation.messages, [
    { role: 'user' },
    { role: 'assistant', citations: [{ title: 'Shipping' }], feedback: 'down' },
    { role: 'user', failure: 'The provider timed out.' },
    { role: 'user', content: 'Hello?' },
    { role: 'agent', agent: { name: 'Maria', initial: 'M' } },
  ]);
  t.same(first.find((record) => record.type === 'webhook').webhook, {
    id: hook.id,
    chatbot_id: bot.id,
    url: 'http://127.0.0.1:9/hook',
    events: ['lead.captured', 'message.received'],
    active: true,
    standard_webhooks: true,
    created_at: (await s.webhooks.get(hook.id)).created_at,
  });
  t.notMatch(exported.stdout, hook.secret, 'no webhook secret');
  t.notMatch(exported.stdout, hook.standard_webhooks_secret!, 'no Standard Webhooks secret');

  const imported = await runCliJson(['import'], cliB, exported.stdout);
  const newHook = imported.webhooks[0];
  t.same(imported, {
    user_id: owner.id,
    email: 'baker@example.com',
    account: 'created',
    imported: { chatbots: 2, sources: 3, conversations: 1, messages: 5, leads: 1 },
    sources_queued: 3,
    sources_failed: [],
    new_ids: { [hook.id]: newHook.id },
    webhooks: [
      {
        id: newHook.id,
        url: 'http://127.0.0.1:9/hook',
        events: ['lead.captured', 'message.received'],
        secret: newHook.secret,
        standard_webhooks: true,
        standard_webhooks_secret: newHook.standard_webhooks_secret,
      },
    ],
    webhooks_refused: [],
  });
  t.match(newHook.secret, /^whsec_/);
  t.not(newHook.secret, hook.secret, 'a new secret');
  t.match(newHook.standard_webhooks_secret, /^whsec_/);
  t.not(newHook.standard_webhooks_secret, hook.standard_webhooks_secret, 'a new Standard Webhooks secret');

  const again = await runCli(['export', '--user', owner.id], cliB);
  t.equal(again.code, 0, again.stderr);
  const second = lines(again.stdout);
  // The same, but for when it was exported, and the webhook's id and creation time (made anew).
  const comparable = (records: any[]) =>
    records.map((record) => {
      if (record.type === 'header') return { ...record, exported_at: '' };
      if (record.type === 'webhook') return { ...record, webhook: { ...record.webhook, id: '', created_at: '' } };
      return record;
    });
  t.same(comparable(second), comparable(first));
  t.equal(again.stdout.split('\n').length, exported.stdout.split('\n').length);
});

t.test('a gateway on the second Redis ingests the imported sources and answers from them', async (t) => {
  const config = loadConfig({
    ...env,
    OPENAI_BASE_URL: `${openai.url}/v1`,
    REDIS_URL: redisB.url,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
  });
  const b = await startApp(config, createLogger('silent'), { shutdownGraceMs: 1000 });
  t.teardown(() => b.stop());
  await until(
    async () => {
      const all = await b.services.sources.listForChatbot(bot.id);
      return all.length === 3 && all.every((source) => source.status === 'done') && all;
    },
    'the imported sources to be ingested on B',
    30_000,
  );
  const key = await runCliJson(['key', 'create', '--user', owner.id, '--name', 'moved'], cliB);
  const before = openai.requests.length;
  const response = await fetch(`http://127.0.0.1:${b.port}/api/v1/chatbots/${bot.id}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'What sizes do birthday cakes come in?', session_id: 'api-moved' }),
  });
  t.same([response.status, await response.json()], [200, { response: 'Our cakes come in three sizes.' }]);
  const prompt = JSON.stringify(openai.requests[before]!.body.messages);
  t.match(prompt, 'Birthday cakes come in three sizes: small, medium and large.', 'the imported text source');
  t.match(prompt, 'Be warm.', "the imported chatbot's system prompt");
  const history = await b.services.conversations.transcript(bot.id, 'embed-visitor');
  t.equal(history.messages.length, 5, 'the imported conversation is there');
});

t.test('import refuses an unknown version, a cut stream, a taken email; --user imports beside', async (t) => {
  const exported = (await runCli(['export', '--user', owner.id], cliA)).stdout;
  const header = JSON.parse(exported.split('\n')[0]!);
  const v2 = [JSON.stringify({ ...header, version: 2 }), ...exported.split('\n').slice(1)].join('\n');
  t.same(
    await runCli(['import'], cliB, v2),
    failure('Unsupported export version 2: this Switchboard reads version 1.'),
  );
  const cut = exported.split('\n').slice(0, 4).join('\n');
  t.same(
    await runCli(['import'], cliB, cut),
    failure('The export is incomplete: it has no end record (it was cut short).'),
  );
  t.same(
    await runCli(['import'], cliB, exported),
    failure(`A user with this email already exists: import into that account with --user ${owner.id}.`),
  );
  t.same(await runCli(['import'], cliB, 'hello\n'), failure('Line 1 is not JSON.'));

  // Into another account of B: every chatbot and source id is taken there, so they get new ones.
  const other = await runCliJson(['user', 'create', '--email', 'other@example.com'], cliB);
  const beside = await runCliJson(['import', '--user', other.id], cliB, exported);
  t.match(beside, { user_id: other.id, account: 'existing', imported: { chatbots: 2, conversations: 1, leads: 1 } });
  t.equal(Object.keys(beside.new_ids).length, 2 + 3 + 1, 'two chatbots, three sources, the webhook');
  const bots = await runCliJson(['bot', 'list', '--user', other.id], cliB);
  t.same(
    bots.map((row: any) => [row.name, row.slug, row.is_active]),
    [
      ['Second', 'second', false],
      ['Bakery Bot', 'bakery-bot', true],
    ],
  );
  t.equal(bots[1].id, beside.new_ids[bot.id]);
  const moved = await runCliJson(['conversation', 'show', '--bot', bots[1].id, '--session', 'embed-visitor'], cliB);
  t.equal(moved.messages.length, 5);
});

t.test('export --file writes the stream and prints a summary; import --file reads it', async (t) => {
  const dir = t.testdir();
  const path = `${dir}/baker.jsonl`;
  t.same(await runCliJson(['export', '--user', owner.id, '--file', path], cliA), {
    user_id: owner.id,
    file: path,
    counts: { chatbots: 2, sources: 3, conversations: 1, leads: 1, webhooks: 1 },
  });
  const redisC = await startRedis();
  t.teardown(() => redisC.stop());
  const imported = await runCliJson(['import', '--file', path], { ...cliA, REDIS_URL: redisC.url });
  t.match(imported, { user_id: owner.id, account: 'created', sources_queued: 3 });
  t.same(await runCli(['export', '--user', crypto.randomUUID()], cliA), failure('User not found.'));
});
