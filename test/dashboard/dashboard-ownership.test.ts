import t from 'tap';
import { systemClock } from '../../src/clock.ts';
import { testEvent } from '../../src/dashboard/test-event.ts';
import { registerDashboard } from '../../src/http/dashboard-routes.ts';
import { createHttpServer } from '../../src/http/http-server.ts';
import { WebBundles } from '../../src/http/web-bundle.ts';
import { createLogger } from '../../src/logger.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { TrustedProxies } from '../../src/net/trusted-proxies.ts';
import { createLlmProviders } from '../../src/llm/llm-providers.ts';
import { ProviderCheck } from '../../src/llm/provider-check.ts';
import { callableProviders } from '../../src/startup.ts';
import { startGateway } from '../support/gateway.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';

const gw = await startGateway({ WEBHOOK_ALLOW_PRIVATE: '1', SECRET_KEY: '3d'.repeat(32) });
t.teardown(() => gw.stop());
const { services } = gw.app;
const redis = await connectRedis({ url: gw.redis.url }, createLogger('silent'));
t.teardown(() => redis.close());

/** Every route of the management API, read from a restify server the dashboard registered itself on. */
function dashboardRoutes(): Array<{ method: string; path: string }> {
  const server = createHttpServer(createLogger('silent'));
  registerDashboard(server, {
    services,
    retrieval: gw.app.retrieval,
    bundles: new WebBundles(),
    clock: systemClock,
    publicUrl: undefined,
    trustedProxies: TrustedProxies.none,
    providerCheck: new ProviderCheck({
      providers: createLlmProviders(gw.config),
      callable: callableProviders(gw.config),
      redis,
      keys: services.keys,
      clock: systemClock,
    }),
  });
  const routes = (server as unknown as { getDebugInfo(): { routes: Array<{ method: string; path: string }> } })
    .getDebugInfo()
    .routes.map(({ method, path }) => ({ method: method.toUpperCase(), path }));
  return routes.filter((route) => route.path.startsWith('/dashboard/api/'));
}

// Owner A has one of everything; owner B tries A's ids on every route.
const a = await createOwner(gw.app);
const bot = await services.chatbots.create(a.id, { name: 'A bot' });
const source = await services.intake.addText(bot.id, 'Private text of A.');
const hook = await services.webhooks.create(bot.id, 'http://127.0.0.1:9/hook', ['lead.captured']);
const webhook = await services.webhooks.get(hook.id);
const key = await services.apiKeys.create(a.id, 'A key');
const agent = await services.agents.create(a.id, 'A agent');
const cannedReply = await services.cannedReplies.create(a.id, { shortcut: 'private', text: 'Private reply of A.' });
const connection = await services.connections.create(a.id, {
  service: 'notion',
  authKind: 'token',
  secret: { token: 'secret_a' },
});
await services.control.escalate(bot.id, 'embed-a-visitor', { source: 'embed' });
const delivery = { id: await services.outbox.emitTo(webhook, testEvent(bot.id, 'lead.captured', Date.now() * 1000)) };
const asked = ['embed-a-visitor', 'Do you ship to Canada?', Date.now() * 1000, 'fallback'] as const;
const group = { id: (await services.unansweredRecorder.record(bot.id, ...asked))![1]! };

/** Each path parameter: owner A's id for it, and the 404 detail another owner gets. */
const PARAMS: Record<string, { id: string; detail: string }> = {
  chatbot_id: { id: bot.id, detail: 'Chatbot not found.' },
  source_id: { id: source.id, detail: 'Source not found.' },
  webhook_id: { id: hook.id, detail: 'Webhook not found.' },
  delivery_id: { id: delivery.id, detail: 'Delivery not found.' },
  key_id: { id: key.id, detail: 'API key not found.' },
  agent_id: { id: agent.id, detail: 'Agent not found.' },
  reply_id: { id: cannedReply.id, detail: 'Canned reply not found.' },
  connection_id: { id: connection.id, detail: 'Connection not found.' },
  session_id: { id: 'embed-a-visitor', detail: 'Conversation not found.' },
  group_id: { id: group.id, detail: 'Question not found.' },
};
const PUBLIC = [
  'POST /dashboard/api/session',
  'POST /dashboard/api/invite',
  'GET /dashboard/api/setup',
  'POST /dashboard/api/setup',
];
const routes = dashboardRoutes();
const fill = (path: string, id?: string) =>
  path.replace(/:(\w+)/g, (_, name: string) => id ?? PARAMS[name]?.id ?? `unknown-${name}`);
const paramsOf = (path: string) => [...path.matchAll(/:(\w+)/g)].map((match) => match[1]!);

t.test('the table covers every parameter of every route', async (t) => {
  t.ok(routes.length >= 40, `${routes.length} routes`);
  for (const route of routes) {
    for (const name of paramsOf(route.path))
      t.ok(PARAMS[name], `${route.method} ${route.path}: ${name} is in the table`);
  }
});

t.test('every route but sign-in needs a session', async (t) => {
  for (const route of routes) {
    if (PUBLIC.includes(`${route.method} ${route.path}`)) continue;
    const res = await new DashboardClient(gw.baseUrl).request(route.method, fill(route.path));
    t.same([res.status, res.body], [401, { detail: 'Not signed in.' }], `${route.method} ${route.path}`);
  }
});

t.test('every state change needs the CSRF token', async (t) => {
  const b = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  for (const route of routes) {
    if (route.method === 'GET' || PUBLIC.includes(`${route.method} ${route.path}`)) continue;
    const res = await b.request(route.method, fill(route.path), undefined, { 'x-csrf-token': 'forged' });
    t.same(
      [res.status, res.body],
      [403, { detail: 'CSRF token missing or invalid.' }],
      `${route.method} ${route.path}`,
    );
  }
});

t.test("another owner's ids are not found on every route, before any body is read", async (t) => {
  const b = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  for (const route of routes) {
    const params = paramsOf(route.path);
    if (params.length === 0) continue;
    const { detail } = PARAMS[params[0]!]!;
    for (const id of [undefined, 'not-an-id', crypto.randomUUID()]) {
      const path = id === undefined ? fill(route.path) : fill(route.path, id);
      const res = await b.request(route.method, path);
      t.same([res.status, res.body], [404, { detail }], `${route.method} ${path}`);
    }
  }
  t.same((await b.get('/dashboard/api/chatbots')).body, [], "B's lists hold nothing of A's");
  t.same((await b.get('/dashboard/api/keys')).body, []);
  t.same((await b.get('/dashboard/api/agents')).body, []);
  t.same((await b.get('/dashboard/api/connections')).body, []);
  t.same((await b.get('/dashboard/api/canned-replies')).body, []);
});

t.test("owner A's resources came through untouched", async (t) => {
  t.match(await services.chatbots.get(bot.id), { is_active: true, name: 'A bot' });
  t.equal((await services.sources.get(source.id)).id, source.id);
  t.equal((await services.webhooks.get(hook.id)).secret, hook.secret);
  t.same(
    (await services.apiKeys.list(a.id)).map((k) => k.active),
    [true],
  );
  t.same(
    (await services.agents.list(a.id)).map((x) => x.active),
    [true],
  );
  t.match(await services.control.show(bot.id, 'embed-a-visitor'), { taken_over_by: null });
  t.equal(await services.telegram.find(bot.id), undefined);
  t.equal((await services.connections.get(connection.id)).status, 'active');
  t.equal((await services.unanswered.get(bot.id, group.id)).status, 'open');
  t.same(await services.cannedReplies.list(a.id), [cannedReply]);
  const ownerA = await DashboardClient.signIn(gw.baseUrl, a);
  t.equal((await ownerA.get(`/dashboard/api/webhooks/${hook.id}`)).status, 200, 'A still reaches them');
});
