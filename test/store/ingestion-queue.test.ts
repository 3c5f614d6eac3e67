import t from 'tap';
import { IngestionQueue } from '../../src/store/ingestion-queue.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { connectedRedis } from '../support/connected-redis.ts';

const { redis } = await connectedRedis(t);
const queue = new IngestionQueue(redis, new RedisKeys('sb:'));

// A claim for 0 sources leased every queued source (`ZRANGE queue 0 -1`).
t.test('a claim for no source leases none, and still puts expired leases back', async (t) => {
  await queue.enqueue('bot', 'a', 1);
  await queue.enqueue('bot', 'b', 2);
  const held = await queue.claimOne('bot', 'b', 1000, 1);
  t.ok(held);
  t.same(await queue.claim(0, 5000, 60_000), []);
  t.same(await queue.state(5000), { queued: 2, running: 0, paused: false }, 'b is back in the queue');
  t.same(
    (await queue.claim(1, 6000, 60_000)).map((c) => [c.sourceId, c.interrupted]),
    [['b', 1]],
    'expired first, its interrupted claim counted',
  );
});
