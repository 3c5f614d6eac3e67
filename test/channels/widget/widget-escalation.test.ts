import t from 'tap';
import { fakeOpenAi } from '../../fakes/fake-llm-server.ts';
import { runCli } from '../../support/cli.ts';
import { scaleAccount, startGateway } from '../../support/gateway.ts';
import { RecordingSink } from '../../support/recording-sink.ts';
import { WidgetClient } from '../../support/widget-client.ts';

const openai = await fakeOpenAi().start();
const sink = new RecordingSink();
const gw = await startGateway(
  {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    LLM_MAX_RETRIES: '0',
    // The concurrency test sends 40 frames at once on each socket, past the default burst.
    SOCKET_FRAME_BURST: '100',
  },
  { events: sink },
);
t.teardown(async () => {
  await gw.stop();
  await openai.stop();
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const cliEnv = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
openai.behaviour = () => ({ text: 'AI answer' });

async function newBot(settings: object = {}) {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Escalation Bot' });
  await services.chatbots.configure(bot.id, settings);
  return bot;
}

const escalations = (sessionId: string) =>
  sink.forSession(sessionId).filter((e) => e.event === 'conversation.escalated');

t.test('the visitor button: escalated frame, conversation.escalated once with SPEC payload', async (t) => {
  const bot = await newBot();
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  client.send({ type: 'message', content: 'hello' });
  await client.next('message');
  client.send({ type: 'escalate' });
  t.same(await client.next('escalated'), { type: 'escalated' });
  client.send({ type: 'escalate' });
  t.same(await client.next('escalated'), { type: 'escalated' }, 'a repeat is acknowledged');
  const events = escalations(ready.session_id);
  t.equal(events.length, 1, 'exactly one event');
  const conversation = await services.conversations.get(bot.id, ready.session_id);
  t.match(events[0], {
    event: 'conversation.escalated',
    chatbot_id: bot.id,
    timestamp: TIMESTAMP,
    data: {
      conversation_id: conversation.conversation_id,
      session_id: ready.session_id,
      channel: 'web',
      escalated_at: conversation.escalated_at!,
      message_count: 2,
    },
  });
  t.same(Object.keys(events[0]!.data).sort(), [
    'channel',
    'conversation_id',
    'escalated_at',
    'message_count',
    'session_id',
  ]);
  client.send({ type: 'message', content: 'still there?' });
  t.equal((await client.next('message')).content, 'AI answer', 'the AI keeps answering until an agent takes over');
  await client.close();
});

t.test('escalating before the first message creates the conversation; its first message still starts it', async (t) => {
  const bot = await newBot();
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  client.send({ type: 'escalate' });
  await client.next('escalated');
  client.send({ type: 'message', content: 'first words' });
  await client.next('message');
  t.same(
    sink.forSession(ready.session_id).map((e) => e.event),
    ['conversation.escalated', 'conversation.started', 'message.received'],
  );
  const [escalated, started] = sink.forSession(ready.session_id);
  t.equal(escalated!.data.message_count, 0);
  t.equal(started!.data.conversation_id, escalated!.data.conversation_id, 'one conversation');
  t.equal(started!.data.source, 'embed');
  await client.close();
});

t.test('smart intent in five languages escalates, and the AI still answers', async (t) => {
  const bot = await newBot();
  const asks = [
    'Can I talk to a human, please?',
    'Quiero hablar con una persona',
    'Je voudrais parler à un conseiller',
    'Ich möchte mit einem Menschen sprechen',
    'Posso falar com um atendente?',
  ];
  for (const ask of asks) {
    const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
    client.send({ type: 'message', content: ask });
    t.same(await client.next('escalated'), { type: 'escalated' }, ask);
    t.equal((await client.next('message')).content, 'AI answer');
    client.send({ type: 'message', content: 'and a human again please, talk to a human' });
    await client.next('message');
    t.equal(escalations(ready.session_id).length, 1, `${ask}: once`);
    await client.close();
  }
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  client.send({ type: 'message', content: 'What are your opening hours?' });
  await client.next('message');
  t.same(escalations(ready.session_id), [], 'an ordinary question does not escalate');
  t.notOk(client.frames.some((f) => f.type === 'escalated'));
  await client.close();
});

t.test('smart intent can be switched off; owner keywords escalate', async (t) => {
  const bot = await newBot({ escalation: { smart_intent: false, keywords: ['refund', 'legal action'] } });
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  client.send({ type: 'message', content: 'talk to a human' });
  await client.next('message');
  t.same(escalations(ready.session_id), [], 'smart intent is off');
  client.send({ type: 'message', content: 'I will take LEGAL ACTION over my Refund!' });
  await client.next('escalated');
  t.equal(escalations(ready.session_id).length, 1);
  await client.close();
});

t.test('N consecutive fallback replies escalate; an answer in between resets the count', async (t) => {
  const bot = await newBot({ escalation: { fallback_streak: 2 } });
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  const replies = ['', 'a real answer', '', ''];
  openai.behaviour = () => ({ text: replies.shift() ?? 'AI answer' });
  t.teardown(() => {
    openai.behaviour = () => ({ text: 'AI answer' });
  });
  for (let i = 0; i < 3; i += 1) {
    client.send({ type: 'message', content: `question ${i}` });
    await client.next('message');
  }
  t.same(escalations(ready.session_id), [], 'fallback, answer, fallback: no streak of 2');
  client.send({ type: 'message', content: 'question 3' });
  const fallback = await client.next('message');
  t.equal(fallback.content, bot.fallback_message);
  t.same(await client.next('escalated'), { type: 'escalated' });
  t.equal(escalations(ready.session_id).length, 1);
  await client.close();
});

t.test('CTA buttons: escalate, message and link; unknown ids are refused', async (t) => {
  const bot = await newBot({
    ctas: [
      { id: 'human', label: 'Talk to sales', action: 'escalate' },
      { id: 'pricing', label: 'Pricing', action: 'message', message: 'What does it cost?' },
      { id: 'docs', label: 'Docs', action: 'link', url: 'https://docs.example/' },
    ],
  });
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  client.send({ type: 'cta', id: 'pricing' });
  t.equal((await client.next('message')).content, 'AI answer');
  t.same(
    sink.forSession(ready.session_id).map((e) => [e.event, e.data.content]),
    [
      ['conversation.started', undefined],
      ['message.received', 'What does it cost?'],
    ],
  );
  client.send({ type: 'cta', id: 'docs' });
  client.send({ type: 'cta', id: 'human' });
  t.same(await client.next('escalated'), { type: 'escalated' });
  t.same(await client.next('handoff'), {
    type: 'handoff',
    change: 'escalated',
    state: 'waiting',
    agent: null,
    agents_online: false,
    open: true,
    opens_at: null,
    time_zone: null,
    contact_in_ms: 0,
  });
  t.equal(escalations(ready.session_id).length, 1);
  client.send({ type: 'cta', id: 'missing' });
  t.same(await client.next('error'), { type: 'error', detail: 'Unknown call-to-action.' });
  t.same(
    client.frames.map((f) => f.type).filter((type) => type !== 'delta'),
    ['ready', 'typing', 'message', 'escalated', 'handoff', 'error'],
    'the link CTA sent nothing back',
  );
  await client.close();
});

t.test('exactly once under concurrency: 200 escalations over 5 sockets of one session', async (t) => {
  const bot = await newBot();
  const first = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  const sessionId = first.ready.session_id;
  const others = await Promise.all(
    Array.from({ length: 4 }, () => WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id, session_id: sessionId })),
  );
  const clients = [first.client, ...others.map((o) => o.client)];
  for (let i = 0; i < 40; i += 1) for (const client of clients) client.send({ type: 'escalate' });
  await Promise.all(
    clients.map(async (client) => {
      for (let i = 0; i < 40; i += 1) await client.next('escalated');
    }),
  );
  t.equal(escalations(sessionId).length, 1);
  await Promise.all(clients.map((c) => c.close()));
});

t.test('the escalated frame reaches every tab of the session, not other sessions', async (t) => {
  const bot = await newBot();
  const a = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  const b = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id, session_id: a.ready.session_id });
  const stranger = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  a.client.send({ type: 'escalate' });
  await a.client.next('escalated');
  t.same(await b.client.next('escalated'), { type: 'escalated' });
  t.same(await stranger.client.quietFor(200), []);
  await Promise.all([a.client.close(), b.client.close(), stranger.client.close()]);
});

t.test('leads: saved, lead.captured with SPEC payload, listed by the CLI', async (t) => {
  const bot = await newBot({
    lead_fields: [
      { name: 'company', label: 'Company', required: true },
      { name: 'team_size', label: 'Team size' },
    ],
  });
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  client.send({
    type: 'lead',
    name: ' Ada Lovelace ',
    email: 'ada@example.com',
    phone: '',
    custom_data: { company: 'Analytical Engines' },
  });
  const saved = await client.next('lead_saved');
  t.match(saved, { type: 'lead_saved', lead_id: UUID });
  t.same(Object.keys(saved).sort(), ['lead_id', 'type']);
  const event = sink.events.find((e) => e.event === 'lead.captured' && e.data.lead_id === saved.lead_id);
  t.same(event && { ...event, timestamp: 'x' }, {
    event: 'lead.captured',
    chatbot_id: bot.id,
    timestamp: 'x',
    data: {
      lead_id: saved.lead_id,
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      phone: '',
      custom_data: { company: 'Analytical Engines', team_size: '' },
    },
  });
  t.match(event?.timestamp, TIMESTAMP);
  const listed = await runCli(['lead', 'list', '--bot', bot.id], cliEnv);
  t.equal(listed.code, 0, listed.stderr);
  const leads = JSON.parse(listed.stdout);
  t.match(leads, [
    {
      lead_id: saved.lead_id,
      chatbot_id: bot.id,
      session_id: ready.session_id,
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      phone: '',
      custom_data: { company: 'Analytical Engines', team_size: '' },
      created_at: TIMESTAMP,
    },
  ]);
  await client.close();
});

// Issue 18: one socket stored 20,000 leads on one chatbot, each a `lead.captured` for the owner.
t.test('a conversation has one lead: later forms update it, with no second lead.captured', async (t) => {
  const bot = await newBot();
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  client.send({ type: 'lead', name: 'Ada', email: 'ada@example.com' });
  const first = await client.next('lead_saved');
  client.send({ type: 'lead', name: 'Ada Lovelace', email: 'ada@engines.example', phone: '+44 20 7946 0958' });
  t.same(await client.next('lead_saved'), first, 'the same lead');
  const [lead] = await services.leads.list(bot.id);
  t.same(
    { ...lead, created_at: 'x' },
    {
      lead_id: first.lead_id,
      chatbot_id: bot.id,
      session_id: ready.session_id,
      name: 'Ada Lovelace',
      email: 'ada@engines.example',
      phone: '+44 20 7946 0958',
      custom_data: {},
      created_at: 'x',
    },
  );
  // Forms of one session at once, through the service, as several gateways would take them.
  const chatbot = await services.chatbots.get(bot.id);
  const burst = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      services.leadCapture.capture(chatbot, 'embed-burst', { email: `burst-${i}@example.com` }),
    ),
  );
  t.equal(new Set(burst.map((saved) => saved.lead_id)).size, 1, 'one lead for the burst');
  t.equal((await services.leads.list(bot.id)).length, 2);
  const captured = async () => sink.events.filter((e) => e.event === 'lead.captured' && e.chatbot_id === bot.id);
  for (let i = 0; i < 100 && (await captured()).length < 2; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  t.same(
    (await captured()).map((e) => e.data.lead_id).sort(),
    [first.lead_id, burst[0]!.lead_id].sort(),
    'one lead.captured per lead',
  );
  await client.close();
});

t.test('bad lead input gets an error frame naming the field, and nothing is stored', async (t) => {
  const bot = await newBot({ lead_fields: [{ name: 'company', label: 'Company', required: true }] });
  const { client } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  const good = { name: 'Bo', email: 'bo@example.com', phone: '+44 20 7946 0958', custom_data: { company: 'X' } };
  const cases: Array<[object, string]> = [
    [{ email: 'not-an-email' }, 'email must be a valid email address.'],
    [{ email: '', phone: '' }, 'email or phone is required.'],
    [{ phone: 'call me maybe' }, 'phone must be a valid phone number.'],
    [{ name: 'n'.repeat(201) }, 'name must be at most 200 characters.'],
    [{ name: 42 }, 'name must be a string.'],
    [{ custom_data: { company: 'X', shoe_size: '44' } }, 'custom_data.shoe_size is not a field of this form.'],
    [{ custom_data: {} }, 'custom_data.company is required.'],
    [{ custom_data: 'X' }, 'custom_data must be an object.'],
    [{ custom_data: { company: 'c'.repeat(1001) } }, 'custom_data.company must be at most 1000 characters.'],
  ];
  for (const [change, detail] of cases) {
    client.send({ type: 'lead', ...good, ...change });
    t.same(await client.next('error'), { type: 'error', detail }, detail);
  }
  t.same(await services.leads.list(bot.id), []);
  t.notOk(sink.events.some((e) => e.event === 'lead.captured' && e.chatbot_id === bot.id));
  client.send({ type: 'lead', ...good });
  await client.next('lead_saved');
  t.equal((await services.leads.list(bot.id)).length, 1);
  await client.close();
});

t.test('CLI: bot configure sets and prints the settings; bad values get one-line errors', async (t) => {
  const bot = await newBot();
  const set = await runCli(
    [
      'bot',
      'configure',
      '--bot',
      bot.id,
      '--allowed-origins',
      'https://shop.example, http://localhost:3000',
      '--lead-fields',
      'company:Company*,team_size:Team size',
      '--cta',
      '[{"id":"sales","label":"Talk to sales","action":"escalate"}]',
      '--escalation-rules',
      '{"keywords":["refund"],"fallback_streak":3}',
      '--title',
      'Help',
      '--color',
      '#0f766e',
      '--welcome-message',
      'Hi! Ask me anything.',
    ],
    cliEnv,
  );
  t.equal(set.code, 0, set.stderr);
  const expected = {
    chatbot_id: bot.id,
    allowed_origins: ['https://shop.example', 'http://localhost:3000'],
    lead_fields: [
      { name: 'company', label: 'Company', required: true },
      { name: 'team_size', label: 'Team size', required: false },
    ],
    ctas: [{ id: 'sales', label: 'Talk to sales', action: 'escalate' }],
    escalation: { smart_intent: true, keywords: ['refund'], fallback_streak: 3 },
    widget: { title: 'Help', color: '#0f766e', welcome_message: 'Hi! Ask me anything.' },
    retrieval: { query_rewrite: false },
    answers: { citations: true, api_citations: false, sources_only: false },
    hours: {
      enabled: false,
      time_zone: 'UTC',
      weekly: { mon: [], tue: [], wed: [], thu: [], fri: [], sat: [], sun: [] },
      holidays: [],
      contact_after_minutes: 0,
    },
    retention: { conversations_days: null, leads_days: null },
  };
  t.same(JSON.parse(set.stdout), expected);
  const shown = await runCli(['bot', 'configure', '--bot', bot.id], cliEnv);
  t.same(JSON.parse(shown.stdout), expected, 'no option: prints the settings unchanged');
  const cleared = await runCli(['bot', 'configure', '--bot', bot.id, '--allowed-origins', ''], cliEnv);
  t.same(JSON.parse(cleared.stdout).allowed_origins, []);
  const on = await runCli(['bot', 'configure', '--bot', bot.id, '--query-rewrite', 'on'], cliEnv);
  t.same(JSON.parse(on.stdout), { ...expected, allowed_origins: [], retrieval: { query_rewrite: true } });
  t.same((await services.chatbots.get(bot.id)).settings.retrieval, { query_rewrite: true });
  const off = await runCli(['bot', 'configure', '--bot', bot.id, '--query-rewrite', 'off'], cliEnv);
  t.same(JSON.parse(off.stdout).retrieval, { query_rewrite: false });
  const cites = await runCli(
    ['bot', 'configure', '--bot', bot.id, '--citations', 'off', '--api-citations', 'on'],
    cliEnv,
  );
  t.same(JSON.parse(cites.stdout).answers, { citations: false, api_citations: true, sources_only: false });
  t.same((await services.chatbots.get(bot.id)).settings.answers, {
    citations: false,
    api_citations: true,
    sources_only: false,
  });
  const hours = await runCli(
    [
      'bot',
      'configure',
      '--bot',
      bot.id,
      '--office-hours',
      '{"enabled":true,"time_zone":"Europe/Lisbon","weekly":{"sat":[["10:00","14:00"]]},"contact_after_minutes":3}',
    ],
    cliEnv,
  );
  t.same(JSON.parse(hours.stdout).hours, {
    enabled: true,
    time_zone: 'Europe/Lisbon',
    weekly: { mon: [], tue: [], wed: [], thu: [], fri: [], sat: [['10:00', '14:00']], sun: [] },
    holidays: [],
    contact_after_minutes: 3,
  });
  const bad: Array<[string[], string]> = [
    [['--color', 'teal'], 'widget.color: must be a hex colour like #2563eb\n'],
    [['--cta', '[{'], /^--cta must be JSON: /],
    [['--query-rewrite', 'yes'], '--query-rewrite must be on or off\n'],
    [['--citations', 'yes'], '--citations must be on or off\n'],
    [['--office-hours', '{"time_zone":"Nowhere"}'], 'hours.time_zone: must be an IANA time zone like Europe/Berlin\n'],
    [['--api-citations', ''], '--api-citations must be on or off\n'],
    [
      ['--allowed-origins', 'shop.example'],
      'allowed_origins[0]: "shop.example" is not an origin like https://example.com\n',
    ],
  ] as any;
  for (const [args, stderr] of bad) {
    const run = await runCli(['bot', 'configure', '--bot', bot.id, ...args], cliEnv);
    t.equal(run.code, 1);
    t.match(run.stderr, stderr);
    t.equal(run.stdout, '');
  }
  const missing = await runCli(['bot', 'configure', '--bot', crypto.randomUUID(), '--title', 'x'], cliEnv);
  t.same([missing.code, missing.stderr], [1, 'Chatbot not found.\n']);
  const leads = await runCli(['lead', 'list', '--bot', crypto.randomUUID()], cliEnv);
  t.same([leads.code, leads.stderr], [1, 'Chatbot not found.\n']);
});

t.test("a new chatbot's widget greets with the default welcome message; cleared, it greets with none", async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Greeting Bot' });
  const config = async () => (await fetch(`${gw.baseUrl}/widget/v1/config?chatbot_id=${bot.id}`)).json();
  const expected = {
    chatbot_id: bot.id,
    name: 'Greeting Bot',
    title: 'Greeting Bot',
    color: '#2563eb',
    welcome_message: 'Hi! How can I help you today?',
    lead_fields: [],
    ctas: [],
    agents_online: false,
  };
  t.same(await config(), expected);
  t.same((await services.chatbots.configure(bot.id, { widget: { welcome_message: '' } })).widget, {
    title: '',
    color: '#2563eb',
    welcome_message: '',
  });
  t.same(await config(), { ...expected, welcome_message: '' });
});

t.test('concurrent configure calls lose nothing', async (t) => {
  const bot = await newBot();
  await Promise.all([
    services.chatbots.configure(bot.id, { widget: { title: 'T' } }),
    services.chatbots.configure(bot.id, { widget: { color: '#000000' } }),
    services.chatbots.configure(bot.id, { widget: { welcome_message: 'W' } }),
    services.chatbots.configure(bot.id, { escalation: { keywords: ['k'] } }),
    services.chatbots.configure(bot.id, { escalation: { fallback_streak: 4 } }),
  ]);
  const { settings } = await services.chatbots.get(bot.id);
  t.same(settings.widget, { title: 'T', color: '#000000', welcome_message: 'W' });
  t.same(settings.escalation, { smart_intent: true, keywords: ['k'], fallback_streak: 4 });
});

t.test('widget.js and the widget config endpoint', async (t) => {
  const res = await fetch(`${gw.baseUrl}/widget.js`);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/javascript; charset=utf-8');
  t.equal(res.headers.get('cache-control'), 'public, max-age=300');
  const etag = res.headers.get('etag');
  t.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
  const body = await res.text();
  t.ok(body.length > 1000 && body.length < 40_000, `a small bundle (${body.length} bytes)`);
  t.match(body, /attachShadow/);
  const again = await fetch(`${gw.baseUrl}/widget.js`, { headers: { 'if-none-match': etag! } });
  t.equal(again.status, 304);
  t.equal(await again.text(), '');

  const bot = await newBot({
    widget: { title: 'Support', color: '#0f766e', welcome_message: 'Hello!' },
    lead_fields: [{ name: 'company', label: 'Company' }],
  });
  const config = await fetch(`${gw.baseUrl}/widget/v1/config?chatbot_id=${bot.id}`);
  t.equal(config.status, 200);
  t.equal(config.headers.get('access-control-allow-origin'), '*');
  t.same(await config.json(), {
    chatbot_id: bot.id,
    name: 'Escalation Bot',
    title: 'Support',
    color: '#0f766e',
    welcome_message: 'Hello!',
    lead_fields: [{ name: 'company', label: 'Company', required: false }],
    ctas: [],
    agents_online: false,
  });
  await services.presence.enter(owner.user.id, 'agent-connection-1', 60_000);
  const online = async () =>
    ((await (await fetch(`${gw.baseUrl}/widget/v1/config?chatbot_id=${bot.id}`)).json()) as any).agents_online;
  t.equal(await online(), true);
  await services.presence.leave(owner.user.id, 'agent-connection-1');
  t.equal(await online(), false);
  for (const id of [crypto.randomUUID(), 'nope']) {
    const missing = await fetch(`${gw.baseUrl}/widget/v1/config?chatbot_id=${id}`);
    t.same([missing.status, await missing.json()], [404, { detail: 'Chatbot not found.' }]);
  }
});
