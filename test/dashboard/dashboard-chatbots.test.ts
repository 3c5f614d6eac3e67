import t from 'tap';
import { FakeTelegram } from '../fakes/fake-telegram.ts';
import { startGateway } from '../support/gateway.ts';
import { fakeEgress } from '../fakes/fake-egress.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';

const telegram = await new FakeTelegram().start();
// docs.example.com is answered by a fake resolver: a url source's host must resolve to a public address.
const gw = await startGateway(
  { TELEGRAM_API_ROOT: telegram.url },
  { egress: fakeEgress({ 'docs.example.com': ['93.184.215.14'] }) },
);
t.teardown(async () => {
  await gw.stop();
  await telegram.stop();
});
const { services } = gw.app;
const owner = await createOwner(gw.app);
const client = await DashboardClient.signIn(gw.baseUrl, owner);
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;

t.test('chatbots: create, list, read, edit, pause, delete', async (t) => {
  const created = await client.post('/dashboard/api/chatbots', { name: 'Café Bot', provider: 'gemini' });
  t.equal(created.status, 201);
  const bot = created.body;
  t.same(Object.keys(bot), [
    'id',
    'name',
    'slug',
    'provider',
    'is_active',
    'created_at',
    'system_prompt',
    'fallback_message',
    'model',
  ]);
  t.match(bot, { name: 'Café Bot', slug: 'cafe-bot', provider: 'gemini', is_active: true, model: 'gemini-2.5-flash' });
  t.match(bot.created_at, TIMESTAMP);
  t.same((await client.get('/dashboard/api/chatbots')).body, [bot]);
  t.same((await client.get(`/dashboard/api/chatbots/${bot.id.toUpperCase()}`)).body, bot);

  const edited = await client.patch(`/dashboard/api/chatbots/${bot.id}`, {
    system_prompt: 'Answer in French.',
    fallback_message: 'Désolé.',
    provider: 'ollama',
  });
  t.same(
    [edited.status, edited.body],
    [
      200,
      {
        ...bot,
        system_prompt: 'Answer in French.',
        fallback_message: 'Désolé.',
        provider: 'ollama',
        model: 'llama3.2',
      },
    ],
  );
  const model = await client.patch(`/dashboard/api/chatbots/${bot.id}`, { model: 'mistral', name: 'Café' });
  t.match(model.body, { model: 'mistral', name: 'Café', slug: 'cafe-bot' });
  const paused = await client.patch(`/dashboard/api/chatbots/${bot.id}`, { is_active: false });
  t.equal(paused.body.is_active, false);
  t.equal((await services.chatbots.get(bot.id)).is_active, false, 'the same flag the public API shows');

  const deleted = await client.del(`/dashboard/api/chatbots/${bot.id}`);
  t.same([deleted.status, deleted.body], [200, { id: bot.id, deleted: true }]);
  t.same((await client.get('/dashboard/api/chatbots')).body, []);
  t.same((await client.get(`/dashboard/api/chatbots/${bot.id}`)).body, { detail: 'Chatbot not found.' });
});

t.test('chatbot validation: the store’s rules, the field named', async (t) => {
  const bad: Array<[string, unknown, string]> = [
    ['POST', {}, 'name is required.'],
    ['POST', { name: '  ' }, 'name must be 1 to 100 characters.'],
    ['POST', { name: 'X', provider: 'claude' }, 'provider must be one of: gemini, chatgpt, ollama.'],
    ['POST', { name: 'X', fallback_message: '' }, 'fallback_message must be 1 to 2000 characters.'],
    ['POST', { name: 'X', system_prompt: 'p'.repeat(20_001) }, 'system_prompt must be at most 20000 characters.'],
    ['POST', { name: 7 }, 'name must be a string.'],
    ['PATCH', { is_active: 'no' }, 'is_active must be true or false.'],
    ['PATCH', { model: 'm'.repeat(101) }, 'model must be at most 100 characters.'],
  ];
  const bot = (await client.post('/dashboard/api/chatbots', { name: 'Valid' })).body;
  for (const [method, body, detail] of bad) {
    const path = method === 'POST' ? '/dashboard/api/chatbots' : `/dashboard/api/chatbots/${bot.id}`;
    const res = await client.request(method, path, body);
    t.same([res.status, res.body], [400, { detail }], detail);
  }
  const notJson = await client.request('POST', '/dashboard/api/chatbots', undefined, {
    'content-type': 'application/json',
  });
  t.same([notJson.status, notJson.body], [400, { detail: 'Request body is not valid JSON.' }]);
  t.same(
    (await services.chatbots.listForUser(owner.id)).map((b) => b.name),
    ['Valid'],
    'nothing half-made',
  );
});

t.test('settings: read and change the widget, lead form, CTAs and escalation rules', async (t) => {
  const bot = (await client.post('/dashboard/api/chatbots', { name: 'Settings' })).body;
  const initial = await client.get(`/dashboard/api/chatbots/${bot.id}/settings`);
  t.same(initial.body, {
    chatbot_id: bot.id,
    allowed_origins: [],
    lead_fields: [],
    ctas: [],
    escalation: { smart_intent: true, keywords: [], fallback_streak: 0 },
    widget: { title: '', color: '#2563eb', welcome_message: 'Hi! How can I help you today?' },
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
  });
  const patch = {
    allowed_origins: ['https://shop.example'],
    lead_fields: [{ name: 'company', label: 'Company', required: true }],
    ctas: [{ id: 'sales', label: 'Talk to sales', action: 'escalate' }],
    escalation: { keywords: ['refund'] },
    widget: { color: '#0f766e', welcome_message: 'Hello!' },
    retrieval: { query_rewrite: true },
    answers: { api_citations: true },
  };
  const changed = await client.patch(`/dashboard/api/chatbots/${bot.id}/settings`, patch);
  t.same(
    [changed.status, changed.body],
    [
      200,
      {
        chatbot_id: bot.id,
        ...patch,
        escalation: { smart_intent: true, keywords: ['refund'], fallback_streak: 0 },
        widget: { title: '', color: '#0f766e', welcome_message: 'Hello!' },
        answers: { citations: true, api_citations: true, sources_only: false },
        hours: {
          enabled: false,
          time_zone: 'UTC',
          weekly: { mon: [], tue: [], wed: [], thu: [], fri: [], sat: [], sun: [] },
          holidays: [],
          contact_after_minutes: 0,
        },
        retention: { conversations_days: null, leads_days: null },
      },
    ],
  );
  const bad = await client.patch(`/dashboard/api/chatbots/${bot.id}/settings`, { widget: { color: 'teal' } });
  t.same([bad.status, bad.body], [400, { detail: 'widget.color: must be a hex colour like #2563eb' }]);
  const notBoolean = await client.patch(`/dashboard/api/chatbots/${bot.id}/settings`, {
    retrieval: { query_rewrite: 'on' },
  });
  t.same([notBoolean.status, notBoolean.body], [400, { detail: 'retrieval.query_rewrite: must be true or false' }]);
  const off = await client.patch(`/dashboard/api/chatbots/${bot.id}/settings`, { retrieval: { query_rewrite: false } });
  t.same([off.status, off.body.retrieval], [200, { query_rewrite: false }]);
});

t.test('sources: add text and url, upload a file, list with status, delete', async (t) => {
  const bot = (await client.post('/dashboard/api/chatbots', { name: 'Sources' })).body;
  const base = `/dashboard/api/chatbots/${bot.id}`;
  const text = await client.post(`${base}/sources`, { type: 'text', text: 'Opening hours: 9 to 5.', title: 'Hours' });
  t.equal(text.status, 201);
  t.same(Object.keys(text.body), [
    'id',
    'type',
    'title',
    'url',
    'status',
    'page_count',
    'created_at',
    'chatbot_id',
    'error',
    'characters',
    'words',
    'progress',
  ]);
  t.match(text.body, {
    type: 'text',
    title: 'Hours',
    url: '',
    page_count: 0,
    chatbot_id: bot.id,
    error: '',
    characters: 22,
    words: 5,
  });
  const cake = await client.post(`${base}/sources`, { type: 'text', text: '🎂 Cakes:\n\tcrème brûlée ' });
  t.same([cake.body.characters, cake.body.words], [23, 4], 'an emoji is one character; words are what spaces part');
  t.equal((await client.del(`/dashboard/api/sources/${cake.body.id}`)).status, 200);
  const url = await client.post(`${base}/sources`, { type: 'url', url: 'https://docs.example.com/start#top' });
  t.match(url.body, { type: 'url', url: 'https://docs.example.com/start', title: '' });
  const upload = await client.post(`${base}/files`, new TextEncoder().encode('# Prices\n\nTen euros.'), {
    'x-filename': encodeURIComponent('prix été.md'),
  });
  t.equal(upload.status, 201);
  t.match(upload.body, { type: 'file', title: 'prix été.md' });
  const listed = await client.get(`${base}/sources`);
  t.same(
    listed.body.map((s: { id: string }) => s.id),
    [upload.body.id, url.body.id, text.body.id],
  );

  const cases: Array<[string, unknown, Record<string, string>, number, string]> = [
    [
      'sources',
      { type: 'youtube', url: 'https://youtu.be/x' },
      {},
      400,
      'url must be a link to one YouTube video, like https://www.youtube.com/watch?v=dQw4w9WgXcQ.',
    ],
    [
      'sources',
      { type: 'zendesk', url: 'https://acme.zendesk.com/hc' },
      {},
      400,
      'type must be one of: text, url, youtube, google_drive, notion, dropbox (files are uploaded to /files).',
    ],
    [
      'sources',
      { type: 'dropbox', url: '/Handbook' },
      {},
      400,
      'Connect Dropbox first: this account has no Dropbox connection.',
    ],
    ['sources', { type: 'text', text: '   ' }, {}, 400, 'text must not be empty.'],
    [
      'sources',
      { type: 'url', url: 'ftp://x' },
      {},
      400,
      'url must be an absolute http or https URL without credentials.',
    ],
    [
      'files',
      new Uint8Array([1, 2, 3]),
      { 'x-filename': 'tool.exe' },
      400,
      'file must be a PDF, DOCX, PPTX, TXT, MD, CSV, VTT or SRT file.',
    ],
    ['files', new Uint8Array([1]), {}, 400, 'X-Filename header is required.'],
    ['files', new Uint8Array(0), { 'x-filename': 'empty.txt' }, 400, 'file is empty.'],
    ['files', new Uint8Array(20 * 1024 * 1024 + 1), { 'x-filename': 'big.pdf' }, 413, 'file must be at most 20 MB.'],
  ];
  for (const [route, body, headers, status, detail] of cases) {
    const res = await client.post(`${base}/${route}`, body, headers);
    t.same([res.status, res.body], [status, { detail }], detail);
  }

  // What the chatbot would find for a question, once the text is ingested.
  for (let i = 0; i < 200 && (await services.sources.get(text.body.id)).status !== 'done'; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const found = await client.get(`${base}/retrieve?query=${encodeURIComponent('opening hours')}&k=3`);
  t.equal(found.status, 200);
  t.equal(found.body.engine, 'in-process');
  t.match(found.body.results[0], {
    rank: 1,
    source_id: text.body.id,
    title: 'Hours',
    content: 'Opening hours: 9 to 5.',
  });
  t.same(Object.keys(found.body.results[0]), [
    'rank',
    'score',
    'text',
    'vector',
    'chunk_id',
    'source_id',
    'title',
    'url',
    'content',
  ]);
  const noQuery = await client.get(`${base}/retrieve?query=%20`);
  t.same([noQuery.status, noQuery.body], [400, { detail: 'query must be 1 to 4000 characters.' }]);

  const removed = await client.del(`/dashboard/api/sources/${url.body.id}`);
  t.same([removed.status, removed.body], [200, { id: url.body.id, deleted: true }]);
  t.equal((await client.get(`${base}/sources`)).body.length, 2);
  t.same((await client.del(`/dashboard/api/sources/${url.body.id}`)).body, { detail: 'Source not found.' });
});

t.test('channels: connect Telegram with a token and mode, show it, disconnect', async (t) => {
  const bot = (await client.post('/dashboard/api/chatbots', { name: 'Tele' })).body;
  const base = `/dashboard/api/chatbots/${bot.id}/channels`;
  t.same((await client.get(base)).body, { telegram: null, whatsapp: null, whatsapp_cloud: null });
  const token = telegram.addBot('acme_help_bot');
  const connected = await client.put(`${base}/telegram`, { token, mode: 'webhook' });
  t.equal(connected.status, 200);
  t.same(Object.keys(connected.body), ['mode', 'webhook_path', 'secret_token']);
  t.match(connected.body, { mode: 'webhook', webhook_path: `/channels/telegram/${bot.id}` });
  t.match(connected.body.secret_token, /^[A-Za-z0-9_-]{32}$/);
  t.same((await client.get(base)).body, {
    telegram: { ...connected.body, bot_username: 'acme_help_bot' },
    whatsapp: null,
    whatsapp_cloud: null,
  });
  const polling = await client.put(`${base}/telegram`, { token, mode: 'polling' });
  t.same(polling.body, { mode: 'polling', webhook_path: null, secret_token: null });

  const refused: Array<[unknown, string]> = [
    [{ token, mode: 'push' }, 'mode must be webhook or polling.'],
    [{ token: '123:short' }, 'token does not look like a Telegram bot token (123456:ABC…).'],
    [{ token: `42:${'x'.repeat(35)}` }, 'Telegram refused the token: Unauthorized'],
  ];
  for (const [body, detail] of refused) {
    const res = await client.put(`${base}/telegram`, body);
    t.same([res.status, res.body], [400, { detail }], detail);
  }
  const off = await client.del(`${base}/telegram`);
  t.same([off.status, off.body], [200, { chatbot_id: bot.id, disconnected: true }]);
  const again = await client.del(`${base}/telegram`);
  t.same([again.status, again.body], [404, { detail: 'Telegram is not connected for this chatbot.' }]);
  t.same((await client.get(base)).body, { telegram: null, whatsapp: null, whatsapp_cloud: null });
});
