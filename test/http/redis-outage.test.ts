// Issue 18: with Redis down, requests queued behind the reconnecting client and hung. Now they fail
// fast, /readyz says so, and the gateway carries on by itself once Redis is back, having lost
// nothing it acknowledged. The second test does it under load: REST loops and widget sockets keep
// talking through the outage, and webhook deliveries wait in the outbox for their retries.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { createClient } from 'redis';
import t, { type Test } from 'tap';
import { startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { fakeOpenAi, heldAnswers } from '../fakes/fake-llm-server.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { ChatLoad, restVisitor, widgetVisitor, type Say, type Sent } from '../support/chat-load.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { freePort } from '../support/redis-server.ts';
import { until } from '../support/until.ts';
import { WidgetClient } from '../support/widget-client.ts';
import { apiFetch } from '../support/openapi-contract.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'sb-outage-'));
const port = await freePort();
const url = `redis://127.0.0.1:${port}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** redis-server on `port`, writing every command to its append-only file before answering. */
async function startDurableRedis(): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always'],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 200; i += 1) {
    const ready = await fetch(`http://127.0.0.1:${port}`).then(
      () => true,
      (error: { cause?: { code?: string } }) => error.cause?.code !== 'ECONNREFUSED',
    );
    if (ready) return child;
    await sleep(25);
  }
  throw new Error('redis-server did not start');
}

let redis = await startDurableRedis();
const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'Hello from the assistant.' });
const receiver = await new WebhookReceiver().start();
const config = loadConfig({
  REDIS_URL: url,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  LLM_MAX_RETRIES: '0',
  SEARCH_ENGINE: 'in-process',
  // The load below: one key and a few conversations sending far more than a person would.
  RATE_LIMIT_PER_MINUTE: '100000',
  CONVERSATION_RATE_LIMIT: '100000',
  SOCKET_FRAME_RATE: '100',
  // Webhook retries, their claims and the pending-event sweep in about a second instead of minutes.
  WEBHOOK_ALLOW_PRIVATE: '1',
  WEBHOOK_RETRY_DELAYS: '1,1,1',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_POLL_MS: '50',
  PENDING_EVENT_GRACE_MS: '1000',
});
const app = await startApp(config, createLogger('silent'), { shutdownGraceMs: 1000 });
const baseUrl = `http://127.0.0.1:${app.port}`;
t.teardown(async () => {
  await app.stop();
  redis.kill('SIGKILL');
  await Promise.all([openai.stop(), receiver.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

const owner = await createOwner(app);
const key = (await app.services.apiKeys.create(owner.id, 'outage')).key;
const bot = await app.services.chatbots.create(owner.id, {
  name: 'Outage Bot',
  provider: 'chatgpt',
  model: 'gpt-test',
});
const dashboard = await DashboardClient.signIn(baseUrl, owner);

const timed = async (request: () => Promise<Response>) => {
  const started = performance.now();
  const response = await request();
  return { status: response.status, body: await response.json(), ms: performance.now() - started };
};
const chat = (message: string, sessionId = 'outage-visitor', chatbotId = bot.id) =>
  timed(() =>
    apiFetch(`${baseUrl}/api/v1/chatbots/${chatbotId}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message, session_id: sessionId }),
      // A hang shows as a failed answer, not as a test that runs into tap's timeout.
      signal: AbortSignal.timeout(5000),
    }),
  );
const readyz = () => timed(() => fetch(`${baseUrl}/readyz`));

/** Polls /readyz until it answers `status` (or a few seconds pass); returns the last answer. */
async function readyzUntil(status: number) {
  const deadline = Date.now() + 6000;
  let ready = await readyz();
  while (ready.status !== status && Date.now() < deadline) {
    await sleep(10);
    ready = await readyz();
  }
  return ready;
}

/** SIGKILLs redis-server; resolves once it is gone. */
async function killRedis(): Promise<void> {
  redis.kill('SIGKILL');
  await new Promise((resolve) => redis.once('exit', resolve));
}

t.test('Redis killed and restarted: requests fail fast, /readyz says so, nothing acknowledged is lost', async (t) => {
  for (const message of ['first question', 'second question']) {
    t.same((await chat(message)).body, { response: 'Hello from the assistant.' });
  }

  await killRedis();
  // The client notices the connection is gone.
  const ready = await readyzUntil(503);
  t.same([ready.status, ready.body], [503, { detail: 'Redis is not reachable.' }]);
  const down = await chat('asked while Redis is down');
  // The public API's statuses are SPEC's: an outage is its "internal fault".
  t.same([down.status, down.body], [500, { detail: 'Internal server error.' }]);
  const page = await dashboard.get('/dashboard/api/chatbots');
  t.same([page.status, page.body], [503, { detail: 'Service unavailable: Redis is not reachable.' }]);
  t.ok(
    ready.ms < 1000 && down.ms < 1000,
    `answered at once (readyz ${ready.ms.toFixed(0)} ms, chat ${down.ms.toFixed(0)} ms)`,
  );
  const health = await timed(() => fetch(`${baseUrl}/healthz`));
  t.same([health.status, health.body], [200, { status: 'ok' }]);

  redis = await startDurableRedis();
  const back = await readyzUntil(200);
  t.same([back.status, back.body], [200, { status: 'ready' }], 'the gateway reconnected by itself');
  t.same((await chat('third question')).body, { response: 'Hello from the assistant.' });
  const transcript = await app.services.conversations.transcript(bot.id, 'outage-visitor');
  t.same(
    transcript.messages.filter((m) => m.role === 'user').map((m) => m.content),
    ['first question', 'second question', 'third question'],
    'every acknowledged message kept; the refused one never stored',
  );
});

/** How long a visitor of the load waits between an answer and its next message. */
const PACE_MS = 40;
/** Every answer, during the outage too, comes within this. */
const FAST_MS = 1000;
const REPLY = 'Hello from the assistant.';
const REST_ANSWERS = { acked: [200, { response: REPLY }], refused: [500, { detail: 'Internal server error.' }] };
const WIDGET_ANSWERS = {
  acked: { type: 'message', role: 'assistant', content: REPLY, created_at: 'ISO', stream_id: 'STREAM' },
  refused: { type: 'error', detail: 'Internal server error.' },
};

/** When the outage began and ended (performance.now()). */
interface Outage {
  /** SIGKILL sent, and redis-server gone. */
  killAt: number;
  killedAt: number;
  /** redis-server started again, and /readyz back to 200. */
  restartAt: number;
  backAt: number;
}

/** A webhook request the receiver answered, and how. */
interface Answered {
  id: string;
  status: number;
  body: any;
  at: number;
}

t.test('Redis killed and restarted under chat and widget load: fast failures, nothing acknowledged lost', async (t) => {
  const loadBot = await app.services.chatbots.create(owner.id, {
    name: 'Load Bot',
    provider: 'chatgpt',
    model: 'gpt-test',
  });
  const hook = await app.services.webhooks.create(loadBot.id, receiver.url, [
    'conversation.started',
    'message.received',
  ]);
  receiver.secrets.push(hook.secret);
  // The receiver fails every delivery until Redis is back, so deliveries wait in the outbox for their
  // retries when it dies.
  let receiverUp = false;
  const answered: Answered[] = [];
  receiver.answer = (request) => {
    const status = receiverUp ? 200 : 500;
    answered.push({
      id: String(request.headers['x-switchboard-delivery']),
      status,
      body: request.body,
      at: performance.now(),
    });
    return { status };
  };

  const widgets = await Promise.all([1, 2].map(() => WidgetClient.ready(baseUrl, { chatbot_id: loadBot.id })));
  const visitors = new Map<string, Say>();
  for (const session of ['api-load-1', 'api-load-2', 'api-load-3']) {
    visitors.set(
      session,
      restVisitor((content) => chat(content, session, loadBot.id)),
    );
  }
  for (const { client, ready } of widgets) visitors.set(ready.session_id, widgetVisitor(client));
  const load = new ChatLoad(visitors, PACE_MS);
  t.teardown(() => load.stop());
  await load.each(2, 0, (s) => s.acked, 'two acknowledged messages in every session');
  await until(() => answered.length > 0, 'a failed delivery');

  // Redis dies with a turn in flight in every session (its lease taken, its message stored, its LLM
  // call held): the worst moment for it.
  let openGate = () => {};
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  openai.behaviour = async () => {
    await gate;
    return { text: REPLY };
  };
  await until(() => openai.inFlight === visitors.size, 'a turn in flight in every session');
  const pendingAtKill = await app.services.deliveries.pendingCount();
  const killAt = performance.now();
  await killRedis();
  const killedAt = performance.now();
  openGate();
  const down = await readyzUntil(503);
  t.same([down.status, down.body], [503, { detail: 'Redis is not reachable.' }], '/readyz says Redis is down');
  await load.each(2, killedAt, (s) => !s.acked, 'two refused messages in every session');
  receiverUp = true;
  const restartAt = performance.now();
  redis = await startDurableRedis();
  const back = await readyzUntil(200);
  const backAt = performance.now();
  t.same([back.status, back.body], [200, { status: 'ready' }], 'the gateway reconnected by itself');
  await load.each(2, backAt, (s) => s.acked, 'two acknowledged messages in every session after the restart');
  await load.stop();

  const outage = { killAt, killedAt, restartAt, backAt };
  const isWidget = new Set(widgets.map(({ ready }) => ready.session_id));
  checkAnswers(t, load.sent, isWidget, outage);
  t.same(
    widgets.map(({ client }) => client.closeCode),
    [undefined, undefined],
    'the widget sockets stayed open, and answered on the same socket after the restart',
  );
  const stored = await checkTranscripts(t, loadBot.id, load.sent, outage);
  await until(
    async () =>
      (await app.services.deliveries.pendingCount()) === 0 && !(await app.services.relay.store.hasEntries(loadBot.id)),
    'every delivery done',
  );
  checkDeliveries(t, answered, stored);
  const waiting = new Set(answered.filter((a) => a.at < killAt).map((a) => a.id));
  const delivered = new Set(answered.filter((a) => a.status === 200).map((a) => a.id));
  t.ok(pendingAtKill > 0 && waiting.size > 0, `deliveries waiting for a retry when Redis died (${pendingAtKill})`);
  t.same(
    [...waiting].filter((id) => !delivered.has(id)),
    [],
    'each of them delivered after the restart',
  );
});

// A turn the outage cut off could not release its conversation's lease. Its own gateway takes such a
// lease over at the next turn, but the visitor's next call may reach another gateway (REST behind a
// load balancer), which waited for it to lapse: 30 s. Now the gateway lets go of it once Redis answers.
t.test("a turn cut off by the outage lets go of its conversation's lease once Redis is back", async (t) => {
  const other = await startApp(config, createLogger('silent'), { shutdownGraceMs: 1000 });
  t.teardown(() => other.stop());
  const session = 'outage-cut-turn';
  const lease = app.services.keys.conversationLease(bot.id, session);
  const held = heldAnswers(() => ({ text: REPLY }), 20_000);
  openai.behaviour = held.behaviour;
  const calls = openai.requests.length;
  const asked = chat('asked as Redis went away', session);
  await until(() => openai.requests.length > calls, "the turn's LLM call");
  await killRedis();
  t.equal((await readyzUntil(503)).status, 503);
  held.release();
  const cut = await asked;
  t.same([cut.status, cut.body], [500, { detail: 'Internal server error.' }], 'its reply could not be stored');
  openai.behaviour = () => ({ text: REPLY });

  redis = await startDurableRedis();
  const watcher = await createClient({ url }).connect();
  t.teardown(() => watcher.destroy());
  // The lease is there again (the append-only file kept it), then gone: deleted, with most of its
  // time left, rather than lapsed.
  let left = await watcher.pTTL(lease);
  t.ok(left > 0, `the cut turn's lease survived the outage (${left} ms left)`);
  for (let last = left; left !== -2; last = left) {
    left = await watcher.pTTL(lease);
    if (left === -2) t.ok(last > 15_000, `gone with ${last} ms of its 30 s left: released, not lapsed`);
    else await sleep(10);
  }
  const answered = await apiFetch(`http://127.0.0.1:${other.port}/api/v1/chatbots/${bot.id}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'asked at another gateway', session_id: session }),
  });
  t.same([answered.status, await answered.json()], [200, { response: REPLY }], 'another gateway answers at once');
});

/** Every answer exact and fast; refused while Redis was down, answered before and after. */
function checkAnswers(t: Test, sent: Sent[], isWidget: Set<string>, outage: Outage): void {
  const expected = (s: Sent) =>
    (isWidget.has(s.session) ? WIDGET_ANSWERS : REST_ANSWERS)[s.acked ? 'acked' : 'refused'];
  const brief = (s: Sent) => ({ content: s.content, ms: Math.round(s.ended - s.started), answer: s.answer });
  t.same(
    sent.filter((s) => !isDeepStrictEqual(s.answer, expected(s))).map(brief),
    [],
    'every answer is the reply or the exact refusal (an error frame on the widget, never silence)',
  );
  t.same(sent.filter((s) => s.ended - s.started >= FAST_MS).map(brief), [], `every answer within ${FAST_MS} ms`);
  t.same(sent.filter((s) => s.ended <= outage.killAt && !s.acked).map(brief), [], 'before the kill, all answered');
  t.same(
    sent.filter((s) => s.started >= outage.killedAt && s.ended <= outage.restartAt && s.acked).map(brief),
    [],
    'while Redis is down, all refused',
  );
  t.same(sent.filter((s) => s.started >= outage.backAt && !s.acked).map(brief), [], 'once it is back, all answered');
}

/**
 * Each session's transcript holds its messages once each, in the order sent: every acknowledged one,
 * the one in flight at the kill, and none sent during the outage. Returns the stored user messages
 * by session.
 */
async function checkTranscripts(
  t: Test,
  chatbotId: string,
  sent: Sent[],
  outage: Outage,
): Promise<Map<string, string[]>> {
  const stored = new Map<string, string[]>();
  for (const session of new Set(sent.map((s) => s.session))) {
    const transcript = await app.services.conversations.transcript(chatbotId, session);
    const contents = transcript.messages.filter((m) => m.role === 'user').map((m) => m.content);
    stored.set(session, contents);
    const kept = new Set(contents);
    const mine = sent.filter((s) => s.session === session);
    t.same(
      contents,
      mine.map((s) => s.content).filter((c) => kept.has(c)),
      `${session}: stored once each, in order`,
    );
    t.same(
      mine.filter((s) => s.acked && !kept.has(s.content)).map((s) => s.content),
      [],
      `${session}: acknowledged ones kept`,
    );
    // Its turn had begun (lease taken, message stored, durable in the AOF) but its reply could not be
    // stored: refused, yet in the transcript, and its message.received is delivered.
    t.same(
      mine
        .filter((s) => s.started < outage.killAt && s.ended > outage.killAt)
        .map((s) => [s.acked, kept.has(s.content)]),
      [[false, true]],
      `${session}: the message in flight at the kill refused, and stored`,
    );
    t.same(
      mine.filter((s) => s.started >= outage.killedAt && !s.acked && kept.has(s.content)).map((s) => s.content),
      [],
      `${session}: none refused after the kill stored`,
    );
  }
  return stored;
}

/** Every stored message's events delivered (answered 2xx), signed, each exactly once. */
function checkDeliveries(t: Test, answered: Answered[], stored: Map<string, string[]>): void {
  t.ok(
    receiver.received.every((r) => r.signatureValid),
    'every delivery signed with the webhook secret',
  );
  const ok = answered.filter((a) => a.status === 200);
  const ids = ok.map((a) => a.id);
  t.same(
    ids.filter((id, i) => ids.indexOf(id) !== i),
    [],
    'no delivery answered 2xx twice',
  );
  const data = (event: string) => ok.filter((a) => a.body.event === event).map((a) => a.body.data);
  t.same(
    data('message.received')
      .map((d) => d.content)
      .sort(),
    [...stored.values()].flat().sort(),
    'message.received once per stored message',
  );
  t.same(
    data('conversation.started')
      .map((d) => d.session_id)
      .sort(),
    [...stored.keys()].sort(),
    'conversation.started once per session',
  );
}
