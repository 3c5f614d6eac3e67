import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';

// The management API of the unanswered inbox and improved answers: exact bodies and statuses, the
// owner's own chatbots and groups only, bodies checked before anything is written.
const openai = await fakeOpenAi().start();
const gw = await startGateway({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` });
t.teardown(async () => {
  await gw.stop();
  await openai.stop();
});
const { services } = gw.app;
const owner = await createOwner(gw.app);
const client = await DashboardClient.signIn(gw.baseUrl, owner);
const stranger = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
const bot = (await client.post('/dashboard/api/chatbots', { name: 'Inbox' })).body;
const otherBot = (await client.post('/dashboard/api/chatbots', { name: 'Other' })).body;
const base = `/dashboard/api/chatbots/${bot.id}/unanswered`;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;
const MAY_1 = 1_777_593_600_000_000; // 2026-05-01T00:00:00Z

/** Records a question into the inbox as a turn would, asked `seconds` after 1 May 2026. */
async function ask(question: string, seconds: number, sessionId = `embed-${seconds}`, chatbotId = bot.id) {
  const reply = await services.unansweredRecorder.record(
    chatbotId,
    sessionId,
    question,
    MAY_1 + seconds * 1e6,
    'fallback',
  );
  return reply![1]!;
}

const canada = await ask('Do you ship to Canada?', 1, 'embed-first');
await ask('do you ship to canada', 3, 'embed-latest');
const hours = await ask('Are you open on public holidays?', 2);
const foreign = await ask('Do you ship to Canada?', 4, 'embed-other', otherBot.id);

t.test('the list: open groups last asked first, with counts, reasons, examples and the latest session', async (t) => {
  const res = await client.get(base);
  t.equal(res.status, 200);
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.same(res.body, [
    {
      id: canada,
      question: 'Do you ship to Canada?',
      count: 2,
      first_seen_at: '2026-05-01T00:00:01.000000+00:00',
      last_seen_at: '2026-05-01T00:00:03.000000+00:00',
      reasons: { fallback: 2 },
      examples: ['Do you ship to Canada?'],
      session_id: 'embed-latest',
      status: 'open',
    },
    {
      id: hours,
      question: 'Are you open on public holidays?',
      count: 1,
      first_seen_at: '2026-05-01T00:00:02.000000+00:00',
      last_seen_at: '2026-05-01T00:00:02.000000+00:00',
      reasons: { fallback: 1 },
      examples: ['Are you open on public holidays?'],
      session_id: 'embed-2',
      status: 'open',
    },
  ]);
  t.same((await client.get(`${base}?status=open`)).body, res.body);
  t.same((await client.get(`${base}?status=resolved`)).body, []);
});

t.test('a status other than open or resolved is refused', async (t) => {
  for (const query of ['?status=closed', '?status=', '?status=open&status=resolved']) {
    const res = await client.get(`${base}${query}`);
    t.same([res.status, res.body], [400, { detail: 'status must be open or resolved.' }], query);
  }
});

t.test("another owner's chatbot, and another chatbot's or an unknown group, are not found", async (t) => {
  const notBot = { detail: 'Chatbot not found.' };
  const notQuestion = { detail: 'Question not found.' };
  const cases: Array<[DashboardClient, string, string, unknown, unknown]> = [
    [stranger, 'GET', base, undefined, notBot],
    [stranger, 'POST', `${base}/${canada}/answer`, { answer: 'Yes.' }, notBot],
    [stranger, 'POST', `${base}/${canada}/dismiss`, undefined, notBot],
    [client, 'POST', `${base}/${foreign}/answer`, { answer: 'Yes.' }, notQuestion],
    [client, 'POST', `${base}/${foreign}/dismiss`, undefined, notQuestion],
    [client, 'POST', `${base}/${crypto.randomUUID()}/dismiss`, undefined, notQuestion],
    [client, 'POST', `${base}/not-a-uuid/dismiss`, undefined, notQuestion],
    // Not found before the body is read: a bad body to a foreign group is still 404.
    [client, 'POST', `${base}/${foreign}/answer`, { answer: 42 }, notQuestion],
  ];
  for (const [who, method, path, body, detail] of cases) {
    const res = await who.request(method, path, body);
    t.same([res.status, res.body], [404, detail], `${method} ${path}`);
  }
  t.equal((await services.unanswered.get(otherBot.id, foreign)).status, 'open');
});

t.test('an answer body is checked before anything is written', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{}, 'answer is required.'],
    [{ answer: 42 }, 'answer must be a string.'],
    [{ answer: '  \n ' }, 'answer must not be empty.'],
    [{ answer: 'x'.repeat(10_001) }, 'answer must be at most 10000 characters.'],
    [{ answer: 'Yes.', title: 7 }, 'title must be a string.'],
    [{ answer: 'Yes.', title: 't'.repeat(301) }, 'title must be at most 300 characters.'],
    [[], 'Request body must be a JSON object.'],
  ];
  for (const [body, detail] of cases) {
    const res = await client.post(`${base}/${canada}/answer`, body);
    t.same([res.status, res.body], [400, { detail }], JSON.stringify(body).slice(0, 40));
  }
  const csrf = await client.post(`${base}/${canada}/answer`, { answer: 'Yes.' }, { 'x-csrf-token': 'wrong' });
  t.same([csrf.status, csrf.body], [403, { detail: 'CSRF token missing or invalid.' }]);
  t.same((await client.get(`/dashboard/api/chatbots/${bot.id}/sources`)).body, [], 'no source was added');
  t.equal((await services.unanswered.get(bot.id, canada)).status, 'open');
});

t.test('answering a group adds a text source titled with the question and resolves the group', async (t) => {
  const answer = 'Yes: we ship to Canada in 5 to 8 working days; duties are paid on delivery.';
  const res = await client.post(`${base}/${canada}/answer`, { answer });
  t.equal(res.status, 201);
  const { source, group } = res.body;
  t.same(source, {
    id: source.id,
    type: 'text',
    title: 'Do you ship to Canada?',
    url: '',
    status: 'pending',
    page_count: 0,
    created_at: source.created_at,
    chatbot_id: bot.id,
    error: '',
    characters: 117,
    words: 23,
    progress: '',
  });
  t.match(source.created_at, TIMESTAMP);
  t.same(group, {
    id: canada,
    question: 'Do you ship to Canada?',
    count: 2,
    first_seen_at: '2026-05-01T00:00:01.000000+00:00',
    last_seen_at: '2026-05-01T00:00:03.000000+00:00',
    reasons: { fallback: 2 },
    examples: ['Do you ship to Canada?'],
    session_id: 'embed-latest',
    status: 'resolved',
    resolution: 'answered',
    resolved_at: group.resolved_at,
    source_id: source.id,
  });
  t.match(group.resolved_at, TIMESTAMP);
  const stored = await services.sources.get(source.id);
  t.equal(
    (await services.sources.content(stored))?.toString('utf8'),
    `Question: Do you ship to Canada?\n\nAnswer: ${answer}`,
  );
  // A source like any other: listed, and ingested by the gateway.
  await until(
    async () =>
      (await client.get(`/dashboard/api/chatbots/${bot.id}/sources`)).body.find(
        (listed: { id: string; status: string }) => listed.id === source.id && listed.status === 'done',
      ),
    'the source to be ingested',
    30_000,
  );
  t.same(
    (await client.get(base)).body.map((open: { id: string }) => open.id),
    [hours],
  );
  t.same((await client.get(`${base}?status=resolved`)).body, [group]);
  const again = await client.post(`${base}/${canada}/answer`, { answer: 'No.' });
  t.same(
    [again.status, again.body],
    [409, { detail: 'This question is answered already: change its source instead.' }],
  );
  const dismissed = await client.post(`${base}/${canada}/dismiss`);
  t.same([dismissed.status, dismissed.body], [409, again.body]);
  t.equal((await services.sources.listForChatbot(bot.id)).length, 1, 'one source');
});

t.test(
  'dismissing resolves without a source; dismissing again changes nothing; it can still be answered',
  async (t) => {
    const res = await client.post(`${base}/${hours}/dismiss`);
    t.equal(res.status, 200);
    t.match(res.body, { id: hours, status: 'resolved', resolution: 'dismissed', resolved_at: TIMESTAMP });
    t.notOk('source_id' in res.body);
    const again = await client.post(`${base}/${hours}/dismiss`);
    t.same([again.status, again.body], [200, res.body]);
    t.same((await client.get(base)).body, []);
    const answered = await client.post(`${base}/${hours}/answer`, {
      answer: 'We are closed on public holidays.',
      title: 'Public holidays',
    });
    t.equal(answered.status, 201);
    t.match(answered.body, {
      source: { title: 'Public holidays', type: 'text' },
      group: { id: hours, resolution: 'answered' },
    });
  },
);

t.test('a question asked again after its group was resolved starts a new open group', async (t) => {
  const id = await ask('Do you ship to Canada?', 10, 'embed-after');
  t.not(id, canada);
  t.match((await client.get(base)).body, [{ id, question: 'Do you ship to Canada?', count: 1 }]);
});

t.test('improving an AI reply of a transcript answers the question before it', async (t) => {
  openai.behaviour = () => ({ text: 'I do not know.' });
  const chatbot = await services.chatbots.get(bot.id);
  const previewed = await client.post(`/dashboard/api/chatbots/${bot.id}/preview-session`, {});
  const sessionId: string = previewed.body.session_id;
  // A turn as the widget's would run: the question, then the reply (the fallback message here).
  const outcome = await gw.app.router.send({
    chatbot,
    sessionId,
    content: 'Can I pay in instalments?',
    channel: 'embed',
  });
  t.equal(outcome.kind, 'reply');
  await services.unansweredRecorder.settled();
  const [group] = (await client.get(base)).body.filter((g: { question: string }) => /instalments/.test(g.question));
  t.ok(group, 'the question is in the inbox');
  const transcript = (await client.get(`/dashboard/api/chatbots/${bot.id}/conversations/${sessionId}`)).body;
  const reply = transcript.messages.find((message: { role: string }) => message.role === 'assistant');
  const path = `/dashboard/api/chatbots/${bot.id}/conversations/${sessionId}/answer`;

  const refusals: Array<[unknown, number, string]> = [
    [{ answer: 'Yes.' }, 400, 'created_at is required.'],
    [{ created_at: 'yesterday', answer: 'Yes.' }, 400, 'created_at must be the timestamp of a reply.'],
    [{ created_at: '2020-01-01T00:00:00.000000+00:00', answer: 'Yes.' }, 404, 'Message not found.'],
    [{ created_at: transcript.messages[0].created_at, answer: 'Yes.' }, 404, 'Message not found.'],
    [{ created_at: reply.created_at }, 400, 'answer is required.'],
  ];
  for (const [body, status, detail] of refusals) {
    const res = await client.post(path, body);
    t.same([res.status, res.body], [status, { detail }], JSON.stringify(body));
  }
  const unknown = await client.post(`/dashboard/api/chatbots/${bot.id}/conversations/embed-nobody/answer`, {});
  t.same([unknown.status, unknown.body], [404, { detail: 'Conversation not found.' }]);
  const foreignConversation = await stranger.post(path, { created_at: reply.created_at, answer: 'Yes.' });
  t.same([foreignConversation.status, foreignConversation.body], [404, { detail: 'Chatbot not found.' }]);

  const res = await client.post(path, { created_at: reply.created_at, answer: 'Yes, in three instalments.' });
  t.equal(res.status, 201);
  t.match(res.body, {
    source: { title: 'Can I pay in instalments?', type: 'text', status: 'pending' },
    group: { id: group.id, status: 'resolved', resolution: 'answered' },
  });
  t.equal(res.body.group.source_id, res.body.source.id);
  t.equal(
    (await services.sources.content(await services.sources.get(res.body.source.id)))?.toString('utf8'),
    'Question: Can I pay in instalments?\n\nAnswer: Yes, in three instalments.',
  );
  // Improved again from the transcript: another source, no group left to resolve.
  const twice = await client.post(path, { created_at: reply.created_at, answer: 'Yes, in three or six.' });
  t.equal(twice.status, 201);
  t.equal(twice.body.group, null);
});

t.test('two answers to one group at once: one source and 201, the other 409 with its source taken back', async (t) => {
  const id = await ask('Do you sell spare batteries?', 20, 'embed-batteries');
  const before = (await services.sources.listForChatbot(bot.id)).length;
  const answers = await Promise.all(
    ['Yes, 499 euros.', 'Yes, from 449 euros.'].map((answer) => client.post(`${base}/${id}/answer`, { answer })),
  );
  t.same(answers.map((res) => res.status).sort(), [201, 409]);
  const won = answers.find((res) => res.status === 201)!.body;
  const sources = await services.sources.listForChatbot(bot.id);
  t.equal(sources.length, before + 1, 'one source more');
  t.equal(sources.filter((source) => source.title === 'Do you sell spare batteries?').length, 1);
  t.equal((await services.unanswered.get(bot.id, id)).source_id, won.source.id);
});
