import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { standardWebhooksSecret } from '../../src/webhooks/standard-webhooks.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { startGateway } from '../support/gateway.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { apiFetch } from '../support/openapi-contract.ts';

const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'Sure.' });
const receiver = await new WebhookReceiver().start();
const gw = await startGateway({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  WEBHOOK_ALLOW_PRIVATE: '1',
  WEBHOOK_RETRY_DELAYS: '1,1,1',
});
t.teardown(async () => {
  await gw.stop();
  await receiver.stop();
  await openai.stop();
});
const { services } = gw.app;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i += 1) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('timed out');
}

t.test('API keys: create (shown once), list, the cap and the plan rule, revoke', async (t) => {
  const owner = await createOwner(gw.app);
  const client = await DashboardClient.signIn(gw.baseUrl, owner);
  const created = await client.post('/dashboard/api/keys', { name: 'production' });
  t.equal(created.status, 201);
  t.same(Object.keys(created.body), ['id', 'name', 'prefix', 'key', 'created_at']);
  const listed = await client.get('/dashboard/api/keys');
  t.same(listed.body, [
    {
      id: created.body.id,
      name: 'production',
      prefix: created.body.prefix,
      last_used_at: null,
      created_at: created.body.created_at,
      active: true,
    },
  ]);
  for (let i = 2; i <= 5; i += 1) t.equal((await client.post('/dashboard/api/keys', { name: `k${i}` })).status, 201);
  const sixth = await client.post('/dashboard/api/keys', { name: 'k6' });
  t.same([sixth.status, sixth.body], [400, { detail: 'Maximum 5 active API keys allowed.' }]);
  const revoked = await client.post(`/dashboard/api/keys/${created.body.id}/revoke`);
  t.same([revoked.status, revoked.body], [200, { ...listed.body[0], active: false }]);
  const api = await apiFetch(`${gw.baseUrl}/api/v1/chatbots`, {
    headers: { authorization: `Bearer ${created.body.key}` },
  });
  t.equal(api.status, 401, 'a revoked key stops working at once');
  const unknown = await client.post(`/dashboard/api/keys/${crypto.randomUUID()}/revoke`);
  t.same([unknown.status, unknown.body], [404, { detail: 'API key not found.' }]);
  const noName = await client.post('/dashboard/api/keys', {});
  t.same([noName.status, noName.body], [400, { detail: 'name is required.' }]);

  const free = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app, 'free'));
  const refused = await free.post('/dashboard/api/keys', { name: 'x' });
  t.same([refused.status, refused.body], [400, { detail: 'API access requires the Scale plan.' }]);
});

t.test('agents: create (token shown once), list, revoke', async (t) => {
  const owner = await createOwner(gw.app);
  const client = await DashboardClient.signIn(gw.baseUrl, owner);
  const alice = await client.post('/dashboard/api/agents', { name: 'Alice' });
  t.equal(alice.status, 201);
  t.same(Object.keys(alice.body), ['id', 'name', 'token']);
  t.match(alice.body.token, /^ag_/);
  const twin = await client.post('/dashboard/api/agents', { name: 'Alice' });
  t.same([twin.status, twin.body], [409, { detail: 'An agent named Alice already exists.' }]);
  const listed = (await client.get('/dashboard/api/agents')).body;
  t.same(listed, [{ id: alice.body.id, name: 'Alice', initial: 'A', created_at: listed[0].created_at, active: true }]);
  const revoked = await client.post(`/dashboard/api/agents/${alice.body.id}/revoke`);
  t.same(revoked.body, { ...listed[0], active: false });
  // An avatar initial of the owner's choosing, one or two letters or digits of any script.
  const maria = await client.post('/dashboard/api/agents', { name: 'María José', initial: 'MJ' });
  t.equal(maria.status, 201);
  t.same(
    (await client.get('/dashboard/api/agents')).body.map((agent: any) => [agent.name, agent.initial]),
    [
      ['María José', 'MJ'],
      ['Alice', 'A'],
    ],
  );
  for (const initial of ['ABC', '!', ' ', 'M.']) {
    const bad = await client.post('/dashboard/api/agents', { name: `Agent ${initial}`, initial });
    t.same([bad.status, bad.body], [400, { detail: 'initial must be one or two letters or digits.' }], initial);
  }
  t.same(await services.agents.persona(owner.id, 'María José'), { name: 'María José', initial: 'MJ' });
  t.same(await services.agents.persona(owner.id, 'ölaf'), { name: 'ölaf', initial: 'Ö' }, 'a name of no agent');
  t.equal(await services.agents.authenticate(alice.body.token), undefined);
});

t.test('webhooks: create, read with secret, rotate, test event in the log, redeliver, delete', async (t) => {
  const owner = await createOwner(gw.app);
  const client = await DashboardClient.signIn(gw.baseUrl, owner);
  const bot = (await client.post('/dashboard/api/chatbots', { name: 'Hooks' })).body;
  const created = await client.post(`/dashboard/api/chatbots/${bot.id}/webhooks`, {
    url: receiver.url,
    events: ['message.received'],
  });
  t.equal(created.status, 201);
  t.same(Object.keys(created.body), ['id', 'url', 'events', 'secret', 'standard_webhooks', 'standard_webhooks_secret']);
  t.same([created.body.standard_webhooks, created.body.standard_webhooks_secret], [false, null], 'off by default');
  const hook = created.body;
  const read = await client.get(`/dashboard/api/webhooks/${hook.id}`);
  t.same(read.body, { ...hook, chatbot_id: bot.id, active: true, created_at: read.body.created_at });
  t.same((await client.get(`/dashboard/api/chatbots/${bot.id}/webhooks`)).body, [read.body]);
  const rotated = await client.post(`/dashboard/api/webhooks/${hook.id}/rotate-secret`);
  t.not(rotated.body.secret, hook.secret);
  receiver.secrets = [rotated.body.secret];

  let answer = 500;
  receiver.answer = () => ({ status: answer, body: `answer ${answer}` });
  const test = await client.post(`/dashboard/api/webhooks/${hook.id}/test`, { event: 'lead.captured' });
  t.equal(test.status, 201);
  t.match(test.body, { event: 'lead.captured', status: 'pending', attempts: [] });
  const failed = await until(
    () => client.get(`/dashboard/api/webhooks/${hook.id}/deliveries`),
    (res) => res.body[0]?.status === 'failed',
  );
  t.same(failed.body.length, 1);
  t.same(
    failed.body[0].attempts.map((a: { status_code: number }) => a.status_code),
    [500, 500, 500, 500],
  );
  t.match(failed.body[0].attempts[0], { attempt: 1, error: null, response_body: 'answer 500' });
  t.match(failed.body[0].attempts[0].at, TIMESTAMP);
  const sent = receiver.received.at(-1)!;
  t.equal(sent.signatureValid, true);
  t.same(Object.keys(sent.body.data), ['lead_id', 'name', 'email', 'phone', 'custom_data', 'test']);
  t.match(sent.body, { event: 'lead.captured', chatbot_id: bot.id, data: { email: 'lead@example.com', test: true } });

  answer = 200;
  const redelivered = await client.post(`/dashboard/api/deliveries/${test.body.id}/redeliver`);
  t.equal(redelivered.status, 200);
  const delivered = await until(
    () => client.get(`/dashboard/api/webhooks/${hook.id}/deliveries`),
    (res) => res.body[0]?.status === 'delivered',
  );
  t.same(
    delivered.body[0].attempts.map((a: { status_code: number }) => a.status_code),
    [500, 500, 500, 500, 200],
  );
  const badEvent = await client.post(`/dashboard/api/webhooks/${hook.id}/test`, { event: 'lead.lost' });
  t.same(
    [badEvent.status, badEvent.body],
    [
      400,
      {
        detail:
          'event must be one of: lead.captured, conversation.started, message.received, conversation.escalated, conversation.taken_over, conversation.released.',
      },
    ],
  );
  const badUrl = await client.post(`/dashboard/api/chatbots/${bot.id}/webhooks`, {
    url: 'nope',
    events: ['lead.captured'],
  });
  t.same([badUrl.status, badUrl.body], [400, { detail: 'url must be an absolute http or https URL.' }]);
  const badEvents = await client.post(`/dashboard/api/chatbots/${bot.id}/webhooks`, {
    url: receiver.url,
    events: 'all',
  });
  t.same([badEvents.status, badEvents.body], [400, { detail: 'events must be an array of strings.' }]);

  const removed = await client.del(`/dashboard/api/webhooks/${hook.id}`);
  t.same([removed.status, removed.body], [200, { id: hook.id, deleted: true }]);
  t.same((await client.get(`/dashboard/api/webhooks/${hook.id}`)).body, { detail: 'Webhook not found.' });
});

t.test('webhooks: Standard Webhooks headers, opted in at creation or turned on and off later', async (t) => {
  const owner = await createOwner(gw.app);
  const client = await DashboardClient.signIn(gw.baseUrl, owner);
  const bot = (await client.post('/dashboard/api/chatbots', { name: 'Standard hooks' })).body;
  receiver.answer = () => ({ status: 200, body: 'ok' });
  const created = await client.post(`/dashboard/api/chatbots/${bot.id}/webhooks`, {
    url: receiver.url,
    events: ['lead.captured'],
    standard_webhooks: true,
  });
  t.equal(created.status, 201);
  t.equal(created.body.standard_webhooks, true);
  t.equal(created.body.standard_webhooks_secret, standardWebhooksSecret(created.body.secret));
  t.match(created.body.standard_webhooks_secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  receiver.secrets = [created.body.secret];
  const path = `/dashboard/api/webhooks/${created.body.id}`;
  const testEvent = async () => {
    const before = receiver.received.length;
    t.equal((await client.post(`${path}/test`, { event: 'lead.captured' })).status, 201);
    await until(
      async () => receiver.received.length,
      (n) => n > before,
    );
    return receiver.received.at(-1)!;
  };
  const on = await testEvent();
  t.equal(on.signatureValid, true, 'SPEC’s signature as ever');
  t.equal(on.standardSignatureValid, true, 'the official library verifies the Standard Webhooks headers');
  t.equal(on.headers['webhook-id'], on.headers['x-switchboard-delivery']);

  const off = await client.patch(path, { standard_webhooks: false });
  t.same([off.status, off.body.standard_webhooks, off.body.standard_webhooks_secret], [200, false, null]);
  t.same((await client.get(path)).body, off.body);
  const plain = await testEvent();
  t.equal(plain.signatureValid, true);
  t.equal(plain.standardSignatureValid, null, 'no webhook-* headers once it is off');

  const unchanged = await client.patch(path, {});
  t.same([unchanged.status, unchanged.body], [200, off.body], 'a PATCH that names nothing changes nothing');
  const backOn = await client.patch(path, { standard_webhooks: true });
  t.same(
    [backOn.body.standard_webhooks, backOn.body.standard_webhooks_secret],
    [true, created.body.standard_webhooks_secret],
  );
  t.equal((await testEvent()).standardSignatureValid, true);
  const rotated = await client.post(`${path}/rotate-secret`);
  t.equal(
    rotated.body.standard_webhooks_secret,
    standardWebhooksSecret(rotated.body.secret),
    'rotating changes both forms',
  );
  receiver.secrets = [rotated.body.secret];
  t.equal((await testEvent()).standardSignatureValid, true);

  const bad = await client.patch(path, { standard_webhooks: 'yes' });
  t.same([bad.status, bad.body], [400, { detail: 'standard_webhooks must be true or false.' }]);
  const badCreate = await client.post(`/dashboard/api/chatbots/${bot.id}/webhooks`, {
    url: receiver.url,
    events: ['lead.captured'],
    standard_webhooks: 1,
  });
  t.same([badCreate.status, badCreate.body], [400, { detail: 'standard_webhooks must be true or false.' }]);
  const other = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  const foreign = await other.patch(path, { standard_webhooks: false });
  t.same([foreign.status, foreign.body], [404, { detail: 'Webhook not found.' }]);
});

t.test('the webhook SSRF check is the store’s: private destinations are refused without the setting', async (t) => {
  const strict = await startGateway();
  t.teardown(() => strict.stop());
  const owner = await createOwner(strict.app);
  const client = await DashboardClient.signIn(strict.baseUrl, owner);
  const bot = (await client.post('/dashboard/api/chatbots', { name: 'Strict' })).body;
  const res = await client.post(`/dashboard/api/chatbots/${bot.id}/webhooks`, {
    url: 'http://127.0.0.1:9/hook',
    events: ['lead.captured'],
  });
  t.same([res.status, res.body], [400, { detail: 'url must point to a public address on the internet.' }]);
});

t.test('conversations, transcripts, release; usage counts per day; leads as CSV', async (t) => {
  const owner = await createOwner(gw.app);
  const client = await DashboardClient.signIn(gw.baseUrl, owner);
  const bot = (await client.post('/dashboard/api/chatbots', { name: 'Talk' })).body;
  const key = (await client.post('/dashboard/api/keys', { name: 'k' })).body.key;
  for (const message of ['Hello', 'Are you there?']) {
    const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ message, session_id: 'api-demo' }),
    });
    t.equal(res.status, 200);
  }
  const list = (await client.get(`/dashboard/api/chatbots/${bot.id}/conversations`)).body;
  t.same(
    list.map((c: any) => [c.session_id, c.source, c.escalated_at, c.taken_over_by, c.last_message.content]),
    [['api-demo', 'api', null, null, 'Sure.']],
  );
  const base = `/dashboard/api/chatbots/${bot.id}/conversations/api-demo`;
  const held = await client.post(`${base}/takeover`, {});
  t.equal(held.body.taken_over_by, 'operator');
  const escalated = await client.post(`${base}/escalate`);
  t.match(escalated.body.escalated_at, TIMESTAMP);
  const released = await client.post(`${base}/release`);
  t.equal(released.body.taken_over_by, null);
  const transcript = (await client.get(base)).body;
  t.same(
    transcript.messages.map((m: any) => [m.role, m.content]),
    [
      ['user', 'Hello'],
      ['assistant', 'Sure.'],
      ['user', 'Are you there?'],
      ['assistant', 'Sure.'],
    ],
  );
  t.same((await client.get(`/dashboard/api/chatbots/${bot.id}/conversations/nope`)).body, {
    detail: 'Conversation not found.',
  });

  const usage = (await client.get('/dashboard/api/usage')).body;
  const today = new Date().toISOString().slice(0, 10);
  t.match(usage, { plan: 'scale', month: today.slice(0, 7), used: 2, limit: 40000 });
  t.equal(usage.days.length, 30);
  t.same(usage.days.at(-1), { date: today, messages: 2 });
  t.equal(
    usage.days.reduce((sum: number, d: { messages: number }) => sum + d.messages, 0),
    2,
  );

  await client.patch(`/dashboard/api/chatbots/${bot.id}/settings`, {
    lead_fields: [{ name: 'company', label: 'Company' }],
  });
  const chatbot = await services.chatbots.get(bot.id);
  await services.leadCapture.capture(chatbot, 'embed-x', {
    name: 'Ann',
    email: 'ann@example.com',
    phone: '',
    custom_data: { company: '=HYPERLINK("x")' },
  });
  await services.leadCapture.capture(chatbot, 'embed-y', {
    name: 'Bob, Jr.',
    email: 'bob@example.com',
    phone: '+1 555 0100',
    custom_data: {},
  });
  const leads = (await client.get(`/dashboard/api/chatbots/${bot.id}/leads`)).body;
  t.same(
    leads.map((l: any) => l.name),
    ['Bob, Jr.', 'Ann'],
  );
  const csv = await fetch(`${gw.baseUrl}/dashboard/api/chatbots/${bot.id}/leads.csv`, {
    headers: { cookie: client.cookie },
  });
  t.equal(csv.status, 200);
  t.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.equal(csv.headers.get('content-disposition'), 'attachment; filename="leads-talk.csv"');
  t.equal(
    await csv.text(),
    'lead_id,created_at,name,email,phone,company,session_id\n' +
      `${leads[0].lead_id},${leads[0].created_at},"Bob, Jr.",bob@example.com,'+1 555 0100,,embed-y\n` +
      `${leads[1].lead_id},${leads[1].created_at},Ann,ann@example.com,,"'=HYPERLINK(""x"")",embed-x\n`,
  );
});
