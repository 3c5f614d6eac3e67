import { createClient } from 'redis';
import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import { LuaScript } from '../../src/redis/lua-script.ts';
import { connectRedis, REPLICA_WAIT_MS } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { SignalBus, type Signal } from '../../src/redis/signal-bus.ts';
import { LogCapture } from '../support/log-capture.ts';
import { startRedis } from '../support/redis-server.ts';
import { until } from '../support/until.ts';

// REDIS_WAIT_REPLICAS: a script's writes are acknowledged only once the replica holds them (WAIT on
// the connection that wrote), so a failover that promotes the replica cannot lose them; a replica
// that stops confirming costs one short wait, then writes go on unconfirmed for a while.

const SET = new LuaScript<{ keys: [key: string]; args: [value: string]; reply: number }>(
  "redis.call('SET', KEYS[1], ARGV[1]) return 1",
);
// The same write on the client's plain connection (scripts of a turn run there).
const PLAIN_SET = new LuaScript<{ keys: [key: string]; args: [value: string]; reply: number }>(
  "redis.call('SET', KEYS[1], ARGV[1]) return 2",
  { plain: true },
);

const master = await startRedis();
const replicaServer = await startRedis(['--replicaof', '127.0.0.1', String(master.port)]);
const replica = await createClient({ url: replicaServer.url }).connect();
const admin = await createClient({ url: master.url }).connect();
const logs = new LogCapture();
const redis = await connectRedis({ url: master.url }, createLogger('warn', logs), { waitReplicas: 1 });
const replicaPid = Number(/^process_id:(\d+)/m.exec(await replica.info('server'))![1]);
t.teardown(async () => {
  process.kill(replicaPid, 'SIGCONT');
  await redis.close();
  replica.destroy();
  admin.destroy();
  await replicaServer.stop();
  await master.stop();
});
await until(async () => /master_link_status:up/.test(await replica.info('replication')), 'the replica in sync');

t.test('each write is on the replica when its script returns, confirmed on the connection that wrote', async (t) => {
  const seen: string[] = [];
  const monitor = await createClient({ url: master.url }).connect();
  await monitor.monitor((line: string) => seen.push(line));
  const behind: number[] = [];
  for (let i = 0; i < 100; i += 1) {
    await (i % 2 === 0 ? SET : PLAIN_SET).run(redis, ['replicated'], [`v${i}`]);
    if ((await replica.get('replicated')) !== `v${i}`) behind.push(i);
  }
  t.same(behind, [], 'the replica held every write as soon as it was acknowledged');
  await admin.sendCommand(['ECHO', 'monitor-caught-up']);
  await until(() => seen.some((line) => line.includes('monitor-caught-up')), 'MONITOR to catch up');
  monitor.destroy();
  // MONITOR lines: `<time> [<db> <client address>] "COMMAND" …`.
  const commands = seen
    .map((line) => /\[\d+ ([^\]]+)\] "(\w+)"/.exec(line))
    .filter((match) => match !== null && /^(evalsha|eval|wait)$/i.test(match[2]!))
    .map((match) => [match![1], match![2]!.toLowerCase()]);
  // The first EVALSHA is answered NOSCRIPT and followed by an EVAL of the source, then the WAIT.
  const pairs = commands.filter(([, command]) => command !== 'eval');
  t.equal(pairs.length, 200, 'one EVALSHA and one WAIT per write');
  t.ok(
    pairs.every(([client, command], i) =>
      i % 2 === 0 ? command === 'evalsha' : command === 'wait' && client === pairs[i - 1]![0],
    ),
    'every EVALSHA followed by a WAIT from the same connection',
  );
  t.equal(new Set(pairs.map(([client]) => client)).size, 2, 'the caching and the plain connection both wrote');
});

t.test('a replica that stops confirming costs one wait, then writes are acknowledged at once', async (t) => {
  process.kill(replicaPid, 'SIGSTOP');
  let started = Date.now();
  await SET.run(redis, ['stalled'], ['one']);
  const first = Date.now() - started;
  t.ok(first >= REPLICA_WAIT_MS - 10, `the first write waited ${first} ms for the replica`);
  t.same(logs.withMessage('writes are not confirmed by enough replicas: acknowledged without waiting for a while'), [
    {
      level: 40,
      wanted: 1,
      acknowledged: 0,
      node: `127.0.0.1:${master.port}`,
      msg: 'writes are not confirmed by enough replicas: acknowledged without waiting for a while',
    },
  ]);
  started = Date.now();
  // On either connection: the server's replicas are what did not confirm.
  for (let i = 0; i < 20; i += 1) await (i % 2 === 0 ? SET : PLAIN_SET).run(redis, ['stalled'], [`v${i}`]);
  const next = Date.now() - started;
  t.ok(next < REPLICA_WAIT_MS, `20 more writes in ${next} ms: not waited for`);
  t.equal(
    logs.withMessage('writes are not confirmed by enough replicas: acknowledged without waiting for a while').length,
    1,
  );
  process.kill(replicaPid, 'SIGCONT');
});

t.test('a signal is published after the write when writes wait for replicas, not inside its script', async (t) => {
  const signal: Signal = { kind: 'lead', chatbot_id: 'c', session_id: 's' };
  const keys = new RedisKeys('sb:');
  t.equal(await new SignalBus(redis, keys, createLogger('silent')).forScript(signal), undefined);
  const unreplicated = await connectRedis({ url: master.url }, createLogger('silent'));
  t.teardown(() => unreplicated.close());
  const bus = new SignalBus(unreplicated, keys, createLogger('silent'));
  t.same(await bus.forScript(signal), {
    channel: keys.signals(),
    message: JSON.stringify({ ...signal, origin: bus.id }),
  });
});
