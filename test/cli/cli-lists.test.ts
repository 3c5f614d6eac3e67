import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { cliFailure as failure, runCli, runCliJson } from '../support/cli.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';

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
  const newer = await runCliJson(['bot', 'create', '--user', user.id, '--name', 'Newer', '--provider', 'gemini'], env);
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
    const response = await fetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
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
