import t from 'tap';
import { fakeOpenAi, type RecordedRequest } from '../../fakes/fake-llm-server.ts';
import { FakeSite, html } from '../../ingest/fake-site.ts';
import { scaleAccount, startGateway } from '../../support/gateway.ts';
import { until } from '../../support/until.ts';
import { WidgetClient, type Frame } from '../../support/widget-client.ts';

// Issue 21: a widget reply streams as it is written, cites its sources, can be rated, and a takeover
// cuts the stream everywhere at once.
const openai = await fakeOpenAi().start();
const site = await new FakeSite().start();
site.routes.set('/shipping', html('Shipping', '<main><p>Every order ships within two working days.</p></main>'));
const gw = await startGateway({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  LLM_MAX_RETRIES: '0',
  CRAWL_ALLOW_PRIVATE: '1',
  CONVERSATION_RATE_LIMIT: '1000',
});
t.teardown(async () => {
  await gw.stop();
  await site.stop();
  await openai.stop();
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const bot = await services.chatbots.create(owner.user.id, { name: 'Shop Bot', provider: 'chatgpt' });
const returns = await services.intake.addText(bot.id, 'Unworn shoes can be returned within 30 days.', 'Returns');
const shipping = await services.intake.addUrl(bot.id, `${site.url}/shipping`);
for (const source of [returns, shipping]) {
  await until(async () => (await services.sources.get(source.id)).status === 'done', 'ingestion', 30_000);
}
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

/** The ids the prompt gave the references, by title. */
function referenceIds(request: RecordedRequest): Map<string, string> {
  const system = String(request.body.messages[0].content);
  return new Map([...system.matchAll(/<reference id="(\d+)" title="([^"]*)"/g)].map((m) => [m[2]!, m[1]!]));
}

/** The model cites shipping first, then returns, by the ids the prompt gave them, and one it never had. */
function citingReply(request: RecordedRequest) {
  const ids = referenceIds(request);
  const text = `We ship within two days [${ids.get('Shipping')}]. Returns take 30 days [${ids.get('Returns')}][9].`;
  return { text, pieceIntervalMs: 5 };
}

const open = (query: Record<string, string> = {}) => WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id, ...query });
const deltas = (client: WidgetClient, streamId?: string) =>
  client.frames.filter((f) => f.type === 'delta' && (streamId === undefined || f.stream_id === streamId));

t.test('a reply streams, renumbered as it is written, and is stored with the sources it cites', async (t) => {
  openai.behaviour = citingReply;
  const { client, ready } = await open();
  client.send({ type: 'message', content: 'How fast do you ship, and can I return shoes?' });
  const reply = await client.next('message');
  const cited = 'We ship within two days [1]. Returns take 30 days [2].';
  t.same(reply, {
    type: 'message',
    role: 'assistant',
    content: cited,
    created_at: reply.created_at,
    stream_id: reply.stream_id,
    citations: [{ title: 'Shipping', url: `${site.url}/shipping` }, { title: 'Returns' }],
  });
  t.match(reply.created_at, TIMESTAMP);
  t.equal(
    deltas(client, reply.stream_id)
      .map((f) => f.content)
      .join(''),
    cited,
    'what streamed is what was stored',
  );
  t.ok(deltas(client).length > 1, 'in several pieces');
  t.equal(openai.requests.at(-1)!.body.stream, true, 'the provider streamed');
  const prompt = String(openai.requests.at(-1)!.body.messages[0].content);
  t.match(prompt, /end that sentence with the reference id in square brackets, like \[1\] or \[1\]\[3\]/);
  const transcript = await services.conversations.transcript(bot.id, ready.session_id);
  t.same(transcript.messages.at(-1), {
    role: 'assistant',
    content: cited,
    created_at: reply.created_at,
    citations: [{ title: 'Shipping', url: `${site.url}/shipping` }, { title: 'Returns' }],
  });
  // The next prompt carries the reply without its markers: they named that turn's references.
  openai.behaviour = () => ({ text: 'You are welcome.' });
  client.send({ type: 'message', content: 'Thanks' });
  await client.next('message');
  t.same(openai.requests.at(-1)!.body.messages.slice(-2), [
    { role: 'assistant', content: 'We ship within two days. Returns take 30 days.' },
    { role: 'user', content: 'Thanks' },
  ]);
  await client.close();
});

t.test('with citations off the prompt asks for none and markers never reach the visitor', async (t) => {
  await services.chatbots.configure(bot.id, { answers: { citations: false } });
  t.teardown(() => services.chatbots.configure(bot.id, { answers: { citations: true } }));
  openai.behaviour = citingReply;
  const { client } = await open();
  client.send({ type: 'message', content: 'How fast do you ship?' });
  const reply = await client.next('message');
  t.same(Object.keys(reply).sort(), ['content', 'created_at', 'role', 'stream_id', 'type']);
  t.equal(reply.content, 'We ship within two days. Returns take 30 days.');
  t.equal(
    deltas(client)
      .map((f) => f.content)
      .join(''),
    reply.content,
  );
  t.notMatch(String(openai.requests.at(-1)!.body.messages[0].content), /square brackets/);
  await client.close();
});

t.test('a takeover cuts a stream: nothing after its end, the partial kept aside, the call stopped', async (t) => {
  const words = Array.from({ length: 40 }, (_, i) => `word${i} `);
  openai.behaviour = () => ({ text: words.join(''), pieces: words, pieceIntervalMs: 50 });
  const { client, ready } = await open();
  const other = await open({ session_id: ready.session_id });
  client.send({ type: 'message', content: 'Tell me a long story' });
  const first = await client.next('delta');
  await services.control.takeOver(bot.id, ready.session_id, 'Maria');
  const ended = await client.next('stream_end');
  t.same(ended, { type: 'stream_end', stream_id: first.stream_id, reason: 'taken_over' });
  t.same(await other.client.next('stream_end'), ended, 'every socket of the session');
  const request = openai.requests.at(-1)!;
  await until(() => request.abandoned, 'the LLM call stopped');
  const discarded = await until(async () => {
    const kept = await services.conversations.discarded(bot.id, ready.session_id);
    return kept.length > 0 && kept;
  }, 'the partial reply kept aside');
  // Settle: anything the gateway sent before answering this frame has arrived.
  client.send({});
  await client.next('error');
  const after = client.frames.slice(client.frames.indexOf(ended) + 1);
  t.same(
    after.filter((f: Frame) => f.type === 'delta' || f.type === 'message'),
    [],
    'no piece and no reply after the end',
  );
  const shown = deltas(client, first.stream_id)
    .map((f) => f.content)
    .join('');
  t.ok(shown.length > 0 && discarded[0]!.content.startsWith(shown), 'kept aside: at least what was shown');
  t.ok(words.join('').startsWith(discarded[0]!.content), 'and no more than was written');
  t.ok(discarded[0]!.content.length < words.join('').length, 'cut short');
  t.equal(discarded[0]!.role, 'assistant');
  t.same(
    (await services.conversations.transcript(bot.id, ready.session_id)).messages.map((m) => m.role),
    ['user'],
    'no reply in the transcript',
  );
  await services.control.release(bot.id, ready.session_id);
  await Promise.all([client.close(), other.client.close()]);
});

t.test('a visitor rates a reply once, changes it, takes it back; transcripts and counts follow', async (t) => {
  openai.behaviour = () => ({ text: 'Two days.' });
  const { client, ready } = await open();
  client.send({ type: 'message', content: 'Shipping time?' });
  const reply = await client.next('message');
  const month = reply.created_at.slice(0, 7);
  const rate = async (rating: string | null, createdAt = reply.created_at) => {
    client.send({ type: 'feedback', created_at: createdAt, rating });
    return client.next(['feedback_saved', 'error']);
  };
  t.same(await rate('up'), { type: 'feedback_saved', created_at: reply.created_at, rating: 'up' });
  t.same(await services.feedback.counts(bot.id, month), { up: 1, down: 0 });
  t.same(await rate('up'), { type: 'feedback_saved', created_at: reply.created_at, rating: 'up' }, 'again: once');
  t.same(await services.feedback.counts(bot.id, month), { up: 1, down: 0 });
  t.same(await rate('down'), { type: 'feedback_saved', created_at: reply.created_at, rating: 'down' });
  t.same(await services.feedback.counts(bot.id, month), { up: 0, down: 1 });
  const transcript = await services.conversations.transcript(bot.id, ready.session_id);
  t.same(transcript.messages.at(-1), {
    role: 'assistant',
    content: 'Two days.',
    created_at: reply.created_at,
    feedback: 'down',
  });
  const again = await open({ session_id: ready.session_id });
  t.same(again.ready.history.at(-1), transcript.messages.at(-1), 'a reload shows the rating');
  await again.client.close();
  t.same(await rate(null), { type: 'feedback_saved', created_at: reply.created_at, rating: null });
  t.same(await services.feedback.counts(bot.id, month), { up: 0, down: 0 });
  t.notOk('feedback' in (await services.conversations.transcript(bot.id, ready.session_id)).messages.at(-1)!);

  const visitorLine = (await services.conversations.transcript(bot.id, ready.session_id)).messages[0]!;
  t.same(await rate('up', visitorLine.created_at), { type: 'error', detail: 'Message not found.' }, 'only replies');
  t.same(await rate('up', '2026-01-01T00:00:00.000000+00:00'), { type: 'error', detail: 'Message not found.' });
  t.same(await rate('up', 'yesterday'), { type: 'error', detail: 'created_at must be the timestamp of a reply.' });
  t.same(await rate('great'), { type: 'error', detail: 'rating must be up, down or null.' });
  client.send({ type: 'feedback', rating: 'up' });
  t.same(await client.next('error'), { type: 'error', detail: 'created_at is required.' });
  // Another visitor's socket cannot rate this conversation's reply: the frame names its own session's.
  const stranger = await open();
  stranger.client.send({ type: 'feedback', created_at: reply.created_at, rating: 'down' });
  t.same(await stranger.client.next('error'), { type: 'error', detail: 'Message not found.' });
  t.same(await services.feedback.counts(bot.id, month), { up: 0, down: 0 });
  await Promise.all([client.close(), stranger.client.close()]);
});

t.test(
  'answering only from sources: nothing relevant, no LLM call, the fallback and an offer of a person',
  async (t) => {
    const strict = await services.chatbots.create(owner.user.id, {
      name: 'Strict Bot',
      provider: 'chatgpt',
      fallbackMessage: 'I can only answer from our help pages.',
    });
    await services.chatbots.configure(strict.id, { answers: { sources_only: true } });
    const calls = openai.requests.length;
    const { client } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: strict.id });
    client.send({ type: 'message', content: 'What is the capital of Mongolia?' });
    const reply = await client.next('message');
    t.same(reply, {
      type: 'message',
      role: 'assistant',
      content: 'I can only answer from our help pages.',
      created_at: reply.created_at,
      handoff: true,
    });
    t.equal(openai.requests.length, calls, 'the LLM was not asked');
    await client.close();
  },
);
