import { createClient } from 'redis';
import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import { LuaScript } from '../../src/redis/lua-script.ts';
import { closeClient, connectRedis, plainConnection, scanKeys } from '../../src/redis/redis-client.ts';
import { startRedisCluster } from '../support/redis-cluster.ts';
import { conversationStoreOn, countArmedTimers, OPEN_LIMITS } from '../support/tracking.ts';

// On a Redis Cluster too, a turn's scripts run on a client without client-side caching, so that
// the masters' tracking tables hold none of a conversation's keys (each would cost an invalidation
// push on every later write).

const GET = new LuaScript<{ keys: [key: string]; args: []; reply: string | null }>("return redis.call('GET', KEYS[1])");

const bed = await startRedisCluster({ replicasPerMaster: 0 });
const redis = await connectRedis({ cluster: bed.urls }, createLogger('silent'));
const admins = await Promise.all(bed.urls.map((url) => createClient({ url }).connect()));
t.teardown(async () => {
  await closeClient(redis);
  for (const admin of admins) admin.destroy();
  await bed.stop();
});

/** Keys in the masters' tracking tables (INFO stats), summed. */
async function trackedKeys(): Promise<number> {
  const infos = await Promise.all(admins.map((admin) => admin.info('stats')));
  return infos.reduce((sum, info) => sum + Number(/^tracking_total_keys:(\d+)/m.exec(info)![1]), 0);
}

t.test('turns and the reads after them leave nothing in the tracking tables', async (t) => {
  t.not(plainConnection(redis), redis, 'the cluster client has a plain one');
  const conversations = conversationStoreOn(redis);
  for (let i = 0; i < 20; i += 1) {
    const bot = `bot-${i % 4}`;
    const session = `session-${i % 5}`;
    const start = await conversations.beginTurn(bot, session, { content: 'hi', source: 'api' }, OPEN_LIMITS);
    if (start.kind !== 'started') throw new Error(`turn ${i} did not start: ${start.kind}`);
    const end = await conversations.endTurn(bot, session, start.token, { role: 'assistant', content: 'hello' });
    t.equal(end.outcome, 'stored');
    t.equal((await conversations.transcript(bot, session)).messages.length % 2, 0);
  }
  t.equal(await trackedKeys(), 0);
  await GET.run(redis, ['cached-key'], []);
  t.equal(await trackedKeys(), 1, 'a script on the caching client is tracked');
});

t.test('commands arm no timer each, through the cluster client or straight to a node', async (t) => {
  const armed = countArmedTimers(t);
  await Promise.all(Array.from({ length: 50 }, (_, i) => redis.set(`timer-${i}`, 'v')));
  let scanned = 0;
  for await (const batch of scanKeys(redis, { MATCH: 'timer-*', COUNT: 100 })) scanned += batch.length;
  t.equal(scanned, 50);
  t.equal(armed(), 0);
});

t.test('closing the client closes its plain one, and so does destroying it', async (t) => {
  const other = await connectRedis({ cluster: bed.urls }, createLogger('silent'));
  await closeClient(other);
  t.same([other.isOpen, plainConnection(other).isOpen], [false, false]);
  const destroyed = await connectRedis({ cluster: bed.urls }, createLogger('silent'));
  destroyed.destroy();
  t.equal(plainConnection(destroyed).isOpen, false);
});
