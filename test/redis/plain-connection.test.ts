import { createClient } from 'redis';
import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import { LuaScript } from '../../src/redis/lua-script.ts';
import { closeClient, connectRedis, plainConnection } from '../../src/redis/redis-client.ts';
import { startRedis } from '../support/redis-server.ts';
import { conversationStoreOn, OPEN_LIMITS } from '../support/tracking.ts';
import { until } from '../support/until.ts';

// Redis tracks, for client-side caching, every key a script reads on the caching connection and
// pushes an invalidation for each later write. The scripts of a turn run on the plain connection,
// so a conversation's keys never enter the tracking table.

const GET = new LuaScript<{ keys: [key: string]; args: []; reply: string | null }>("return redis.call('GET', KEYS[1])");
const PLAIN_GET = new LuaScript<{ keys: [key: string]; args: []; reply: string | null }>(
  "return redis.call('GET', KEYS[1]) or ''",
  { plain: true },
);

const server = await startRedis();
const admin = await createClient({ url: server.url }).connect();
const redis = await connectRedis({ url: server.url }, createLogger('silent'));
t.teardown(async () => {
  await redis.close();
  admin.destroy();
  await server.stop();
});

/** Keys in the server's tracking table (INFO stats). */
async function trackedKeys(): Promise<number> {
  return Number(/^tracking_total_keys:(\d+)/m.exec(await admin.info('stats'))![1]);
}

t.test('a script on the caching connection has its keys tracked; one on the plain connection does not', async (t) => {
  await PLAIN_GET.run(redis, ['plain-key'], []);
  t.equal(await trackedKeys(), 0);
  await GET.run(redis, ['cached-key'], []);
  t.equal(await trackedKeys(), 1);
  await admin.flushAll();
});

t.test('turns leave nothing in the tracking table', async (t) => {
  const conversations = conversationStoreOn(redis);
  for (let i = 0; i < 20; i += 1) {
    const start = await conversations.beginTurn(
      'bot',
      `session-${i % 5}`,
      { content: 'hi', source: 'api' },
      OPEN_LIMITS,
    );
    if (start.kind !== 'started') throw new Error(`turn ${i} did not start: ${start.kind}`);
    const renewed = await conversations.renewLease('bot', `session-${i % 5}`, start.token, 30_000);
    const end = await conversations.endTurn('bot', `session-${i % 5}`, start.token, {
      role: 'assistant',
      content: 'hello',
    });
    t.same([renewed, end.outcome], [true, 'stored']);
    // Read at once, as a request that follows a turn does: the read sees the turn.
    const transcript = await conversations.transcript('bot', `session-${i % 5}`);
    t.equal(transcript.messages.length, 2 * (Math.floor(i / 5) + 1));
  }
  t.equal(await trackedKeys(), 0, 'neither the scripts nor the reads of what they wrote');
});

t.test('closing the client lets the scripts already sent finish, then closes both connections', async (t) => {
  const other = await connectRedis({ url: server.url }, createLogger('silent'));
  const connected = () => admin.clientList().then((clients) => clients.length);
  const before = await connected();
  await PLAIN_GET.run(other, ['loaded'], []); // the script is loaded: no NOSCRIPT fallback in flight
  const inFlight = Array.from({ length: 200 }, (_, i) => PLAIN_GET.run(other, [`in-flight-${i}`], []));
  await closeClient(other);
  t.same(await Promise.all(inFlight), Array(200).fill(''), 'every script in flight got its reply');
  t.same([other.isOpen, plainConnection(other).isOpen], [false, false]);
  await until(async () => (await connected()) === before - 2, 'the server to see both connections gone');
});

t.test('destroying the client destroys its plain connection', async (t) => {
  const other = await connectRedis({ url: server.url }, createLogger('silent'));
  other.destroy();
  t.equal(plainConnection(other).isOpen, false);
});

t.test('a plain connection the server refuses fails startup with a one-line reason', async (t) => {
  // The test's own three connections (admin, the client and its plain one), and at most one more:
  // the new client's two cannot both be served.
  await until(async () => (await admin.clientList()).length === 3, 'the earlier tests’ connections gone');
  await admin.configSet('maxclients', '4');
  t.teardown(() => admin.configSet('maxclients', '10000'));
  await t.rejects(connectRedis({ url: server.url }, createLogger('silent')), {
    name: 'RedisUnreachableError',
    message: `Redis is not reachable at 127.0.0.1:${server.port}: ERR max number of clients reached`,
  });
});
