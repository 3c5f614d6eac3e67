import t from 'tap';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { runCli, type CliResult } from '../support/cli.ts';

const gw = await startGateway();
t.teardown(() => gw.stop());
const env = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;

async function ok(args: string[]): Promise<any> {
  const result = await runCli(args, env);
  if (result.code !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr}`);
  const lines = result.stdout.split('\n');
  if (lines.length !== 2 || lines[1] !== '' || result.stderr !== '') {
    throw new Error(`not one JSON line: ${JSON.stringify(result)}`);
  }
  return JSON.parse(lines[0]!);
}

function failure(stderr: string): CliResult {
  return { code: 1, stdout: '', stderr: `${stderr}\n` };
}

t.test('users: create, duplicate, bad input, plan change', async (t) => {
  const user = await ok(['user', 'create', '--email', 'Owner@Example.com', '--plan', 'scale']);
  t.same(Object.keys(user), ['id', 'email', 'plan', 'created_at']);
  t.equal(user.email, 'owner@example.com');
  t.equal(user.plan, 'scale');
  t.match(user.created_at, TIMESTAMP);
  t.same(
    await runCli(['user', 'create', '--email', 'owner@example.com'], env),
    failure('A user with this email already exists.'),
  );
  t.same(await runCli(['user', 'create', '--email', 'nope'], env), failure('email must be a valid email address.'));
  t.same(
    await runCli(['user', 'create', '--email', 'x@example.com', '--plan', 'gold'], env),
    failure('plan must be one of: free, hobby, standard, scale.'),
  );
  const free = await ok(['user', 'create', '--email', 'free@example.com']);
  t.equal(free.plan, 'free');
  const changed = await ok(['user', 'plan', '--user', free.id, '--plan', 'hobby']);
  t.same(changed, { ...free, plan: 'hobby' });
  t.same(
    await runCli(['user', 'plan', '--user', crypto.randomUUID(), '--plan', 'scale'], env),
    failure('User not found.'),
  );
});

t.test('keys: create shows the key once, list, revoke, the cap and the plan rule', async (t) => {
  const user = await ok(['user', 'create', '--email', 'keys@example.com', '--plan', 'scale']);
  const created = await ok(['key', 'create', '--user', user.id, '--name', 'Production']);
  t.same(Object.keys(created), ['id', 'name', 'prefix', 'key', 'created_at']);
  t.equal(created.prefix, created.key.slice(0, 8));
  const listed = await ok(['key', 'list', '--user', user.id]);
  t.same(listed, [
    {
      id: created.id,
      name: 'Production',
      prefix: created.prefix,
      last_used_at: null,
      created_at: created.created_at,
      active: true,
    },
  ]);
  const res = await fetch(`${gw.baseUrl}/api/v1/chatbots`, { headers: { authorization: `Bearer ${created.key}` } });
  t.equal(res.status, 200, 'a key created by the CLI works on the gateway');
  const used = await ok(['key', 'list', '--user', user.id]);
  t.match(used[0].last_used_at, TIMESTAMP);
  const revoked = await ok(['key', 'revoke', '--user', user.id, '--key', created.id]);
  t.equal(revoked.active, false);
  const after = await fetch(`${gw.baseUrl}/api/v1/chatbots`, { headers: { authorization: `Bearer ${created.key}` } });
  t.equal(after.status, 401, 'revocation takes effect on the next request');
  t.same(
    await runCli(['key', 'revoke', '--user', user.id, '--key', crypto.randomUUID()], env),
    failure('API key not found.'),
  );
  for (let i = 0; i < 5; i += 1) await ok(['key', 'create', '--user', user.id, '--name', `k${i}`]);
  t.same(
    await runCli(['key', 'create', '--user', user.id, '--name', 'sixth'], env),
    failure('Maximum 5 active API keys allowed.'),
  );
  const hobby = await ok(['user', 'create', '--email', 'hobby@example.com', '--plan', 'hobby']);
  t.same(
    await runCli(['key', 'create', '--user', hobby.id, '--name', 'x'], env),
    failure('API access requires the Scale plan.'),
  );
});

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
    failure('source add: --type notion cannot be ingested yet (supported: url, file, text)'),
  );
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--file', '/etc/hostname'], env),
    failure('file must be a PDF, DOCX, PPTX, TXT, MD or CSV file.'),
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

t.test('usage errors and bad configuration are one line on stderr with exit 1', async (t) => {
  const unknown = await runCli(['frobnicate'], env);
  t.equal(unknown.code, 1);
  t.equal(unknown.stdout, '');
  t.equal(unknown.stderr, "error: unknown command 'frobnicate'\n");
  const missing = await runCli(['user', 'create'], env);
  t.same(missing, failure("error: required option '--email <email>' not specified"));
  const badConfig = await runCli(['user', 'create', '--email', 'c@example.com'], {
    ...env,
    REDIS_PREFIX: 'bad prefix!',
  });
  t.same(badConfig, failure('Invalid REDIS_PREFIX: must be 1-32 characters of [A-Za-z0-9_:.-]'));
  const noRedis = await runCli(['key', 'list', '--user', 'x'], { ...env, REDIS_URL: 'redis://127.0.0.1:1' });
  t.equal(noRedis.code, 1);
  t.match(noRedis.stderr, /^switchboard: .*\n$/);
});
