import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { WidgetClient } from '../support/widget-client.ts';

// Issue 20, point 6: the dashboard names conversations after the lead their visitor left, and marks
// the owner's own widget preview; the preview talks in a session the dashboard hands out.
const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'Sure.' });
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
const EMBED_SESSION = /^embed-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A widget visitor who writes once (after leaving a lead, when given one); their session id. */
async function visitor(lead?: { name: string; email: string }, sessionId?: string): Promise<string> {
  const query: Record<string, string> = { chatbot_id: bot.id, ...(sessionId ? { session_id: sessionId } : {}) };
  const { client: widget, ready } = await WidgetClient.ready(gw.baseUrl, query);
  if (lead) {
    widget.send({ type: 'lead', ...lead, phone: '', custom_data: {} });
    await widget.next('lead_saved');
  }
  widget.send({ type: 'message', content: 'Do you make birthday cakes?' });
  await widget.next('message');
  await widget.close();
  return ready.session_id as string;
}

t.test('the preview session: handed out once per chatbot, resumed by the widget, restarted on demand', async (t) => {
  const first = await client.post(`${base}/preview-session`, {});
  t.equal(first.status, 200);
  t.same(Object.keys(first.body), ['session_id']);
  t.match(first.body.session_id, EMBED_SESSION);
  t.same((await client.post(`${base}/preview-session`, { restart: false })).body, first.body, 'the same one again');

  // The widget channel knows it before anyone wrote in it: the widget is not handed another.
  const { client: widget, ready } = await WidgetClient.ready(gw.baseUrl, {
    chatbot_id: bot.id,
    session_id: first.body.session_id,
  });
  t.equal(ready.session_id, first.body.session_id);
  await widget.close();

  const restarted = await client.post(`${base}/preview-session`, { restart: true });
  t.equal(restarted.status, 200);
  t.match(restarted.body.session_id, EMBED_SESSION);
  t.not(restarted.body.session_id, first.body.session_id);
  t.same((await client.post(`${base}/preview-session`, {})).body, restarted.body, 'the new one from then on');

  const refused: Array<[unknown, number, string]> = [
    [{ restart: 'yes' }, 400, 'restart must be true or false.'],
    [undefined, 400, 'Request body is not valid JSON.'],
  ];
  for (const [body, status, detail] of refused) {
    const res = await client.post(`${base}/preview-session`, body);
    t.same([res.status, res.body], [status, { detail }], JSON.stringify(body));
  }
  const stranger = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  const foreign = await stranger.post(`${base}/preview-session`, {});
  t.same([foreign.status, foreign.body], [404, { detail: 'Chatbot not found.' }]);
});

t.test('conversations and transcripts carry the lead their visitor left, and whether they are previews', async (t) => {
  const named = await visitor({ name: 'Ann Lee', email: 'ann@example.com' });
  const emailOnly = await visitor({ name: '', email: 'bo@example.com' });
  const anonymous = await visitor();
  const preview = (await client.post(`${base}/preview-session`, {})).body.session_id as string;
  t.equal(await visitor(undefined, preview), preview, 'the preview session is used as given');
  const leads = new Map((await services.leads.list(bot.id)).map((lead) => [lead.session_id, lead]));
  const leadOf = (sessionId: string) => {
    const lead = leads.get(sessionId);
    return lead ? { lead_id: lead.lead_id, name: lead.name, email: lead.email } : null;
  };

  const list = await client.get(`${base}/conversations`);
  t.equal(list.status, 200);
  const recent = await services.conversations.recent(bot.id, 200);
  t.same(
    recent.map((row) => row.session_id),
    [preview, anonymous, emailOnly, named],
  );
  t.same(
    list.body,
    recent.map((row) => ({ ...row, lead: leadOf(row.session_id), preview: row.session_id === preview })),
  );
  t.same(list.body[3].lead, { lead_id: leads.get(named)!.lead_id, name: 'Ann Lee', email: 'ann@example.com' });
  t.same(list.body[2].lead, { lead_id: leads.get(emailOnly)!.lead_id, name: '', email: 'bo@example.com' });

  for (const sessionId of [named, preview]) {
    const transcript = await client.get(`${base}/conversations/${sessionId}`);
    t.same(
      [transcript.status, transcript.body],
      [
        200,
        {
          ...(await services.control.show(bot.id, sessionId)),
          lead: leadOf(sessionId),
          preview: sessionId === preview,
        },
      ],
    );
  }
});
