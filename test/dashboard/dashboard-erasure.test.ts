import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { WidgetClient } from '../support/widget-client.ts';

// Retention on the chatbot's settings, and a visitor's erasure request from the transcript page: the
// conversation and the lead go, and the widget that comes back with the session starts afresh.
const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'We do.' });
const gw = await startGateway({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1` });
t.teardown(async () => {
  await gw.stop();
  await openai.stop();
});
const { services } = gw.app;
const owner = await createOwner(gw.app);
const client = await DashboardClient.signIn(gw.baseUrl, owner);
const bot = (await client.post('/dashboard/api/chatbots', { name: 'Bakery' })).body;
const base = `/dashboard/api/chatbots/${bot.id}`;

t.test('retention is a setting: days or null, checked, and the chatbot is scheduled for sweeps', async (t) => {
  const initial = await client.get(`${base}/settings`);
  t.same(initial.body.retention, { conversations_days: null, leads_days: null });
  t.equal(await services.retention.dueAt(bot.id), undefined);
  const set = await client.patch(`${base}/settings`, { retention: { conversations_days: 90 } });
  t.same([set.status, set.body.retention], [200, { conversations_days: 90, leads_days: null }]);
  t.ok(await services.retention.dueAt(bot.id), 'scheduled');
  const bad = await client.patch(`${base}/settings`, { retention: { leads_days: 0 } });
  t.same(
    [bad.status, bad.body],
    [400, { detail: 'retention.leads_days: must be a whole number of days from 1 to 3650, or null (keep for ever)' }],
  );
  const off = await client.patch(`${base}/settings`, { retention: { conversations_days: null } });
  t.same(off.body.retention, { conversations_days: null, leads_days: null });
});

t.test('deleting a conversation: its transcript and lead are gone, the widget starts afresh', async (t) => {
  const { client: widget, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  const sessionId = ready.session_id as string;
  widget.send({ type: 'lead', name: 'Ada', email: 'ada@example.com', phone: '', custom_data: {} });
  await widget.next('lead_saved');
  widget.send({ type: 'message', content: 'Do you make birthday cakes?' });
  await widget.next('message');
  await widget.close();
  const path = `${base}/conversations/${sessionId}`;
  t.equal((await client.get(path)).body.lead.name, 'Ada');

  const stranger = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  const refused = await stranger.del(path);
  t.same([refused.status, refused.body], [404, { detail: 'Chatbot not found.' }], "another owner's chatbot");

  const deleted = await client.del(path);
  t.same(
    [deleted.status, deleted.body],
    [200, { chatbot_id: bot.id, session_id: sessionId, deleted: { conversation: true, messages: 2, lead: true } }],
  );
  const gone = await client.get(path);
  t.same([gone.status, gone.body], [404, { detail: 'Conversation not found.' }]);
  t.same((await client.get(`${base}/leads`)).body, []);
  t.same((await client.get(`${base}/conversations`)).body, []);
  const again = await client.del(path);
  t.same([again.status, again.body], [404, { detail: 'Conversation not found.' }]);

  // The visitor's widget still holds the session: it is handed a new one, with no history.
  const back = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id, session_id: sessionId });
  t.not(back.ready.session_id, sessionId);
  t.same(back.ready.history, []);
  await back.client.close();
});
