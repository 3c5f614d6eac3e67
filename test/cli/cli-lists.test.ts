import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { cliFailure as failure, runCli, runCliJson } from '../support/cli.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { apiFetch } from '../support/openapi-contract.ts';

const openai = await fakeOpenAi().start();
t.teardown(() => openai.stop());
openai.behaviour = (request) => ({ text: `AI: ${request.body.messages.at(-1).content}` });
const gw = await startGateway({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` });
t.teardown(() => gw.stop());
const env = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };

t.test('user list: every account, newest first', async (t) => {
  // A namespace of its own in the same Redis, so the list is exactly what this test made.
  const own = { ...env, REDIS_PREFIX: 'lists:' };
  t.same(await runCliJson(['user', 'list'], own), []);
  const first = await runCliJson(['user', 'create', '--email', 'first@example.com'], own);
  const second = await runCliJson(['user', 'create', '--email', 'Second@Example.com', '--plan', 'scale'], own);
  t.same(await runCliJson(['user', 'list'], own), [second, first]);
  t.same(await runCli(['user', 'list', '--user', first.id], own), failure("error: unknown option '--user'"));
});

t.test("bot list: an owner's live chatbots as the API lists them", async (t) => {
  const user = await runCliJson(['user', 'create', '--email', 'bots@example.com'], env);
  t.same(await runCliJson(['bot', 'list', '--user', user.id], env), []);
  const older = await runCliJson(['bot', 'create', '--user', user.id, '--name', 'Older'], env);
  const newer = await runCliJson(['bot', 'create', '--user', user.id, '--name', 'Newer', '--provider', 'ollama'], env);
  const gone = await runCliJson(['bot', 'create', '--user', user.id, '--name', 'Gone'], env);
  await runCliJson(['bot', 'delete', '--bot', gone.id], env);
  const listed = (bot: Record<string, unknown>) => {
    const { id, name, slug, provider, is_active, created_at } = bot;
    return { id, name, slug, provider, is_active, created_at };
  };
  t.same(await runCliJson(['bot', 'list', '--user', user.id], env), [listed(newer), listed(older)]);
  t.same(await runCli(['bot', 'list', '--user', crypto.randomUUID()], env), failure('User not found.'));
  t.same(await runCli(['bot', 'list'], env), failure("error: required option '--user <id>' not specified"));
});

t.test('conversation list: newest activity first, escalated ones alone, a limit', async (t) => {
  const { user, key } = await scaleAccount(gw.app);
  const bot = await gw.app.services.chatbots.create(user.id, { name: 'Lists' });
  const chat = async (session: string, message: string) => {
    const response = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message, session_id: session }),
    });
    t.equal(response.status, 200);
  };
  await chat('api-a', 'first question');
  await chat('api-b', 'second question');
  await runCliJson(['conversation', 'escalate', '--bot', bot.id, '--session', 'api-a'], env);
  await chat('api-c', 'third question');

  const all = await runCliJson(['conversation', 'list', '--bot', bot.id], env);
  t.same(
    all.map((row: { session_id: string; last_message: { role: string; content: string } }) => [
      row.session_id,
      row.last_message.content,
    ]),
    [
      ['api-c', 'AI: third question'],
      ['api-b', 'AI: second question'],
      ['api-a', 'AI: first question'],
    ],
  );
  t.same(Object.keys(all[0]).sort(), [
    'chatbot_id',
    'conversation_id',
    'escalated_at',
    'last_activity_at',
    'last_message',
    'session_id',
    'source',
    'taken_over_by',
  ]);
  const escalated = await runCliJson(['conversation', 'list', '--bot', bot.id, '--escalated'], env);
  t.same(
    escalated.map((row: { session_id: string }) => row.session_id),
    ['api-a'],
  );
  t.ok(escalated[0].escalated_at);
  const limited = await runCliJson(['conversation', 'list', '--bot', bot.id, '--limit', '2'], env);
  t.same(
    limited.map((row: { session_id: string }) => row.session_id),
    ['api-c', 'api-b'],
  );
  t.same(
    await runCli(['conversation', 'list', '--bot', bot.id, '--limit', '0'], env),
    failure('conversation list: --limit must be a positive integer'),
  );
  t.same(await runCli(['conversation', 'list', '--bot', crypto.randomUUID()], env), failure('Chatbot not found.'));
});

t.test('doctor: what is misconfigured, and what to do about it', async (t) => {
  // The test's redis-server keeps nothing on disk, and has no query engine.
  const version = /redis_version:(\S+)/.exec(await runRedisInfo())?.[1];
  const redisFinding = {
    check: 'redis',
    status: 'warning',
    detail: `Redis ${version} keeps nothing on disk (appendonly no, no snapshots): a restart loses every account, chatbot and conversation`,
    fix: 'set appendonly yes on the Redis server (the managed one and docker-compose.yml do)',
  };
  const queryEngine = {
    check: 'query_engine',
    status: 'ok',
    detail:
      "retrieval runs in each gateway's memory (this Redis has no query engine (FT._LIST failed)); fine for most installs, see the operator guide for large ones",
  };
  // A namespace where no gateway has ever run.
  t.same(await runCliJson(['doctor'], { ...env, REDIS_PREFIX: 'doctor:' }), {
    ok: false,
    checks: [
      redisFinding,
      {
        check: 'gateways',
        status: 'problem',
        detail: 'no gateway is running on this Redis: visitors get no answers and sources are not ingested',
        fix: 'start one: npm start',
      },
      queryEngine,
      {
        check: 'providers',
        status: 'problem',
        detail: 'no gateway has started on this Redis yet, so which LLM providers it can call is unknown',
        fix: 'start one: npm start',
      },
    ],
  });
  // This file's gateway: an OpenAI key, no Gemini key, no PUBLIC_URL.
  const user = await runCliJson(['user', 'create', '--email', 'doctor@example.com'], env);
  const made = await runCli(['bot', 'create', '--user', user.id, '--name', 'Gem', '--provider', 'gemini'], env);
  const gem = JSON.parse(made.stdout);
  const warning = (id: string) =>
    `warning: the gateways have no GEMINI_API_KEY: chatbot "Gem" (${id}) answers its visitors with its fallback message and API calls with "LLM provider error." until GEMINI_API_KEY is set for them, or it uses another provider\n`;
  t.same(
    made,
    { code: 0, stdout: `${JSON.stringify(gem)}\n`, stderr: warning(gem.id) },
    'bot create warns of a provider the gateways cannot call, beside its JSON',
  );
  const moved = await runCli(['bot', 'update', '--bot', gem.id, '--provider', 'chatgpt'], env);
  t.same([moved.code, moved.stderr], [0, ''], 'no warning for a provider they can call');
  const back = await runCli(['bot', 'update', '--bot', gem.id, '--provider', 'gemini'], env);
  t.same([back.code, JSON.parse(back.stdout).provider, back.stderr], [0, 'gemini', warning(gem.id)]);
  const report = await runCliJson(['doctor'], env);
  t.equal(report.ok, false);
  t.same(report.checks.slice(0, 4), [
    redisFinding,
    { check: 'gateways', status: 'ok', detail: '1 running' },
    queryEngine,
    { check: 'embeddings', status: 'ok', detail: 'answers from local-v2-384 (EMBEDDINGS=local)' },
  ]);
  t.same(
    report.checks.filter((finding: { detail: string }) => finding.detail.includes(gem.id)),
    [
      {
        check: 'providers',
        status: 'problem',
        detail: `chatbot "Gem" (${gem.id}) answers with gemini, but the gateways have no GEMINI_API_KEY: its visitors get its fallback message and API calls "LLM provider error."`,
        fix: `set GEMINI_API_KEY for the gateways and restart them, or: switchboard bot update --bot ${gem.id} --provider <one they have>`,
      },
    ],
  );
  t.same(report.checks.at(-1), {
    check: 'public_url',
    status: 'warning',
    detail:
      'PUBLIC_URL is not set: a widget on an https site cannot reach the gateway, Telegram cannot send to its webhook, and OAuth connections cannot sign in',
    fix: 'set PUBLIC_URL for the gateways to the https address they are reached at',
  });
  // Every chatbot on a provider the gateways can call, and a PUBLIC_URL: nothing to fix.
  for (const account of await gw.app.services.accounts.list()) {
    for (const bot of await gw.app.services.chatbots.listForUser(account.id)) {
      if (bot.provider === 'gemini') await runCliJson(['bot', 'update', '--bot', bot.id, '--provider', 'chatgpt'], env);
    }
  }
  await gw.app.services.gateways.publishUrl('https://bots.example.com');
  t.same(await runCliJson(['doctor'], env), {
    ok: true,
    checks: [
      redisFinding,
      { check: 'gateways', status: 'ok', detail: '1 running' },
      queryEngine,
      { check: 'embeddings', status: 'ok', detail: 'answers from local-v2-384 (EMBEDDINGS=local)' },
      {
        check: 'providers',
        status: 'ok',
        detail: "every chatbot's provider can be called (the gateways have chatgpt, ollama)",
      },
      { check: 'public_url', status: 'ok', detail: 'https://bots.example.com' },
    ],
  });
});

t.test('--bot takes a chatbot name or slug where exactly one chatbot has it', async (t) => {
  const user = await runCliJson(['user', 'create', '--email', 'names@example.com'], env);
  const bot = await runCliJson(['bot', 'create', '--user', user.id, '--name', 'Cake Shop Helper'], env);
  const paused = await runCliJson(['bot', 'pause', '--bot', 'cake shop helper'], env);
  t.same([paused.id, paused.is_active], [bot.id, false]);
  t.same(await runCliJson(['lead', 'list', '--bot', 'cake-shop-helper'], env), []);
  const other = await runCliJson(['user', 'create', '--email', 'names-2@example.com'], env);
  const twin = await runCliJson(['bot', 'create', '--user', other.id, '--name', 'Cake Shop Helper'], env);
  t.same(
    await runCli(['bot', 'resume', '--bot', 'Cake Shop Helper'], env),
    failure(`2 chatbots are named "Cake Shop Helper": give --bot the id of one (${twin.id}, ${bot.id})`),
  );
  t.equal((await runCliJson(['bot', 'resume', '--bot', bot.id], env)).is_active, true, 'ids work as before');
  t.same(await runCli(['lead', 'list', '--bot', 'No Such Bot'], env), failure('Chatbot not found.'));
});

t.test(
  "user create without --plan: the gateways' DEFAULT_PLAN, the CLI's own only before any gateway ran",
  async (t) => {
    const made = await runCliJson(['user', 'create', '--email', 'plain@example.com'], {
      ...env,
      DEFAULT_PLAN: 'scale',
    });
    t.equal(made.plan, 'free', "this file's gateway runs with the default, and it decides");
    const setup = await gw.app.services.gateways.setup();
    await gw.app.services.gateways.publishSetup({ ...setup!, default_plan: 'hobby' });
    t.equal((await runCliJson(['user', 'create', '--email', 'hobbyist@example.com'], env)).plan, 'hobby');
    t.equal(
      (await runCliJson(['user', 'create', '--email', 'big@example.com', '--plan', 'scale'], env)).plan,
      'scale',
      '--plan wins',
    );
    await gw.app.services.gateways.publishSetup(setup!);
    const alone = { ...env, REDIS_PREFIX: 'plans:' };
    t.equal((await runCliJson(['user', 'create', '--email', 'a@example.com'], alone)).plan, 'free');
    t.equal(
      (await runCliJson(['user', 'create', '--email', 'b@example.com'], { ...alone, DEFAULT_PLAN: 'standard' })).plan,
      'standard',
    );
    t.same(
      await runCli(['user', 'create', '--email', 'c@example.com'], { ...alone, DEFAULT_PLAN: 'gold' }),
      failure('Invalid DEFAULT_PLAN: must be one of the plans of PLAN_QUOTAS (free, hobby, standard, scale)'),
    );
  },
);

/** The test redis-server's INFO server section. */
async function runRedisInfo(): Promise<string> {
  const redis = await connectRedis({ url: gw.redis.url }, createLogger('silent'));
  try {
    return await redis.info('server');
  } finally {
    await redis.close();
  }
}
