import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from 'redis';
import { freePort, startRedis, type TestRedis } from './redis-server.ts';
import { until } from './until.ts';

// A real multi-shard Redis Cluster for one test file (issue 25, item 2): by default 3 masters, each
// with 1 replica, 6 redis-server processes on loopback, formed by hand in a few hundred milliseconds.
//
// Durability, and what "no acknowledged write lost" needs. Replication in Redis is asynchronous: a
// master acknowledges a write once it has applied it (and, with `appendfsync always`, written its own
// AOF), then streams it to its replica. A `kill -9` of the master between the two loses the write:
// the replica promoted in its place never saw it, and the killed master's AOF does not help, since a
// node that comes back after a failover rejoins as a replica of the new master and drops its data for
// the new master's. So a write survives a failover only if the writer waited for a replica to hold it:
// `WAIT 1 <timeout>` on the connection that wrote, answering 1 (in Redis 7.0 that means the replica
// received and applied it, not that it reached the replica's disk: WAITAOF arrived in 7.2). Even then
// Redis Cluster makes no promise (a replica can be promoted while another one that had the write is
// not): with one replica per master, as here, the one that acknowledged is the one promoted. The bed
// keeps `--appendonly yes --appendfsync always` on every node anyway: each node's own copy is as
// durable as the production setup's, and tests can reason about a node's AOF.

/** One node of the test cluster, as a surviving node currently sees it. */
export interface ClusterNodeInfo {
  /** The node's cluster id (CLUSTER MYID). */
  id: string;
  url: string;
  port: number;
  /** Its cluster bus port (`--cluster-port`, chosen free like `port`). */
  busPort: number;
  pid: number;
  role: 'master' | 'replica';
  /** The inclusive slot ranges a master serves, ascending; empty for a replica. */
  slots: [number, number][];
  /** For a replica, the id of the master it follows. */
  masterId?: string;
}

export interface TestRedisCluster {
  /**
   * Seed URLs of every live node in startup order, the masters as started first, then the replicas
   * (['redis://127.0.0.1:P1', …]); a node killed by killMasterOf is left out.
   */
  readonly urls: string[];
  /** The current masters with their slot ranges, in startup order. */
  masters(): Promise<ClusterNodeInfo[]>;
  /** The current replicas, in startup order. */
  replicas(): Promise<ClusterNodeInfo[]>;
  /**
   * kill -9 of the master serving this key's slot (or this slot, given a number). Resolves once one of
   * its replicas was promoted and every surviving node reports cluster_state:ok with all 16384 slots
   * assigned and served, and sees the dead master's slots on the promoted node.
   */
  killMasterOf(keyOrSlot: string | number): Promise<{ killed: ClusterNodeInfo; promoted: ClusterNodeInfo }>;
  /** Kills every node and removes their directories. */
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** Default 3. */
  masters?: number;
  /** Default 1. */
  replicasPerMaster?: number;
  /** `cluster-node-timeout`: how long a node may be silent before it counts as failing. Default 1000. */
  nodeTimeoutMs?: number;
}

const SLOTS = 16384;
/** How long forming the cluster may take before startRedisCluster gives up. */
const FORM_TIMEOUT_MS = 15_000;

type AdminClient = ReturnType<typeof adminClient>;

/** A node this module started, with its admin connection (undefined once killed). */
interface Node {
  id: string;
  port: number;
  busPort: number;
  pid: number;
  url: string;
  dir: string;
  redis: TestRedis;
  admin: AdminClient | undefined;
}

/** One line of CLUSTER NODES. */
interface NodeLine {
  id: string;
  port: number;
  flags: string[];
  masterId: string | undefined;
  slots: [number, number][];
}

/** The contiguous slot range master `index` of `count` serves: 0–5460, 5461–10921, 10922–16383 for 3. */
function slotRange(index: number, count: number): [number, number] {
  return [Math.floor((index * SLOTS) / count), Math.floor(((index + 1) * SLOTS) / count) - 1];
}

/**
 * Starts a Redis Cluster of `masters` shards of 1 + `replicasPerMaster` redis-servers each, and
 * resolves once every node reports cluster_state:ok, every slot is assigned, every node sees the
 * same masters, slots and replicas, and every replica's link to its master is up. That takes a little
 * over 2 s: a master reports cluster_state:ok no sooner than 2 s after it started (Redis's fixed
 * CLUSTER_WRITABLE_DELAY), whatever the rest.
 */
/** Which of `masters` serves `slot` (-1 when none does). */
export function masterIndexOfSlot(masters: Array<Pick<ClusterNodeInfo, 'slots'>>, slot: number): number {
  return masters.findIndex((master) => master.slots.some(([from, to]) => slot >= from && slot <= to));
}

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<TestRedisCluster> {
  const masterCount = options.masters ?? 3;
  const replicasPerMaster = options.replicasPerMaster ?? 1;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1000;
  if (!(masterCount >= 1) || !(replicasPerMaster >= 0)) throw new Error('a cluster needs a master and 0+ replicas');
  const total = masterCount * (1 + replicasPerMaster);
  // Node i < masterCount is master i; node masterCount + m * replicasPerMaster + r is replica r of master m.
  const masterOf = (i: number) => (i < masterCount ? undefined : Math.floor((i - masterCount) / replicasPerMaster));

  const started = await Promise.allSettled(Array.from({ length: total }, () => startNode(nodeTimeoutMs)));
  const nodes = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const killed = new Set<Node>();
  const killAll = () => {
    for (const node of nodes) {
      try {
        process.kill(node.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      rmSync(node.dir, { recursive: true, force: true });
    }
  };
  // A test process that exits (a failed assertion thrown past its teardown, process.exit) leaves no
  // redis-server behind.
  process.once('exit', killAll);
  const stop = async () => {
    process.removeListener('exit', killAll);
    for (const node of nodes) {
      node.admin?.destroy();
      node.admin = undefined;
    }
    await Promise.all(nodes.map((node) => node.redis.stop()));
    for (const node of nodes) rmSync(node.dir, { recursive: true, force: true });
  };
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }

  const live = () => nodes.filter((node) => !killed.has(node));
  const nodesView = async (node: Node) => parseNodes(await admin(node).sendCommand<string>(['CLUSTER', 'NODES']));
  const describe = async (role: 'master' | 'replica'): Promise<ClusterNodeInfo[]> => {
    const view = await nodesView(live()[0]!);
    return live().flatMap((node) => {
      const line = view.find((l) => l.id === node.id);
      if (!line) return [];
      const isMaster = line.flags.includes('master');
      if (isMaster !== (role === 'master')) return [];
      return [nodeInfo(node, line)];
    });
  };

  try {
    // Unique config epochs before the nodes meet (as redis-cli --cluster create does): no epoch
    // collision for the nodes to resolve among themselves.
    await Promise.all(nodes.map((node, i) => admin(node).sendCommand(['CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1)])));
    await Promise.all(
      nodes.slice(0, masterCount).map((node, m) => {
        const [first, last] = slotRange(m, masterCount);
        return admin(node).sendCommand(['CLUSTER', 'ADDSLOTSRANGE', String(first), String(last)]);
      }),
    );
    // Every pair meets directly: learning of each other through gossip alone took a second longer.
    await Promise.all(
      nodes.flatMap((node, i) =>
        nodes
          .slice(i + 1)
          .map((other) =>
            admin(node).sendCommand(['CLUSTER', 'MEET', '127.0.0.1', String(other.port), String(other.busPort)]),
          ),
      ),
    );
    await settle('every node to know every other node', FORM_TIMEOUT_MS, async () => {
      for (const node of nodes) {
        const view = await nodesView(node);
        const known = view.filter((line) => !line.flags.includes('handshake') && !line.flags.includes('noaddr'));
        if (known.length !== total) return `node ${node.port} knows ${known.length} of ${total} nodes`;
      }
      return undefined;
    });
    await Promise.all(
      nodes.slice(masterCount).map((node, r) => {
        const master = nodes[masterOf(masterCount + r)!]!;
        return admin(node).sendCommand(['CLUSTER', 'REPLICATE', master.id]);
      }),
    );
    await settle('the cluster to form', FORM_TIMEOUT_MS, async () => {
      for (const node of nodes) {
        const pending = clusterInfoPending(node, await admin(node).sendCommand<string>(['CLUSTER', 'INFO']), total);
        if (pending) return pending;
        const view = await nodesView(node);
        for (const [i, expected] of nodes.entries()) {
          const line = view.find((l) => l.id === expected.id);
          const m = masterOf(i);
          const want =
            m === undefined ? `master of ${slotRange(i, masterCount).join('-')}` : `replica of ${nodes[m]!.id}`;
          const seen = !line
            ? 'nothing'
            : line.flags.includes('master')
              ? `master of ${line.slots.map((range) => range.join('-')).join(',')}`
              : `replica of ${line.masterId}`;
          if (seen !== want) return `node ${node.port} sees node ${expected.port} as ${seen}, not ${want}`;
        }
        if (masterOf(nodes.indexOf(node)) !== undefined) {
          const link = await masterLink(node);
          if (link !== 'up') return `replica ${node.port}'s master_link_status is ${link}`;
        }
      }
      return undefined;
    });
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    get urls() {
      return live().map((node) => node.url);
    },
    masters: () => describe('master'),
    replicas: () => describe('replica'),
    async killMasterOf(keyOrSlot) {
      const slot =
        typeof keyOrSlot === 'number'
          ? keyOrSlot
          : await admin(live()[0]!).sendCommand<number>(['CLUSTER', 'KEYSLOT', keyOrSlot]);
      const masters = await describe('master');
      const victim = masters.find((info) => info.slots.some(([first, last]) => first <= slot && slot <= last));
      if (!victim) throw new Error(`no master serves slot ${slot}`);
      const followers = (await describe('replica')).filter((info) => info.masterId === victim.id);
      if (followers.length === 0) throw new Error(`master ${victim.port} (slot ${slot}) has no replica to promote`);
      const victimNode = nodes.find((node) => node.id === victim.id)!;
      victimNode.admin?.destroy();
      victimNode.admin = undefined;
      killed.add(victimNode);
      await victimNode.redis.stop();

      // Failure detection takes node-timeout, the replica's election 0.5–1 s more: 10 node timeouts
      // and 10 s leave a loaded machine plenty.
      const timeoutMs = 10 * nodeTimeoutMs + 10_000;
      const candidates = followers.map((info) => nodes.find((node) => node.id === info.id)!);
      let promoted: Node | undefined;
      await settle(`a replica of killed master ${victim.port} to take over`, timeoutMs, async () => {
        for (const node of candidates) {
          const role = /^role:(\w+)/m.exec(await admin(node).info('replication'))?.[1];
          if (role === 'master') promoted = node;
        }
        if (!promoted) return `no replica of ${victim.port} (${candidates.map((n) => n.port).join(', ')}) is master`;
        const newMaster = promoted;
        const others = candidates.filter((node) => node !== newMaster);
        for (const node of live()) {
          const pending = clusterInfoPending(node, await admin(node).sendCommand<string>(['CLUSTER', 'INFO']), total);
          if (pending) return pending;
          const view = await nodesView(node);
          const line = view.find((l) => l.id === newMaster.id);
          if (!line?.flags.includes('master') || JSON.stringify(line.slots) !== JSON.stringify(victim.slots)) {
            return `node ${node.port} does not yet see ${newMaster.port} serving slots ${JSON.stringify(victim.slots)}`;
          }
          // The killed master's other replicas follow the promoted one, as every node sees it.
          const stray = others.find((other) => view.find((l) => l.id === other.id)?.masterId !== newMaster.id);
          if (stray) return `node ${node.port} does not yet see replica ${stray.port} following ${newMaster.port}`;
        }
        for (const node of others) {
          const link = await masterLink(node);
          if (link !== 'up') return `replica ${node.port}'s link to the new master is ${link}`;
        }
        return undefined;
      });
      const info = (await describe('master')).find((i) => i.id === promoted!.id)!;
      return { killed: victim, promoted: info };
    },
    stop,
  };
}

/** Starts one cluster-enabled redis-server with its own directory, both its ports free, and connects to it. */
async function startNode(nodeTimeoutMs: number): Promise<Node> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    // The bus port comes from freePort too (rather than port + 10000, redis's default): below the
    // ephemeral range, so that no outgoing connection can hold it, and never past 65535. If it was
    // taken meanwhile, redis-server exits, startRedis gives up after its retries, and this loop tries
    // another bus port.
    const busPort = await freePort();
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-redis-cluster-'));
    let redis: TestRedis;
    try {
      redis = await startRedis([
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-port',
        String(busPort),
        '--cluster-node-timeout',
        String(nodeTimeoutMs),
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        // A replica's first sync starts at once (Redis 7.0 waits 5 s for more replicas by default).
        '--repl-diskless-sync-delay',
        '0',
      ]);
    } catch (error) {
      lastError = error;
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    const admin = adminClient(redis.url);
    try {
      await admin.connect();
      const id = await admin.sendCommand<string>(['CLUSTER', 'MYID']);
      const pid = Number(/^process_id:(\d+)/m.exec(await admin.info('server'))?.[1]);
      return { id, port: redis.port, busPort, pid, url: redis.url, dir, redis, admin };
    } catch (error) {
      admin.destroy();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }
  throw new Error(`could not start a cluster redis-server: ${String(lastError)}`);
}

/** What keeps a node's CLUSTER INFO from a healthy full cluster, or undefined. */
function clusterInfoPending(node: Node, info: string, knownNodes: number): string | undefined {
  const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
  const state = field('cluster_state');
  const assigned = Number(field('cluster_slots_assigned'));
  const ok = Number(field('cluster_slots_ok'));
  const known = Number(field('cluster_known_nodes'));
  if (state !== 'ok' || assigned !== SLOTS || ok !== SLOTS || known !== knownNodes) {
    return `node ${node.port} reports cluster_state:${state}, ${assigned} slots assigned, ${ok} ok, ${known} nodes known`;
  }
  return undefined;
}

/** A connection of this module's own to one node; a node killed on purpose is no error. */
function adminClient(url: string) {
  const client = createClient({ url, socket: { reconnectStrategy: false } });
  client.on('error', () => {});
  return client;
}

function admin(node: Node): AdminClient {
  if (!node.admin) throw new Error(`node ${node.port} was killed or stopped`);
  return node.admin;
}

async function masterLink(node: Node): Promise<string | undefined> {
  return /^master_link_status:(\w+)/m.exec(await admin(node).info('replication'))?.[1];
}

function parseNodes(text: string): NodeLine[] {
  return text
    .trim()
    .split('\n')
    .map((row) => {
      const [id, address, flags, master, , , , , ...slots] = row.trim().split(' ');
      return {
        id: id!,
        port: Number(/:(\d+)@/.exec(address!)?.[1]),
        flags: flags!.split(','),
        masterId: master === '-' ? undefined : master,
        // "[slot->-id]" entries are slots being migrated: none in this bed.
        slots: slots
          .filter((s) => !s.startsWith('['))
          .map((s) => {
            const [first, last] = s.split('-').map(Number);
            return [first!, last ?? first!] as [number, number];
          }),
      };
    });
}

function nodeInfo(node: Node, line: NodeLine): ClusterNodeInfo {
  const isMaster = line.flags.includes('master');
  return {
    id: node.id,
    url: node.url,
    port: node.port,
    busPort: node.busPort,
    pid: node.pid,
    role: isMaster ? 'master' : 'replica',
    slots: isMaster ? line.slots : [],
    ...(isMaster ? {} : { masterId: line.masterId }),
  };
}

/**
 * Polls `pending` (what is still missing, or undefined once done) until it is done; after `timeoutMs`
 * throws, naming what was waited for and what was still missing. A command that fails meanwhile (a
 * node still loading, say) counts as not done yet.
 */
async function settle(what: string, timeoutMs: number, pending: () => Promise<string | undefined>): Promise<void> {
  let missing = 'not checked yet';
  try {
    await until(
      async () => {
        try {
          missing = (await pending()) ?? '';
        } catch (error) {
          missing = `a check failed: ${String(error)}`;
        }
        return missing === '';
      },
      what,
      timeoutMs,
    );
  } catch {
    throw new Error(`Redis Cluster: timed out after ${timeoutMs} ms waiting for ${what}: ${missing}`);
  }
}
