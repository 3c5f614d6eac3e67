import net from 'node:net';
import { createClient } from 'redis';
import t, { type Test } from 'tap';
import { startApp } from '../../src/app.ts';
import { fixedTimeClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { scaleAccount, startGateway, type TestGateway } from '../support/gateway.ts';
import { LogCapture } from '../support/log-capture.ts';
import { until } from '../support/until.ts';
import { WidgetClient, type Refused } from '../support/widget-client.ts';

// Per-socket frame rate and inbound queue, and the per-address limit on new sockets (issue 18).

// A gateway on a clock the tests move: 1 frame a second, bursts of 5, reading pauses at 2 waiting.
let now = Date.now() * 1000;
const paced = await startGateway(
  { SOCKET_FRAME_RATE: '1', SOCKET_FRAME_BURST: '5', SOCKET_INBOUND_QUEUE: '2' },
  { clock: fixedTimeClock(() => now) },
);
// A gateway on the real clock: 3 new sockets per address a minute (addresses from X-Forwarded-For,
// the test being the trusted proxy), a 300 ms heartbeat, and reading paused at 2 frames waiting.
const LIMITS_ENV = {
  SOCKET_OPENS_PER_ADDRESS: '3',
  TRUSTED_PROXIES: '127.0.0.1',
  SOCKET_HEARTBEAT_MS: '300',
  SOCKET_INBOUND_QUEUE: '2',
};
const limited = await startGateway(LIMITS_ENV);
t.teardown(async () => {
  await paced.stop();
  await limited.stop();
});
const pacedBot = await newBot(paced);
const limitedBot = await newBot(limited);
const pacedAgent = await paced.app.services.agents.create(
  (await paced.app.services.chatbots.get(pacedBot)).user_id,
  'A',
);
const RATE_ERROR = { type: 'error', detail: 'Frame rate limit exceeded.' };
const TYPE_ERROR = { type: 'error', detail: 'type is required.' };

t.test('a widget socket over its rate: one error frame, frames dropped, closed 1008 a burst in debt', async (t) => {
  const { client } = await WidgetClient.ready(paced.baseUrl, { chatbot_id: pacedBot });
  for (let i = 0; i < 5; i += 1) client.send({});
  for (let i = 0; i < 5; i += 1) t.same(await client.next('error'), TYPE_ERROR, `frame ${i + 1} handled`);
  client.send({});
  t.same(await client.next('error'), RATE_ERROR, 'the sixth frame is over the rate');
  for (let i = 0; i < 3; i += 1) client.send({});
  client.send({});
  t.equal(await client.whenClosed(), 1008, 'the tenth frame puts it a whole burst in debt');
  t.equal(client.closeReason, 'frame rate exceeded');
  t.same(
    client.frames.map((frame) => frame.detail ?? frame.type),
    ['ready', ...Array<string>(5).fill(TYPE_ERROR.detail), RATE_ERROR.detail],
    'nothing for the dropped frames',
  );
});

// Found as a flake of socket-flood on a loaded machine: a socket flooding before its ready frame was
// sent got a bare close, its ready and error frames written after the close had gone out.
t.test('a widget socket flooding before its ready frame: ready, its error frame, then 1008', async (t) => {
  const logs = new LogCapture();
  const gateway = await startGateway(
    { SOCKET_FRAME_RATE: '1', SOCKET_FRAME_BURST: '2', LOG_LEVEL: 'warn' },
    { clock: fixedTimeClock(() => now) },
    logs,
  );
  t.teardown(() => gateway.stop());
  const bot = await newBot(gateway);
  // The ready frame waits for the session's history, held back until the flood has been noticed.
  const conversations = gateway.app.services.conversations;
  const history = conversations.visitorHistory.bind(conversations);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  conversations.visitorHistory = async (...args) => {
    await held;
    return history(...args);
  };
  const client = await WidgetClient.connect(gateway.baseUrl, { chatbot_id: bot });
  // Two frames taken in, the third over the rate, the fourth a whole burst in debt.
  for (let i = 0; i < 4; i += 1) client.send({});
  await until(() => logs.withMessage('closed a socket for policy').length === 1, 'the flood noticed');
  release();
  t.equal(await client.whenClosed(), 1008);
  t.equal(client.closeReason, 'frame rate exceeded');
  // The two frames taken in are still handled; whether their answers go out before the close depends
  // on how their bytes arrived (in one read or more), so they are left out here.
  t.same(
    client.frames.filter((frame) => frame.detail !== TYPE_ERROR.detail).map((frame) => frame.detail ?? frame.type),
    ['ready', RATE_ERROR.detail],
  );
});

t.test("frames are allowed again at the rate, on the gateway's clock; each new streak over it is told", async (t) => {
  const { client } = await WidgetClient.ready(paced.baseUrl, { chatbot_id: pacedBot });
  for (let i = 0; i < 5; i += 1) client.send({});
  for (let i = 0; i < 5; i += 1) await client.next('error');
  now += 1_000_000;
  client.send({});
  t.same(await client.next('error'), TYPE_ERROR, 'a second later, one more frame');
  client.send({});
  t.same(await client.next('error'), RATE_ERROR);
  client.send({});
  await pingPong(client);
  now += 3_000_000;
  client.send({});
  t.same(await client.next('error'), TYPE_ERROR, 'three seconds pay back two dropped frames and allow one');
  client.send({});
  t.same(await client.next('error'), RATE_ERROR, 'a new streak over the rate is told again');
  t.same(
    client.frames.map((frame) => frame.detail ?? frame.type),
    ['ready', ...Array<string>(6).fill(TYPE_ERROR.detail), RATE_ERROR.detail, TYPE_ERROR.detail, RATE_ERROR.detail],
  );
  t.equal(client.closeCode, undefined);
  await client.close();
});

t.test('an agent socket over its rate: an error frame with a null ref, then 1008', async (t) => {
  const client = await WidgetClient.at(`${paced.baseUrl.replace(/^http/, 'ws')}/agents/v1/socket`);
  client.send({ type: 'auth', token: pacedAgent.token });
  await client.next('authenticated');
  await client.next('conversations');
  for (let i = 0; i < 4; i += 1) client.send({ ref: `r${i}` });
  for (let i = 0; i < 4; i += 1) t.same(await client.next('error'), { ...TYPE_ERROR, ref: `r${i}` });
  client.send({ ref: 'r4' });
  t.same(await client.next('error'), { ...RATE_ERROR, ref: null }, 'a dropped frame is not read: no ref');
  for (let i = 0; i < 4; i += 1) client.send({ ref: `r${5 + i}` });
  t.equal(await client.whenClosed(), 1008);
  t.equal(client.closeReason, 'frame rate exceeded');
});

t.test('a socket whose queue is full is not read until the queue drains, then is read again', async (t) => {
  const { client } = await WidgetClient.ready(paced.baseUrl, { chatbot_id: pacedBot });
  const redis = await writesPaused(t, paced);
  client.send({ type: 'escalate' });
  client.send({ type: 'escalate' });
  await until(() => paced.app.sockets.inbound().paused === 1, 'reading to pause at 2 frames waiting');
  client.send({ type: 'escalate' });
  client.send({ type: 'escalate' });
  await until(() => client.socket.bufferedAmount === 0, 'the client to write its frames');
  // A round trip through the gateway's event loop: had it read the socket, those frames would wait now.
  await (await fetch(`${paced.baseUrl}/healthz`)).text();
  t.same(paced.app.sockets.inbound(), { paused: 1, waiting: 2 }, 'the later frames are left in TCP, unread');
  t.equal(client.frames.length, 1, 'nothing answered while Redis is paused');
  await redis.sendCommand(['CLIENT', 'UNPAUSE']);
  for (let i = 0; i < 4; i += 1) t.same(await client.next('escalated'), { type: 'escalated' }, `escalation ${i + 1}`);
  await until(() => paced.app.sockets.inbound().waiting === 0, 'the queue to drain');
  t.same(paced.app.sockets.inbound(), { paused: 0, waiting: 0 }, 'reading again');
  client.send({ type: 'escalate' });
  t.same(await client.next('escalated'), { type: 'escalated' }, 'a later frame is read and answered');
  t.equal(client.closeCode, undefined);
  await client.close();
});

t.test('a socket whose queue stays full for a heartbeat is closed with 1008', async (t) => {
  const { client } = await WidgetClient.ready(limited.baseUrl, { chatbot_id: limitedBot });
  await writesPaused(t, limited);
  client.send({ type: 'escalate' });
  client.send({ type: 'escalate' });
  const started = Date.now();
  t.equal(await client.whenClosed(), 1008);
  t.equal(client.closeReason, 'inbound queue full');
  t.ok(Date.now() - started < 3000, 'within two heartbeats and the close grace');
});

t.test('new sockets per client address: 429 past the limit, on every route and every gateway', async (t) => {
  const ws = (gateway: TestGateway) => gateway.baseUrl.replace(/^http/, 'ws');
  const widgetFrom = (gateway: TestGateway, address: string) =>
    WidgetClient.at(`${ws(gateway)}/widget/v1/socket?chatbot_id=${limitedBot}`, {
      headers: { 'x-forwarded-for': address },
    });
  const agentFrom = (gateway: TestGateway, address: string) =>
    WidgetClient.at(`${ws(gateway)}/agents/v1/socket`, { headers: { 'x-forwarded-for': address } });
  const refusal = (opening: Promise<WidgetClient>) =>
    opening.then(
      () => t.fail('the upgrade was accepted'),
      (error: Refused) => ({ status: error.status, body: error.body }),
    );
  const LIMITED = { status: 429, body: { detail: 'Too many sockets opened from this address.' } };
  const open: WidgetClient[] = [];
  t.teardown(() => Promise.all(open.map((client) => client.close())));

  open.push(await widgetFrom(limited, '203.0.113.7'), await agentFrom(limited, '203.0.113.7'));
  open.push(await widgetFrom(limited, '203.0.113.7'));
  t.same(await refusal(widgetFrom(limited, '203.0.113.7')), LIMITED);
  t.same(await refusal(agentFrom(limited, '203.0.113.7')), LIMITED, 'the agent socket counts the same');
  const raw = await rawUpgrade(limited.app.port, `/widget/v1/socket?chatbot_id=${limitedBot}`, '203.0.113.7');
  t.equal(
    raw.replace(/^Retry-After: (59|60)\r$/m, 'Retry-After: 60\r'),
    'HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 60\r\n' +
      'Content-Length: 55\r\nConnection: close\r\n\r\n{"detail":"Too many sockets opened from this address."}',
  );
  open.push(await widgetFrom(limited, '203.0.113.8'));
  t.pass('another address is admitted');

  // Another gateway on the same Redis counts with the first one.
  const other = await startApp(
    loadConfig({ REDIS_URL: limited.redis.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...LIMITS_ENV }),
    createLogger('silent'),
    { shutdownGraceMs: 1000 },
  );
  t.teardown(() => other.stop());
  const second = { ...limited, app: other, baseUrl: `http://127.0.0.1:${other.port}` };
  t.same(await refusal(widgetFrom(second, '203.0.113.7')), LIMITED);
  open.push(await widgetFrom(limited, '203.0.113.9'), await widgetFrom(limited, '203.0.113.9'));
  open.push(await widgetFrom(second, '203.0.113.9'));
  t.same(await refusal(widgetFrom(second, '203.0.113.9')), LIMITED, 'two opens here and one there are three');
});

// Issue 18: fresh sessions could spend an owner's monthly quota without limit.
t.test('new conversations per client address and chatbot: 429 past the limit; resuming is not one', async (t) => {
  const gateway = await startGateway({ WIDGET_NEW_SESSIONS_PER_ADDRESS: '2', TRUSTED_PROXIES: '127.0.0.1' });
  t.teardown(() => gateway.stop());
  const bot = await newBot(gateway);
  const otherBot = await newBot(gateway);
  const ws = gateway.baseUrl.replace(/^http/, 'ws');
  const widgetFrom = (chatbotId: string, address: string, sessionId?: string) =>
    WidgetClient.ready(
      gateway.baseUrl,
      { chatbot_id: chatbotId, ...(sessionId ? { session_id: sessionId } : {}) },
      { headers: { 'x-forwarded-for': address } },
    );
  const opened: WidgetClient[] = [];
  t.teardown(() => Promise.all(opened.map((client) => client.close())));
  const first = await widgetFrom(bot, '198.51.100.4');
  const second = await widgetFrom(bot, '198.51.100.4');
  opened.push(first.client, second.client);
  const refused = await WidgetClient.at(`${ws}/widget/v1/socket?chatbot_id=${bot}`, {
    headers: { 'x-forwarded-for': '198.51.100.4' },
  }).then(
    () => t.fail('the upgrade was accepted'),
    (error: Refused) => ({ status: error.status, body: error.body }),
  );
  t.same(refused, { status: 429, body: { detail: 'Too many new conversations from this address. Try again later.' } });
  const resumed = await widgetFrom(bot, '198.51.100.4', first.ready.session_id);
  t.equal(resumed.ready.session_id, first.ready.session_id, 'a session already handed out is resumed');
  opened.push(resumed.client);
  opened.push((await widgetFrom(otherBot, '198.51.100.4')).client, (await widgetFrom(bot, '198.51.100.5')).client);
  t.pass('another chatbot, or another address, starts its own');
});

/** A ping answered: the gateway has read every frame sent before it (a dropped one gets no answer). */
function pingPong(client: WidgetClient): Promise<void> {
  return new Promise((resolve) => {
    client.socket.once('pong', () => resolve());
    client.socket.ping();
  });
}

async function newBot(gateway: TestGateway): Promise<string> {
  const owner = await scaleAccount(gateway.app);
  return (await gateway.app.services.chatbots.create(owner.user.id, { name: 'Limits' })).id;
}

/** Pauses the gateway's Redis writes (reads go on) until the test ends or unpauses it. */
async function writesPaused(t: Test, gateway: TestGateway) {
  const redis = createClient({ url: gateway.redis.url });
  await redis.connect();
  t.teardown(async () => {
    await redis.sendCommand(['CLIENT', 'UNPAUSE']);
    redis.destroy();
  });
  await redis.sendCommand(['CLIENT', 'PAUSE', '60000', 'WRITE']);
  return redis;
}

function rawUpgrade(port: number, path: string, forwardedFor: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
          `X-Forwarded-For: ${forwardedFor}\r\n\r\n`,
      ),
    );
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}
