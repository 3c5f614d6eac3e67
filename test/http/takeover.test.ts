import t from 'tap';
import { fakeOpenAi, heldAnswers } from '../fakes/fake-llm-server.ts';
import { runCli } from '../support/cli.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { RecordingSink } from '../support/recording-sink.ts';
import { apiFetch } from '../support/openapi-contract.ts';
import { until } from '../support/until.ts';

const openai = await fakeOpenAi().start();
const sink = new RecordingSink();
const gw = await startGateway(
  { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1`, LLM_MAX_RETRIES: '0' },
  { events: sink },
);
t.teardown(async () => {
  await gw.stop();
  await openai.stop();
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const bot = await services.chatbots.create(owner.user.id, { name: 'Desk' });
const cliEnv = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };

async function chat(message: string, sessionId: string) {
  const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}` },
    body: JSON.stringify({ message, session_id: sessionId }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

t.test('while an agent holds a conversation: stored, message.received emitted, no LLM, response ""', async (t) => {
  openai.behaviour = () => ({ text: 'AI here' });
  t.same(await chat('hello', 'hold-1'), { status: 200, body: { response: 'AI here' } });
  const held = await services.control.takeOver(bot.id, 'hold-1', 'alice');
  t.equal(held.taken_over_by, 'alice');
  const calls = openai.requests.length;
  t.same(await chat('are you there?', 'hold-1'), { status: 200, body: { response: '' } });
  t.equal(openai.requests.length, calls, 'the LLM was not called');
  t.same(
    sink.forSession('hold-1').map((e) => [e.event, e.data.content]),
    [
      ['conversation.started', undefined],
      ['message.received', 'hello'],
      ['conversation.taken_over', undefined],
      ['message.received', 'are you there?'],
    ],
  );
  t.equal(await services.quota.used(owner.user.id), 2, 'takeover messages count toward the quota');
  await services.control.release(bot.id, 'hold-1', 'alice');
  t.match(sink.forSession('hold-1').at(-1), { event: 'conversation.released', data: { agent: 'alice' } });
  t.same(await chat('back to AI?', 'hold-1'), { status: 200, body: { response: 'AI here' } });
  const transcript = await services.control.show(bot.id, 'hold-1');
  t.same(
    transcript.messages.map((m) => [m.role, m.content]),
    [
      ['user', 'hello'],
      ['assistant', 'AI here'],
      ['user', 'are you there?'],
      ['user', 'back to AI?'],
      ['assistant', 'AI here'],
    ],
  );
  t.equal(transcript.taken_over_by, null);
});

t.test('a takeover during a slow LLM call: the caller gets "" at once, the late reply is discarded', async (t) => {
  // The LLM's reply is held until the caller has its answer: an order, not a time.
  const held = heldAnswers(() => ({ text: 'too late' }));
  openai.behaviour = held.behaviour;
  const calls = openai.requests.length;
  const pending = chat('quick question', 'slow-1');
  const queued = chat('and another', 'slow-1');
  await until(() => openai.requests.length > calls, 'the LLM call');
  await services.control.takeOver(bot.id, 'slow-1', 'bob');
  t.same(await pending, { status: 200, body: { response: '' } });
  t.equal(held.answered, false, 'answered without waiting for the LLM');
  // The queued message waits for the turn before it, which ends when the LLM's reply comes.
  held.release();
  t.same(await queued, { status: 200, body: { response: '' } }, 'the queued message meets the takeover too');
  // The late reply discarded: the turn has ended, and the queued message was answered before.
  await until(async () => (await services.conversations.discarded(bot.id, 'slow-1')).length > 0, 'the discard');
  t.equal(openai.requests.length, calls + 1, 'the queued message never reached the LLM');
  const transcript = await services.control.show(bot.id, 'slow-1');
  t.same(
    transcript.messages.map((m) => [m.role, m.content]),
    [
      ['user', 'quick question'],
      ['user', 'and another'],
    ],
  );
  t.same(
    (await services.conversations.discarded(bot.id, 'slow-1')).map((m) => [m.role, m.content]),
    [['assistant', 'too late']],
  );
});

t.test('a takeover from another process (the CLI) silences an in-flight reply here', async (t) => {
  // The LLM answers only once the takeover is done, however long the CLI takes to start.
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  openai.behaviour = async () => {
    await answered;
    return { text: 'should not appear' };
  };
  const calls = openai.requests.length;
  const pending = chat('help', 'cli-1');
  await until(() => openai.requests.length > calls, 'the LLM call');
  const cli = await runCli(
    ['conversation', 'takeover', '--bot', bot.id, '--session', 'cli-1', '--agent', 'carol'],
    cliEnv,
  );
  t.equal(cli.code, 0, cli.stderr);
  const view = JSON.parse(cli.stdout);
  t.same(view, {
    conversation_id: view.conversation_id,
    chatbot_id: bot.id,
    session_id: 'cli-1',
    source: 'api',
    escalated_at: null,
    taken_over_by: 'carol',
  });
  t.same(await pending, { status: 200, body: { response: '' } });
  answer();
  // The late reply discarded: the turn has ended, and wrote nothing else.
  await until(async () => (await services.conversations.discarded(bot.id, 'cli-1')).length > 0, 'the discard');
  t.same(
    (await services.conversations.discarded(bot.id, 'cli-1')).map((m) => [m.role, m.content]),
    [['assistant', 'should not appear']],
  );
  const shown = JSON.parse(
    (await runCli(['conversation', 'show', '--bot', bot.id, '--session', 'cli-1'], cliEnv)).stdout,
  );
  t.same(
    shown.messages.map((m: { role: string }) => m.role),
    ['user'],
  );
  t.same(Object.keys(shown), [
    'conversation_id',
    'chatbot_id',
    'session_id',
    'source',
    'escalated_at',
    'taken_over_by',
    'messages',
  ]);
  t.same(Object.keys(shown.messages[0]), ['role', 'content', 'created_at']);
});

t.test('two agents cannot hold one conversation; release by another agent names the holder', async (t) => {
  openai.behaviour = () => ({ text: 'hi' });
  await chat('hello', 'two-1');
  await services.control.takeOver(bot.id, 'two-1', 'dave');
  await t.rejects(services.control.takeOver(bot.id, 'two-1', 'erin'), {
    name: 'ConflictError',
    detail: 'Conversation is already taken over by dave.',
  });
  await t.rejects(services.control.release(bot.id, 'two-1', 'erin'), {
    name: 'ConflictError',
    detail: 'Conversation is already taken over by dave.',
  });
  await services.control.takeOver(bot.id, 'two-1', 'dave');
  t.same(
    sink
      .forSession('two-1')
      .filter((e) => e.event.startsWith('conversation.'))
      .map((e) => [e.event, e.data.agent]),
    [
      ['conversation.started', undefined],
      ['conversation.taken_over', 'dave'],
    ],
    "refused takeovers and releases, and the holder's own takeover again, emit nothing",
  );
  const cli = await runCli(
    ['conversation', 'takeover', '--bot', bot.id, '--session', 'two-1', '--agent', 'erin'],
    cliEnv,
  );
  t.same(cli, { code: 1, stdout: '', stderr: 'Conversation is already taken over by dave.\n' });
  const released = await runCli(['conversation', 'release', '--bot', bot.id, '--session', 'two-1'], cliEnv);
  t.equal(JSON.parse(released.stdout).taken_over_by, null, 'the operator releases whoever holds it');
  const missing = await runCli(['conversation', 'show', '--bot', bot.id, '--session', 'nobody'], cliEnv);
  t.same(missing, { code: 1, stdout: '', stderr: 'Conversation not found.\n' });
  const noBot = await runCli(['conversation', 'show', '--bot', crypto.randomUUID(), '--session', 'x'], cliEnv);
  t.same(noBot, { code: 1, stdout: '', stderr: 'Chatbot not found.\n' });
});

t.test('escalation is flagged once and emits conversation.escalated once; the AI keeps answering', async (t) => {
  openai.behaviour = () => ({ text: 'still AI' });
  await chat('first', 'embed-esc');
  await chat('second', 'embed-esc');
  const first = await services.control.escalate(bot.id, 'embed-esc');
  t.equal(first.first, true);
  const again = await services.control.escalate(bot.id, 'embed-esc');
  t.equal(again.first, false);
  t.equal(again.escalatedAt, first.escalatedAt);
  const escalations = sink.forSession('embed-esc').filter((e) => e.event === 'conversation.escalated');
  t.equal(escalations.length, 1);
  t.same(escalations[0]!.data, {
    conversation_id: first.conversation.conversation_id,
    session_id: 'embed-esc',
    channel: 'web',
    escalated_at: first.escalatedAt,
    message_count: 4,
  });
  t.same(await chat('third', 'embed-esc'), { status: 200, body: { response: 'still AI' } });
  await chat('x', 'tg_77');
  await services.control.escalate(bot.id, 'tg_77');
  const telegram = sink.forSession('tg_77').find((e) => e.event === 'conversation.escalated')!;
  t.equal(telegram.data.channel, 'telegram');
  t.notOk('message_count' in telegram.data, 'message_count is for web escalations');
  await chat('x', 'api-weird');
  await services.control.escalate(bot.id, 'api-weird');
  t.equal(sink.forSession('api-weird').find((e) => e.event === 'conversation.escalated')!.data.channel, 'unknown');
  const shown = JSON.parse(
    (await runCli(['conversation', 'escalate', '--bot', bot.id, '--session', 'embed-esc'], cliEnv)).stdout,
  );
  t.equal(shown.escalated_at, first.escalatedAt);
});
