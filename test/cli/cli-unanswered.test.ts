import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { cliFailure as failure, runCli, runCliJson } from '../support/cli.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { apiFetch } from '../support/openapi-contract.ts';

const openai = await fakeOpenAi().start();
t.teardown(() => openai.stop());
const gw = await startGateway({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` });
t.teardown(() => gw.stop());
const env = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const bot = await services.chatbots.create(owner.user.id, { name: 'Cli Inbox' });

t.test('unanswered list: the open groups as the dashboard lists them, or the resolved ones', async (t) => {
  t.same(await runCliJson(['unanswered', 'list', '--bot', bot.id], env), []);
  await services.unansweredRecorder.record(
    bot.id,
    'embed-1',
    'Do you ship to Canada?',
    1_777_593_601_000_000,
    'fallback',
  );
  const open = await services.unanswered.list(bot.id, 'open');
  t.equal(open.length, 1);
  t.same(await runCliJson(['unanswered', 'list', '--bot', bot.id], env), open);
  await services.improver.dismiss(bot.id, open[0]!.id);
  t.same(await runCliJson(['unanswered', 'list', '--bot', bot.id, '--status', 'resolved'], env), [
    await services.unanswered.get(bot.id, open[0]!.id),
  ]);
  t.same(
    await runCli(['unanswered', 'list', '--bot', bot.id, '--status', 'closed'], env),
    failure('status must be open or resolved.'),
  );
  t.same(await runCli(['unanswered', 'list', '--bot', crypto.randomUUID()], env), failure('Chatbot not found.'));
});

t.test("conversation escalate from the CLI records the visitor's last question before it exits", async (t) => {
  openai.behaviour = () => ({ text: 'We open at nine.' });
  const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}` },
    body: JSON.stringify({ message: 'When do you open on Sundays?', session_id: 'api-cli' }),
  });
  t.equal(res.status, 200);
  await services.unansweredRecorder.settled();
  const before = await services.unanswered.list(bot.id, 'open');
  t.same(
    before.map((group) => [group.question, group.reasons]),
    [['When do you open on Sundays?', { low_relevance: 1 }]],
    'no sources: answered below the relevance floor',
  );
  await runCliJson(['conversation', 'escalate', '--bot', bot.id, '--session', 'api-cli'], env);
  t.same(
    (await runCliJson(['unanswered', 'list', '--bot', bot.id], env)).map(
      (group: { question: string; count: number; reasons: unknown }) => [group.question, group.count, group.reasons],
    ),
    [['When do you open on Sundays?', 1, { low_relevance: 1, escalated: 1 }]],
  );
});
