import { setTimeout as sleep } from 'node:timers/promises';
import {
  ClientClosedError,
  ClientOfflineError,
  createClient,
  createCluster,
  DisconnectsClientError,
  ErrorReply,
  ReconnectStrategyError,
  RootNodesUnavailableError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  TimeoutError,
} from 'redis';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { ManagedRedis } from './managed-redis.ts';
import { SharedHitsCache, SharedHitsPooledCache } from './shared-hits-cache.ts';

/**
 * The process's Redis: one connection to a single server (node-redis pipelines concurrent commands
 * on it), or a Redis Cluster client holding one connection per node and sending each command to the
 * node that serves its key's slot (following MOVED, and the topology after a failover).
 */
export type RedisClient = RedisNodeClient | RedisClusterClient;
export type RedisNodeClient = ReturnType<typeof createClientOf>;
export type RedisClusterClient = ReturnType<typeof createClusterOf>;

/** Where to reach Redis: a URL, the managed server's unix socket, or a cluster's seed nodes. */
export type RedisEndpoint = { url: string } | { socketPath: string } | { cluster: string[] };

/** Whether the client is a Redis Cluster client (every other client talks to one server). */
export function isCluster(redis: RedisClient): redis is RedisClusterClient {
  return 'masters' in redis;
}

/**
 * How long a write waits for replicas to confirm it (REDIS_WAIT_REPLICAS) before it is acknowledged
 * anyway: a replica that is down must not stop the service. WAIT holds the node's connection (the
 * commands pipelined behind it wait too), so it is short: replicas confirm within a millisecond or
 * two when they are there.
 */
export const REPLICA_WAIT_MS = 250;
/**
 * How long writes to a server whose replicas did not confirm in time go unconfirmed before they wait
 * again (a master promoted in a failover has no replica until one is added).
 */
export const UNREPLICATED_RECHECK_MS = 10_000;

/** Replicas each script's writes wait for, by client (REDIS_WAIT_REPLICAS; none when absent). */
const replicaWaits = new WeakMap<RedisClient, { replicas: number; logger: Logger }>();
/** Whether the client's script writes wait for replicas (REDIS_WAIT_REPLICAS). */
export function waitsForReplicas(redis: RedisClient): boolean {
  return replicaWaits.has(redis);
}
/**
 * Servers whose replicas did not confirm a write, and until when: a cluster's by node connection, a
 * single server's by its client's wait settings (which its two connections share).
 */
const unreplicated = new WeakMap<object, number>();

/**
 * After a write of `key` (a script's first key): with REDIS_WAIT_REPLICAS set, waits until that many
 * replicas of the key's server hold it (WAIT on the connection that wrote), so that a failover
 * promoting one of them cannot lose what was acknowledged. A server whose replicas do not confirm
 * within REPLICA_WAIT_MS is logged once and not waited for during UNREPLICATED_RECHECK_MS.
 */
export async function waitForReplicas(redis: RedisClient, key: string): Promise<void> {
  const wait = replicaWaits.get(redis);
  if (!wait) return;
  const node = isCluster(redis) ? await redis.getNodeClientForKey(key) : redis;
  const server = isCluster(redis) ? node : wait;
  if ((unreplicated.get(server) ?? 0) > Date.now()) return;
  const acknowledged = await node.sendCommand<number>(['WAIT', String(wait.replicas), String(REPLICA_WAIT_MS)]);
  if (acknowledged < wait.replicas) {
    unreplicated.set(server, Date.now() + UNREPLICATED_RECHECK_MS);
    wait.logger.warn(
      { wanted: wait.replicas, acknowledged, node: describeNode(node) },
      'writes are not confirmed by enough replicas: acknowledged without waiting for a while',
    );
  }
}

function describeNode(node: RedisNodeClient): string | undefined {
  const socket = node.options?.socket;
  return socket && 'host' in socket ? `${socket.host}:${socket.port}` : undefined;
}

/**
 * A command node-redis has no method for (the query engine's FT.*): on a cluster it goes to the node
 * serving `key`'s slot, or to any node without one.
 */
export function sendRawCommand<T>(redis: RedisClient, args: string[], key?: string): Promise<T> {
  return isCluster(redis) ? redis.sendCommand<T>(key, false, args) : redis.sendCommand<T>(args);
}

/** Options of a key scan (node-redis's SCAN options). */
interface ScanOptions {
  MATCH: string;
  COUNT: number;
}

/** The keys matching a pattern, in batches: on a cluster, every master's keys in turn. */
export async function* scanKeys(redis: RedisClient, options: ScanOptions): AsyncGenerator<string[]> {
  if (!isCluster(redis)) {
    yield* redis.scanIterator(options);
    return;
  }
  for (const master of redis.masters) {
    const node = await redis.nodeClient(master);
    yield* node.scanIterator(options);
  }
}

/** Entries in the client-side cache of Redis reads (least recently used evicted first). */
const CLIENT_CACHE_ENTRIES = 10_000;
/**
 * How long a connection may go without reading or writing anything before it is closed (and
 * reconnected), failing its commands: a connection that stopped taking writes fails them then instead
 * of holding them for good. Its PINGs (pingInterval) keep a healthy quiet connection busy, and catch a
 * Redis that stopped answering on a quiet connection (the next PING waits for the last one's reply,
 * so after one unanswered PING the connection goes quiet); on a busy connection, whose writes keep it
 * from being idle, such a Redis is noticed only once the kernel's buffers are full. The price: a
 * server that does nothing for 10 s (a FLUSHALL of a huge database, a paused VM) has every
 * connection dropped and its commands failed, where they used to wait (a long Lua script is not
 * that: Redis answers PING with BUSY meanwhile). This was node-redis's per-command write timeout
 * until 2026-11-27 (10 s here, its default 5 s): that arms an AbortSignal.timeout for every command,
 * which lives its full time after the reply, so a busy gateway kept tens of thousands of them and
 * their timers alive, promoted to the old generation, where they made most of what its major GCs had
 * to sweep.
 */
export const SOCKET_TIMEOUT_MS = 10_000;
/** node-redis's per-command timeout (5 s unless set) switched off: see SOCKET_TIMEOUT_MS. */
const NO_COMMAND_TIMEOUT = { timeout: 0 };
/** How often a connection PINGs its server: three times in its socket timeout (see SOCKET_TIMEOUT_MS). */
function pingInterval(socketTimeoutMs: number): number {
  return Math.round(socketTimeoutMs / 3);
}

/**
 * Redis is not there: the client is reconnecting (commands are refused at once rather than queued,
 * so that requests fail fast instead of hanging through an outage), the connection dropped under a
 * command, or a command could not be written in time.
 */
export function isRedisUnavailable(error: unknown): boolean {
  return (
    error instanceof ClientOfflineError ||
    error instanceof ClientClosedError ||
    error instanceof SocketClosedUnexpectedlyError ||
    error instanceof TimeoutError ||
    error instanceof SocketTimeoutError ||
    // A cluster node that went away under a command, or no node of a cluster answering.
    error instanceof DisconnectsClientError ||
    error instanceof RootNodesUnavailableError ||
    // A cluster between a master's failure and its replica's promotion.
    (error instanceof ErrorReply && /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN)\b/.test(error.message))
  );
}

/** Redis could not be reached when the process started. */
export class RedisUnreachableError extends Error {
  override name = 'RedisUnreachableError';
}

/**
 * Connects the process's Redis client. The first connection gets about 4 s of retries and then fails
 * with a one-line reason; once connected, the client reconnects for ever with capped backoff.
 */
export async function connectRedis(
  endpoint: { url: string } | { socketPath: string },
  logger: Logger,
  options?: ConnectOptions,
): Promise<RedisNodeClient>;
export async function connectRedis(
  endpoint: RedisEndpoint,
  logger: Logger,
  options?: ConnectOptions,
): Promise<RedisClient>;
export async function connectRedis(
  endpoint: RedisEndpoint,
  logger: Logger,
  options: ConnectOptions = {},
): Promise<RedisClient> {
  const client =
    'cluster' in endpoint
      ? await connectCluster(endpoint.cluster, logger)
      : await connectNode(endpoint, logger, options.socketTimeoutMs ?? SOCKET_TIMEOUT_MS);
  if (options.waitReplicas) {
    const wait = { replicas: options.waitReplicas, logger };
    replicaWaits.set(client, wait);
    replicaWaits.set(plainConnection(client), wait);
  }
  return client;
}

async function connectNode(
  endpoint: { url: string } | { socketPath: string },
  logger: Logger,
  socketTimeoutMs: number,
): Promise<RedisNodeClient> {
  const client = createNodeClient(endpoint, logger, { caching: true, socketTimeoutMs, what: 'redis' });
  const plain = createNodeClient(endpoint, logger, { caching: false, socketTimeoutMs, what: 'redis (scripts)' });
  // The plain connection lives as long as the client: destroying the client ends both (closeClient
  // closes the plain one first, so that the scripts in flight get their replies).
  client.on('end', () => {
    if (plain.isOpen) plain.destroy();
  });
  try {
    await Promise.all([client.connect(), plain.connect()]);
  } catch (error) {
    client.destroy();
    plain.destroy();
    // node-redis wraps what the reconnect strategy gave up with; the reason is ours, in one line.
    throw error instanceof ReconnectStrategyError && error.originalError instanceof RedisUnreachableError
      ? error.originalError
      : error;
  }
  plainConnections.set(client, plain);
  return client;
}

/**
 * One connection to a server: about 4 s of retries for its first connection, then a one-line reason;
 * once it was ready, it reconnects for ever with capped backoff, and says so in the log.
 */
function createNodeClient(
  endpoint: { url: string } | { socketPath: string },
  logger: Logger,
  options: { caching: boolean; socketTimeoutMs: number; what: string },
): RedisNodeClient {
  let wasReady = false;
  const reconnectStrategy = (retries: number, cause: Error) => {
    if (wasReady) return Math.min(50 * 2 ** retries, 2000);
    if (retries >= 10) {
      return new RedisUnreachableError(`Redis is not reachable at ${where(endpoint)}: ${cause.message}`);
    }
    return Math.min(50 * 2 ** retries, 500);
  };
  const client = createClientOf(endpoint, reconnectStrategy, options);
  client.on('error', (error: Error) => {
    if (wasReady) logger.warn({ err: error.message }, `${options.what} connection error`);
  });
  client.on('ready', () => {
    if (wasReady) logger.info(`${options.what} reconnected`);
    wasReady = true;
  });
  return client;
}

/** Each client's plain connection (see plainConnection). */
const plainConnections = new WeakMap<RedisClient, RedisClient>();

/**
 * The connection for scripts whose keys change with every message (a turn's, the gates'), and for
 * reads of what they write: a second connection to the same server without client-side caching, so
 * a read sent there after a script's reply is answered after the script. On the caching connection
 * Redis tracks every key a script reads, as it does the client's own reads, and pushes an
 * invalidation for each later write of it: fourteen a chat, for keys never kept in the cache, which
 * cost the chat benchmark 28% of its throughput. A cluster client's is a second cluster client without caching; a client
 * made elsewhere has none: its scripts run on the client itself.
 */
export function plainConnection(redis: RedisClient): RedisClient {
  return plainConnections.get(redis) ?? redis;
}

/** How soon a cluster client asks for the topology again once a node stopped answering. */
const TOPOLOGY_REFRESH_MS = 500;

/**
 * Connects a Redis Cluster client, and a second one without client-side caching for the scripts
 * whose keys change with every message (see plainConnection).
 */
async function connectCluster(seeds: string[], logger: Logger): Promise<RedisClusterClient> {
  const cluster = await connectClusterClient(seeds, logger, true);
  let plain: RedisClusterClient;
  try {
    plain = await connectClusterClient(seeds, logger, false);
  } catch (error) {
    cluster.destroy();
    throw error;
  }
  // As for a single server: the plain client lives as long as the client ('disconnect' is what a
  // cluster client emits when closed or destroyed).
  cluster.on('disconnect', () => {
    if (plain.isOpen) plain.destroy();
  });
  plainConnections.set(cluster, plain);
  return cluster;
}

/**
 * Connects a Redis Cluster client through the first seed node that answers (about 4 s of retries
 * over all of them, then a one-line reason). Its node connections reconnect for ever with capped
 * backoff; a node that stays away makes it read the topology again from the others, which is how
 * it finds the replica promoted in place of a failed master.
 */
async function connectClusterClient(seeds: string[], logger: Logger, caching: boolean): Promise<RedisClusterClient> {
  let wasReady = false;
  const reconnectStrategy = (retries: number) => Math.min(50 * 2 ** retries, 2000);
  for (let attempt = 0; ; attempt += 1) {
    const cluster = createClusterOf(seeds, reconnectStrategy, caching);
    cluster.on('error', (error: Error) => {
      if (wasReady) logger.warn({ err: error.message }, 'redis cluster error');
    });
    cluster.on('node-error', (error: Error, node: { host: string; port: number }) => {
      if (wasReady)
        logger.warn({ err: error.message, node: `${node.host}:${node.port}` }, 'redis node connection error');
    });
    try {
      await cluster.connect();
      wasReady = true;
      return cluster;
    } catch (error) {
      cluster.destroy();
      if (attempt >= 10) {
        const cause = error instanceof Error ? error.message : String(error);
        throw new RedisUnreachableError(`Redis Cluster is not reachable at ${seeds.map(hostOf).join(', ')}: ${cause}`);
      }
      await sleep(Math.min(50 * 2 ** attempt, 500));
    }
  }
}

/**
 * The node clients' own command options: node-redis's types leave `commandOptions` out of a cluster's
 * `defaults`, but it makes each node client from them (cluster-slots.js), and a node client without it
 * arms its default 5 s timer for every command sent to it directly (WAIT, SCAN, its PINGs).
 */
const NODE_COMMAND_OPTIONS = { commandOptions: NO_COMMAND_TIMEOUT };

function createClusterOf(seeds: string[], reconnectStrategy: (retries: number) => number, caching: boolean) {
  return createCluster({
    rootNodes: seeds.map((url) => ({ url })),
    RESP: 3,
    ...(caching ? { clientSideCache: new SharedHitsPooledCache({ maxEntries: CLIENT_CACHE_ENTRIES }) } : {}),
    commandOptions: NO_COMMAND_TIMEOUT,
    topologyRefreshOnReconnectionAttemptStrategy: TOPOLOGY_REFRESH_MS,
    defaults: {
      ...NODE_COMMAND_OPTIONS,
      disableOfflineQueue: true,
      pingInterval: pingInterval(SOCKET_TIMEOUT_MS),
      socket: { reconnectStrategy, socketTimeout: SOCKET_TIMEOUT_MS },
    },
  });
}

/**
 * RESP3, with client-side caching when `caching`: reads of rarely-changing records (chatbots,
 * sources, key owners) are answered from memory, and Redis's tracking invalidates them the moment
 * any process writes the key, so every gateway still treats Redis as the source of truth. A hit is
 * the cached reply itself, frozen (SharedHitsCache): callers read replies, never change them.
 */
function createClientOf(
  endpoint: { url: string } | { socketPath: string },
  reconnectStrategy: (retries: number, cause: Error) => number | Error,
  { caching, socketTimeoutMs }: { caching: boolean; socketTimeoutMs: number },
) {
  const timing = { reconnectStrategy, socketTimeout: socketTimeoutMs };
  const socket = 'url' in endpoint ? timing : { path: endpoint.socketPath, ...timing };
  return createClient({
    RESP: 3,
    ...(caching ? { clientSideCache: new SharedHitsCache({ maxEntries: CLIENT_CACHE_ENTRIES }) } : {}),
    disableOfflineQueue: true,
    commandOptions: NO_COMMAND_TIMEOUT,
    pingInterval: pingInterval(socketTimeoutMs),
    url: 'url' in endpoint ? endpoint.url : undefined,
    socket,
  });
}

/**
 * One read sent as a transaction, so that the server answers it and the client-side cache never does:
 * for a value that another process (or this one, a moment ago) may just have changed, before the
 * cache has heard of it. `read` adds the one command to the transaction.
 */
export async function readPastCache<T>(
  redis: RedisClient,
  read: (multi: RedisTransaction) => { exec(): Promise<unknown> },
): Promise<T> {
  const [value] = (await read(startTransaction(redis)).exec()) as [T];
  return value;
}

/** A transaction of the process's client, with typed commands (`multi`'s own return type is generic). */
type RedisTransaction = ReturnType<typeof startTransaction>;
function startTransaction(redis: RedisClient) {
  return redis.multi();
}

/** Where Redis is, without credentials. */
function where(endpoint: { url: string } | { socketPath: string }): string {
  return 'socketPath' in endpoint ? endpoint.socketPath : hostOf(endpoint.url);
}

function hostOf(redisUrl: string): string {
  const url = new URL(redisUrl);
  return `${url.hostname}:${url.port || '6379'}`;
}

/** The configuration openRedis follows. */
export type RedisSettings = Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER' | 'REDIS_WAIT_REPLICAS' | 'DATA_DIR'>;

interface ConnectOptions {
  /** Replicas each script's writes wait for (REDIS_WAIT_REPLICAS). */
  waitReplicas?: number;
  /** SOCKET_TIMEOUT_MS unless given (tests). */
  socketTimeoutMs?: number;
}

/** The process's Redis: a connected client and how to let go of it (and of a managed server). */
export interface RedisHandle {
  redis: RedisClient;
  close(): Promise<void>;
}

/**
 * Connects to `REDIS_URL`, or, when it is unset, to the managed local redis-server under `DATA_DIR`
 * (started here when none is running, and then stopped by `close`).
 */
export async function openRedis(settings: RedisSettings, logger: Logger): Promise<RedisHandle> {
  const options = { waitReplicas: settings.REDIS_WAIT_REPLICAS };
  const urls = settings.REDIS_URL;
  if (urls) {
    const endpoint = urls.length > 1 || settings.REDIS_CLUSTER ? { cluster: urls } : { url: urls[0]! };
    const redis = await connectRedis(endpoint, logger, options);
    return { redis, close: () => closeClient(redis) };
  }
  const managed = new ManagedRedis(settings.DATA_DIR, logger);
  await managed.start();
  try {
    const redis = await connectRedis({ socketPath: managed.socketPath }, logger, options);
    return {
      redis,
      close: async () => {
        await closeClient(redis);
        await managed.stop();
      },
    };
  } catch (error) {
    await managed.stop();
    throw error;
  }
}

/**
 * Closes the client once the commands already sent have their replies: first its plain connection
 * (a turn's scripts), then the client itself.
 */
export async function closeClient(redis: RedisClient): Promise<void> {
  const plain = plainConnection(redis);
  if (plain !== redis && plain.isOpen) await plain.close();
  if (redis.isOpen) await redis.close();
}
