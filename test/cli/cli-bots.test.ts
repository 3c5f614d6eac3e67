import t from 'tap';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { cliFailure as failure, runCli, runCliJson } from '../support/cli.ts';

// Every command is a Node process of about a second and a half: the CLI's tests are split over files
// (this one and cli.test.ts) so that each stays well inside tap's per-file timeout.
// Keys for every provider: these chatbots are never asked anything, and `bot create` warns of none.
const gw = await startGateway({ GEMINI_API_KEY: 'g-unused', OPENAI_API_KEY: 'sk-unused' });
t.teardown(() => gw.stop());
const env = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
const ok = (args: string[]) => runCliJson(args, env);

t.test('bots: create with every option, slug collisions, pause, resume, delete', async (t) => {
  const user = await ok(['user', 'create', '--email', 'bots@example.com', '--plan', 'scale']);
  const bot = await ok([
    'bot',
    'create',
    '--user',
    user.id,
    '--name',
    'Café Helper',
    '--provider',
    'gemini',
    '--model',
    'gemini-2.5-pro',
    '--system-prompt',
    'Be brief.',
    '--fallback-message',
    'Ask a human.',
  ]);
  t.same(bot, {
    id: bot.id,
    name: 'Café Helper',
    slug: 'cafe-helper',
    provider: 'gemini',
    is_active: true,
    created_at: bot.created_at,
    system_prompt: 'Be brief.',
    fallback_message: 'Ask a human.',
  });
  const twin = await ok(['bot', 'create', '--user', user.id, '--name', 'cafe helper']);
  t.equal(twin.slug, 'cafe-helper-2');
  t.equal(twin.provider, 'chatgpt');
  t.same(
    await runCli(['bot', 'create', '--user', user.id, '--name', 'x', '--provider', 'claude'], env),
    failure('provider must be one of: gemini, chatgpt, ollama.'),
  );
  t.same(
    await runCli(['bot', 'create', '--user', crypto.randomUUID(), '--name', 'x'], env),
    failure('User not found.'),
  );
  t.equal((await ok(['bot', 'pause', '--bot', bot.id])).is_active, false);
  t.equal((await ok(['bot', 'resume', '--bot', bot.id])).is_active, true);
  t.same(await ok(['bot', 'delete', '--bot', twin.id]), { id: twin.id, deleted: true });
  t.same(await runCli(['bot', 'pause', '--bot', twin.id], env), failure('Chatbot not found.'));
  t.same(await runCli(['bot', 'delete', '--bot', twin.id], env), failure('Chatbot not found.'));
  const again = await ok(['bot', 'create', '--user', user.id, '--name', 'Cafe Helper']);
  t.equal(again.slug, 'cafe-helper-2', 'a deleted chatbot lets go of its slug');
});

t.test('sources: add with --wait, retrieve, delete', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await gw.app.services.chatbots.create(user.id, { name: 'Docs' });
  const source = await ok([
    'source', 'add', '--bot', bot.id, '--text', 'We ship worldwide within five days.', '--title', 'Shipping', '--wait',
  ]); // prettier-ignore
  t.same(source, {
    id: source.id,
    type: 'text',
    title: 'Shipping',
    url: '',
    status: 'done',
    page_count: 0,
    created_at: source.created_at,
    chatbot_id: bot.id,
    error: '',
  });
  const retrieved = await ok(['retrieve', '--bot', bot.id, '--query', 'how long does shipping take']);
  t.equal(retrieved.engine, 'in-process');
  t.equal(retrieved.results.length, 1);
  t.match(retrieved.results[0], {
    rank: 1,
    source_id: source.id,
    title: 'Shipping',
    text: { rank: 1 },
    vector: { rank: 1 },
  });
  t.match(retrieved.results[0].content, /ship worldwide/);
  t.same(
    await runCli(['source', 'add', '--bot', bot.id], env),
    failure('source add: exactly one of --text, --url or --file is required'),
  );
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--type', 'notion', '--url', 'https://example.com'], env),
    failure(
      'url must be a Notion page or database link or id, like https://www.notion.so/acme/Handbook-1f2e3d4c5b6a47988776655443322110 or 1f2e3d4c5b6a47988776655443322110.',
    ),
  );
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--file', '/etc/hostname'], env),
    failure('file must be a PDF, DOCX, PPTX, TXT, MD, CSV, VTT or SRT file.'),
  );
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--file', '/nonexistent.md'], env),
    failure('source add: cannot read /nonexistent.md: ENOENT'),
  );
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--url', 'ftp://x'], env),
    failure('url must be an absolute http or https URL without credentials.'),
  );
  t.same(await runCli(['source', 'add', '--bot', bot.id, '--text', '  '], env), failure('text must not be empty.'));
  t.same(
    await runCli(['source', 'add', '--bot', crypto.randomUUID(), '--text', 'x'], env),
    failure('Chatbot not found.'),
  );
  t.same(await ok(['source', 'delete', '--source', source.id]), { id: source.id, deleted: true });
  t.same(await runCli(['source', 'delete', '--source', source.id], env), failure('Source not found.'));
  t.same(await gw.app.services.sources.listForChatbot(bot.id), []);
  t.same((await ok(['retrieve', '--bot', bot.id, '--query', 'shipping'])).results, [], 'its chunks are gone');
});
