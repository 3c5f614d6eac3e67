import { createClient, createCluster } from 'redis';
import t from 'tap';
import { startRedisCluster, type ClusterNodeInfo } from '../support/redis-cluster.ts';
import { until } from '../support/until.ts';

// The multi-shard Redis Cluster test bed (issue 25, item 2) on its own: 3 masters with a replica
// each, real redis-servers. Keys written through node-redis's cluster client spread over the three
// shards and reach the replicas (WAIT); a master's kill -9 promotes its replica, and the client,
// once it has rediscovered the topology, reads every key again and writes on.

const KEYS = 300;
const keys = Array.from({ length: KEYS }, (_, i) => `bed:key:${i}`);

// A hang (a command the client never answers) fails the test in a minute rather than at tap's 240 s.
t.test(
  'a 3-shard Redis Cluster: slots, replicas, and a failover that keeps every replicated key',
  { timeout: 60_000 },
  async (t) => {
    const startedAt = performance.now();
    const bed = await startRedisCluster();
    const startupMs = Math.round(performance.now() - startedAt);
    t.teardown(() => bed.stop());
    t.comment(`startup of 6 redis-servers into a formed cluster: ${startupMs} ms`);

    // Masters first in the seed URLs, each its own port, none on 6379.
    const masters = await bed.masters();
    const replicas = await bed.replicas();
    t.equal(bed.urls.length, 6);
    t.same(
      bed.urls,
      [...masters, ...replicas].map((node) => `redis://127.0.0.1:${node.port}`),
    );
    t.equal(new Set(bed.urls).size, 6, 'six distinct ports');
    t.notOk(bed.urls.includes('redis://127.0.0.1:6379'));
    t.same(
      masters.map((node) => node.slots),
      [[[0, 5460]], [[5461, 10921]], [[10922, 16383]]],
      'each master serves a contiguous third of the slots',
    );
    t.same(
      replicas.map((node) => node.masterId),
      masters.map((node) => node.id),
      'replica i follows master i',
    );
    t.same(
      replicas.map((node) => node.slots),
      [[], [], []],
    );

    const slotOf = await slotLookup(bed.urls[0]!);
    const serves = (node: ClusterNodeInfo, key: string) =>
      node.slots.some(([first, last]) => first <= slotOf.get(key)! && slotOf.get(key)! <= last);
    const keyCounts = (shards: ClusterNodeInfo[]) =>
      shards.map((node) => keys.filter((key) => serves(node, key)).length);
    const perShard = keyCounts(masters);
    t.same(perShard, [96, 102, 102], 'the keys spread over the three shards');
    t.equal(slotOf.get('some-key'), 5225, "some-key's slot is the first master's");

    const cluster = createCluster({
      rootNodes: bed.urls.map((url) => ({ url })),
      // Refresh the topology soon after a node starts reconnecting (default: 5 s).
      topologyRefreshOnReconnectionAttemptStrategy: 100,
    });
    cluster.on('error', () => {});
    await cluster.connect();
    t.teardown(() => cluster.destroy());

    await Promise.all(keys.map((key) => cluster.set(key, `v1 ${key}`)));
    // WAIT on each master's connection, the one its writes went through: its replica holds them all.
    const waited = await Promise.all(
      cluster.masters.map(async (node) => (await cluster.nodeClient(node)).sendCommand(['WAIT', '1', '1000'])),
    );
    t.same(waited, [1, 1, 1], 'WAIT 1 1000 answers 1 on every master');
    t.same(await dbSizes(masters), perShard, 'each master holds its shard of the keys');
    t.same(await dbSizes(replicas), perShard, 'and so does its replica');
    t.same(
      await Promise.all(keys.map((key) => cluster.get(key))),
      keys.map((key) => `v1 ${key}`),
    );

    // kill -9 of the master serving 'some-key'.
    const failoverStartedAt = performance.now();
    const { killed, promoted } = await bed.killMasterOf('some-key');
    const failoverMs = Math.round(performance.now() - failoverStartedAt);
    t.comment(`failover (kill -9 until every survivor reports cluster_state:ok): ${failoverMs} ms`);
    const victim = 0;
    t.same(killed, masters[victim], 'the master serving some-key was killed');
    const { id, url, port, busPort, pid } = replicas[victim]!;
    t.same(
      promoted,
      { id, url, port, busPort, pid, role: 'master', slots: masters[victim]!.slots },
      "that master's replica took over its slots",
    );
    t.throws(() => process.kill(killed.pid, 0), { code: 'ESRCH' }, 'the killed redis-server is gone');
    const mastersAfter = await bed.masters();
    t.same(
      mastersAfter.map((node) => node.id).sort(),
      masters
        .map((node) => node.id)
        .with(victim, promoted.id)
        .sort(),
    );
    t.same(
      (await bed.replicas()).map((node) => node.id),
      replicas.filter((_, i) => i !== victim).map((node) => node.id),
      'the two other replicas still follow their masters',
    );
    t.equal(bed.urls.length, 5);
    t.notOk(bed.urls.includes(killed.url));

    // The client learns the new topology: a command it sent to the dead master waits while the client
    // reconnects, and fails once a topology refresh (on a reconnection attempt) drops that node; the
    // read is tried again until it succeeds.
    const rediscoveryStartedAt = performance.now();
    const afterFailover = await retrying(() => Promise.all(keys.map((key) => cluster.get(key))));
    t.comment(
      `the cluster client read all keys again ${Math.round(performance.now() - rediscoveryStartedAt)} ms after the failover, ${afterFailover.attempts} attempt(s)${[...new Set(afterFailover.errors)].map((e) => `; ${e}`).join('')}`,
    );
    t.same(
      afterFailover.value,
      keys.map((key) => `v1 ${key}`),
      'every replicated key survived the failover',
    );
    t.same(
      cluster.masters.map((node) => node.port).sort(),
      mastersAfter.map((node) => node.port).sort(),
      'the client sees the new masters',
    );

    await Promise.all(keys.map((key) => cluster.set(key, `v2 ${key}`)));
    t.same(
      await Promise.all(keys.map((key) => cluster.get(key))),
      keys.map((key) => `v2 ${key}`),
      'and writes on',
    );
    t.same(await dbSizes(mastersAfter), keyCounts(mastersAfter), 'each master, the promoted one too, holds its keys');
  },
);

/** Every key's slot (and some-key's), by CLUSTER KEYSLOT on one node. */
async function slotLookup(url: string): Promise<Map<string, number>> {
  const client = createClient({ url });
  await client.connect();
  try {
    const all = [...keys, 'some-key'];
    const slots = await Promise.all(all.map((key) => client.sendCommand<number>(['CLUSTER', 'KEYSLOT', key])));
    return new Map(all.map((key, i) => [key, slots[i]!]));
  } finally {
    client.destroy();
  }
}

/** DBSIZE of each node. */
async function dbSizes(nodes: ClusterNodeInfo[]): Promise<number[]> {
  return Promise.all(
    nodes.map(async (node) => {
      const client = createClient({ url: node.url });
      await client.connect();
      try {
        return await client.dbSize();
      } finally {
        client.destroy();
      }
    }),
  );
}

/** Calls `attempt` until it succeeds, for up to 10 s (tap's timeout ends an attempt that hangs). */
async function retrying<T>(attempt: () => Promise<T>): Promise<{ value: T; attempts: number; errors: string[] }> {
  let attempts = 0;
  const errors: string[] = [];
  const result = await until(async () => {
    attempts += 1;
    try {
      return { value: await attempt() };
    } catch (error) {
      errors.push(String(error));
      return false;
    }
  }, 'the cluster client to read every key after the failover');
  return { value: result.value, attempts, errors };
}
