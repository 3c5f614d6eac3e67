import { createClient } from 'redis';
import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import { LuaScript } from '../../src/redis/lua-script.ts';
import { connectRedis, isRedisUnavailable } from '../../src/redis/redis-client.ts';
import { startRedis } from '../support/redis-server.ts';
import { countArmedTimers } from '../support/tracking.ts';
import { until } from '../support/until.ts';

// node-redis armed an AbortSignal.timeout for every command (its default 5 s, or the 10 s the gateway
// set): each one lived its full time after the reply, and a busy gateway's major GCs swept tens of
// thousands of them (the chat benchmark's longest pauses, 95–245 ms). A connection that stops taking
// writes is now closed by its socket timeout instead.

const PLAIN_SET = new LuaScript<{ keys: [key: string]; args: [value: string]; reply: number }>(
  "redis.call('SET', KEYS[1], ARGV[1]) return 1",
  { plain: true },
);

const server = await startRedis();
t.teardown(() => server.stop());

t.test('commands arm no timer each, on either connection', async (t) => {
  const redis = await connectRedis({ url: server.url }, createLogger('silent'));
  t.teardown(() => redis.close());
  const armed = countArmedTimers(t);
  await Promise.all(
    Array.from({ length: 100 }, async (_, i) => {
      await redis.set(`k${i}`, 'v');
      await redis.get(`k${i}`);
      await PLAIN_SET.run(redis, [`p${i}`], ['v']);
    }),
  );
  t.equal(armed(), 0);
});

t.test(
  'a connection that stops taking writes fails its commands after the socket timeout, then recovers',
  async (t) => {
    const admin = await createClient({ url: server.url }).connect();
    const pid = Number(/^process_id:(\d+)/m.exec(await admin.info('server'))![1]);
    admin.destroy();
    const redis = await connectRedis({ url: server.url }, createLogger('silent'), { socketTimeoutMs: 500 });
    t.teardown(async () => {
      process.kill(pid, 'SIGCONT');
      if (redis.isOpen) redis.destroy();
    });
    process.kill(pid, 'SIGSTOP');
    // More than the kernel's socket buffers hold: the writes stall, and the connection goes quiet.
    const value = 'x'.repeat(1 << 20);
    const started = Date.now();
    const outcomes = await Promise.allSettled(Array.from({ length: 64 }, (_, i) => redis.set(`big${i}`, value)));
    const failed = outcomes.filter((outcome) => outcome.status === 'rejected');
    t.ok(failed.length > 0, `${failed.length} of 64 writes failed, after ${Date.now() - started} ms`);
    t.ok(
      failed.every((outcome) => isRedisUnavailable(outcome.reason)),
      'each as Redis being unavailable',
    );
    t.ok(Date.now() - started < 5000, 'within a few socket timeouts');
    process.kill(pid, 'SIGCONT');
    await until(async () => redis.isReady && (await redis.set('after', '1')) === 'OK', 'the client to reconnect');
    t.equal(await redis.get('after'), '1');
  },
);
