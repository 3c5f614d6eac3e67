import net from 'node:net';
import t from 'tap';
import { createLogger } from '../../../src/logger.ts';
import { connectRedis } from '../../../src/redis/redis-client.ts';
import { fakeOpenAi } from '../../fakes/fake-llm-server.ts';
import { scaleAccount, startGateway } from '../../support/gateway.ts';
import { RecordingSink } from '../../support/recording-sink.ts';
import { WidgetClient, type Refused } from '../../support/widget-client.ts';

const openai = await fakeOpenAi().start();
const sink = new RecordingSink();
const gw = await startGateway(
  {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    LLM_MAX_RETRIES: '0',
    SOCKET_SEND_BUFFER_BYTES: String(64 * 1024),
    CONVERSATION_RATE_LIMIT: '1000',
    // The send buffer test floods 150 frames at once; the frame rate limit must not cut it off first.
    SOCKET_FRAME_BURST: '1000',
  },
  { events: sink },
);
t.teardown(async () => {
  await gw.stop();
  await openai.stop();
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const bot = await services.chatbots.create(owner.user.id, { name: 'Widget Bot' });
const SESSION = /^embed-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

const open = (query: Record<string, string> = {}, options = {}) =>
  WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id, ...query }, options);

t.test(
  'a new visitor gets a fresh embed- session; a message gets typing, the reply as written, then stored',
  async (t) => {
    openai.behaviour = () => ({ text: 'Hello from the AI', delayMs: 50 });
    const { client, ready } = await open();
    t.match(ready, { type: 'ready', session_id: SESSION });
    t.same(ready.history, []);
    t.same(Object.keys(ready).sort(), ['handoff', 'history', 'lead_left', 'session_id', 'type']);
    t.same(
      [ready.handoff, ready.lead_left],
      [
        {
          state: 'ai',
          agent: null,
          agents_online: false,
          open: true,
          opens_at: null,
          time_zone: null,
          contact_in_ms: null,
        },
        false,
      ],
    );
    client.send({ type: 'message', content: 'Hi there' });
    t.same(await client.next('typing'), { type: 'typing' });
    const reply = await client.next('message');
    t.same(Object.keys(reply).sort(), ['content', 'created_at', 'role', 'stream_id', 'type']);
    t.match(reply, { type: 'message', role: 'assistant', content: 'Hello from the AI', created_at: TIMESTAMP });
    // Pieces written while one is being published go out together: how many frames depends on timing.
    const deltas = client.frames.filter((f) => f.type === 'delta');
    t.same(
      client.frames.map((f) => f.type),
      ['ready', 'typing', ...deltas.map(() => 'delta'), 'message'],
    );
    t.ok(deltas.length > 0, 'the reply streamed');
    t.equal(deltas.map((f) => f.content).join(''), 'Hello from the AI', 'the pieces make the reply');
    t.same(new Set(deltas.map((f) => f.stream_id)), new Set([reply.stream_id]), 'one stream, named by the reply');
    t.same(Object.keys(deltas[0]!).sort(), ['content', 'stream_id', 'type']);
    t.same(
      sink.forSession(ready.session_id).map((e) => [e.event, e.data.source, e.data.content]),
      [
        ['conversation.started', 'embed', undefined],
        ['message.received', 'embed', 'Hi there'],
      ],
    );
    await client.close();
  },
);

t.test('resume: the ready frame carries what was said while the visitor was away', async (t) => {
  openai.behaviour = (req) => ({ text: `echo: ${req.body.messages.at(-1).content}` });
  const first = await open();
  const sessionId = first.ready.session_id;
  first.client.send({ type: 'message', content: 'one' });
  await first.client.next('message');
  await first.client.close();
  // Another tab of the same visitor talks while the first is closed.
  const other = await open({ session_id: sessionId });
  t.equal(other.ready.session_id, sessionId);
  other.client.send({ type: 'message', content: 'two' });
  await other.client.next('message');
  await other.client.close();
  const back = await open({ session_id: sessionId });
  t.equal(back.ready.session_id, sessionId, 'the session is resumed');
  t.same(
    back.ready.history.map((m: any) => [m.role, m.content]),
    [
      ['user', 'one'],
      ['assistant', 'echo: one'],
      ['user', 'two'],
      ['assistant', 'echo: two'],
    ],
  );
  t.match(back.ready.history[0], { created_at: TIMESTAMP });
  await back.client.close();
});

t.test('a session handed out but not used yet is resumed; an unknown or foreign one is replaced', async (t) => {
  const fresh = await open();
  await fresh.client.close();
  const again = await open({ session_id: fresh.ready.session_id });
  t.equal(again.ready.session_id, fresh.ready.session_id);
  await again.client.close();
  // Issue 18: every anonymous connect writes this key; unused, it lasts an hour (it was 30 days).
  const redis = await connectRedis({ url: gw.redis.url }, createLogger('silent'));
  t.teardown(() => redis.close());
  const ttl = await redis.ttl(services.keys.widgetSession(bot.id, fresh.ready.session_id));
  t.ok(ttl > 3500 && ttl <= 3600, `an unused session lasts an hour (${ttl} s left)`);
  for (const given of [`embed-${crypto.randomUUID()}`, 'embed-not-a-uuid', 'api-someone', '']) {
    const other = await open({ session_id: given });
    t.match(other.ready.session_id, SESSION);
    t.not(other.ready.session_id, given, `${given || '(empty)'} is not resumed`);
    await other.client.close();
  }
  // A session of another chatbot is unknown to this one.
  const otherBot = await services.chatbots.create(owner.user.id, { name: 'Other' });
  const foreign = await WidgetClient.ready(gw.baseUrl, {
    chatbot_id: otherBot.id,
    session_id: fresh.ready.session_id,
  });
  t.not(foreign.ready.session_id, fresh.ready.session_id);
  await foreign.client.close();
});

t.test('two tabs of one session both receive the reply', async (t) => {
  openai.behaviour = () => ({ text: 'for both tabs' });
  const a = await open();
  const b = await open({ session_id: a.ready.session_id });
  a.client.send({ type: 'message', content: 'hello?' });
  t.equal((await a.client.next('message')).content, 'for both tabs');
  t.equal((await b.client.next('message')).content, 'for both tabs');
  await a.client.close();
  await b.client.close();
});

t.test('malformed frames get error frames and the socket stays open', async (t) => {
  openai.behaviour = () => ({ text: 'still here' });
  const { client } = await open();
  const cases: Array<[unknown, string]> = [
    ['not json', 'Frame must be a JSON object.'],
    ['[1,2]', 'Frame must be a JSON object.'],
    ['"text"', 'Frame must be a JSON object.'],
    [{}, 'type is required.'],
    [{ type: 'shout' }, 'type must be one of: message, escalate, cta, lead, feedback.'],
    [{ type: 'message' }, 'content is required.'],
    [{ type: 'message', content: 42 }, 'content must be a string.'],
    [{ type: 'message', content: '   ' }, 'content must not be empty.'],
    [{ type: 'message', content: 'x'.repeat(4001) }, 'content must be at most 4000 characters.'],
    [{ type: 'cta' }, 'id is required.'],
    [{ type: 'cta', id: 'nope' }, 'Unknown call-to-action.'],
  ];
  for (const [frame, detail] of cases) {
    client.send(frame);
    t.same(await client.next('error'), { type: 'error', detail }, JSON.stringify(frame));
  }
  client.socket.send(Buffer.from([1, 2, 3]), { binary: true });
  t.same(await client.next('error'), { type: 'error', detail: 'Frame must be a JSON object.' }, 'binary frame');
  client.send({ type: 'message', content: 'x'.repeat(4000) });
  t.equal((await client.next('message')).content, 'still here', 'the socket still works');
  t.equal(client.closeCode, undefined);
  await client.close();
});

t.test('a frame over 16 KiB closes the socket with 1009; 16 KiB exactly is accepted', async (t) => {
  const { client } = await open();
  client.send(JSON.stringify({ type: 'escalate', pad: 'x'.repeat(16 * 1024 - 30) }).padEnd(16 * 1024, ' '));
  t.same(await client.next('escalated'), { type: 'escalated' });
  client.send(JSON.stringify({ type: 'message', content: 'x'.repeat(17 * 1024) }));
  t.equal(await client.whenClosed(), 1009);
});

t.test('refused upgrades: unknown chatbot 404, origin not allowed 403, unknown path 404', async (t) => {
  const refused = (query: Record<string, string>, headers: Record<string, string> = {}) =>
    WidgetClient.connect(gw.baseUrl, query, { headers }).then(
      () => t.fail('the upgrade was accepted'),
      (error: Refused) => ({ status: error.status, body: error.body }),
    );
  t.same(await refused({ chatbot_id: crypto.randomUUID() }), { status: 404, body: { detail: 'Chatbot not found.' } });
  t.same(await refused({ chatbot_id: 'nope' }), { status: 404, body: { detail: 'Chatbot not found.' } });
  t.same(await refused({}), { status: 404, body: { detail: 'Chatbot not found.' } });
  const guarded = await services.chatbots.create(owner.user.id, { name: 'Guarded' });
  await services.chatbots.configure(guarded.id, { allowed_origins: ['https://shop.example', 'http://localhost:3000'] });
  t.same(await refused({ chatbot_id: guarded.id }, { origin: 'https://evil.example' }), {
    status: 403,
    body: { detail: 'Origin not allowed.' },
  });
  t.same(await refused({ chatbot_id: guarded.id }), { status: 403, body: { detail: 'Origin not allowed.' } });
  const allowed = await WidgetClient.ready(gw.baseUrl, { chatbot_id: guarded.id }, { origin: 'https://shop.example' });
  t.match(allowed.ready.session_id, SESSION);
  await allowed.client.close();
  const deleted = await services.chatbots.create(owner.user.id, { name: 'Gone' });
  await services.chatbots.softDelete(deleted.id);
  t.same(await refused({ chatbot_id: deleted.id }), { status: 404, body: { detail: 'Chatbot not found.' } });
  const raw = await rawUpgrade('/elsewhere/socket');
  t.match(raw, /^HTTP\/1\.1 404 Not Found\r\n/);
  t.match(raw, /\{"detail":"Not found\."\}$/);
});

t.test('a socket that stops answering pings is terminated; one that answers stays', async (t) => {
  // A gateway of its own with a fast heartbeat (the other tests' sockets must not depend on it).
  const fast = await startGateway({ SOCKET_HEARTBEAT_MS: '200' });
  t.teardown(() => fast.stop());
  const fastOwner = await scaleAccount(fast.app);
  const fastBot = await fast.app.services.chatbots.create(fastOwner.user.id, { name: 'Beat' });
  const silent = await WidgetClient.ready(fast.baseUrl, { chatbot_id: fastBot.id }, { autoPong: false });
  const lively = await WidgetClient.ready(fast.baseUrl, { chatbot_id: fastBot.id });
  let pings = 0;
  lively.client.socket.on('ping', () => (pings += 1));
  // Counted in heartbeats, not in time: the one ping it left unanswered, then the next beat ends it.
  let unanswered = 0;
  silent.client.socket.on('ping', () => (unanswered += 1));
  const code = await silent.client.whenClosed();
  t.equal(code, 1006, 'terminated without a close frame');
  t.equal(unanswered, 1, 'at the heartbeat after its one unanswered ping');
  const seen = pings;
  await waitFor(() => pings >= seen + 3, 'three more heartbeats');
  t.equal(lively.client.closeCode, undefined, 'the answering socket is still open after several heartbeats');
  await lively.client.close();
});

t.test('a socket that stops reading is terminated once its send buffer passes the cap', async (t) => {
  openai.behaviour = () => ({ text: 'y'.repeat(200_000) });
  // The same flood to a client that reads: nothing is cut off.
  const reader = await open();
  for (let i = 0; i < 30; i += 1) reader.client.send({ type: 'message', content: `read ${i}` });
  for (let i = 0; i < 30; i += 1) await reader.client.next('message');
  t.equal(reader.client.closeCode, undefined);
  const before = gw.app.sockets.size;
  const socket = await rawSocket(`/widget/v1/socket?chatbot_id=${bot.id}`);
  socket.pause();
  t.equal(gw.app.sockets.size, before + 1);
  const frame = (content: string) => maskedTextFrame(JSON.stringify({ type: 'message', content }));
  for (let i = 0; i < 150; i += 1) socket.write(frame(`flood ${i}`));
  await waitFor(() => gw.app.sockets.size === before, 'the slow socket to be terminated', 20_000);
  t.pass('terminated (the heartbeat is 30 s here, so it was the send buffer)');
  t.equal(reader.client.closeCode, undefined);
  socket.destroy();
  await reader.client.close();
});

t.test('a paused chatbot answers with a notice and does not call the LLM', async (t) => {
  const paused = await services.chatbots.create(owner.user.id, { name: 'Sleepy' });
  const { client } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: paused.id });
  await services.chatbots.setActive(paused.id, false);
  client.send({ type: 'message', content: 'anyone?' });
  t.same(await client.next('error'), { type: 'error', detail: 'Chatbot is paused.' });
  t.equal(llmCallsAbout('anyone?'), 0);
  await client.close();
});

t.test('the provider failing: the visitor gets the fallback message, stored as the reply', async (t) => {
  openai.behaviour = () => ({ status: 500 });
  const { client, ready } = await open();
  client.send({ type: 'message', content: 'hello' });
  const reply = await client.next('message');
  t.same(reply, { type: 'message', role: 'assistant', content: bot.fallback_message, created_at: reply.created_at });
  const transcript = await services.conversations.transcript(bot.id, ready.session_id);
  t.same(
    transcript.messages.map((m) => [m.role, m.content, m.failure]),
    [
      ['user', 'hello', 'LLM provider error: openai: 500 fake failure'],
      ['assistant', bot.fallback_message, undefined],
    ],
    "the owner's transcript says why",
  );
  const history = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id, session_id: ready.session_id });
  t.notMatch(JSON.stringify(history.ready), /provider error/, "the visitor's history never shows it");
  await history.client.close();
  await client.close();
});

t.test('quota exhausted: an error frame with the quota detail', async (t) => {
  const user = await services.accounts.create(`free-${crypto.randomUUID()}@example.com`, 'free');
  const freeBot = await services.chatbots.create(user.id, { name: 'Free' });
  for (let i = 0; i < 100; i += 1) await services.quota.consume(user.id);
  const { client } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: freeBot.id });
  client.send({ type: 'message', content: 'over the limit' });
  t.same(await client.next('error'), { type: 'error', detail: 'Monthly message limit reached.' });
  t.equal(llmCallsAbout('over the limit'), 0);
  await client.close();
});

/** LLM calls whose prompt carried this visitor text (other tests' turns may still be running). */
function llmCallsAbout(text: string): number {
  return openai.requests.filter((request) => JSON.stringify(request.body).includes(text)).length;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Opens a websocket by hand over TCP (so the test controls reading) and returns after the 101. */
function rawSocket(path: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(gw.app.port, '127.0.0.1', () => {
      socket.write(upgradeRequest(path));
    });
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      if (head.startsWith('HTTP/1.1 101')) resolve(socket);
      else reject(new Error(head));
    };
    socket.on('data', onData);
    socket.on('error', reject);
  });
}

function rawUpgrade(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(gw.app.port, '127.0.0.1', () => socket.write(upgradeRequest(path)));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

function upgradeRequest(path: string): string {
  return (
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
    'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n'
  );
}

/** A client-to-server text frame (clients must mask). */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([1, 2, 3, 4]);
  const header =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([header, mask, masked]);
}
