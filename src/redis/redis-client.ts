import {
  ClientClosedError,
  ClientOfflineError,
  createClient,
  SocketClosedUnexpectedlyError,
  TimeoutError,
} from 'redis';
import type { Logger } from '../logger.ts';
import { ManagedRedis } from './managed-redis.ts';

/** The one Redis connection of a process (node-redis pipelines concurrent commands on it). */
export type RedisClient = ReturnType<typeof createCachingClient>;

/** Where to reach Redis: a URL, or the managed server's unix socket. */
export type RedisEndpoint = { url: string } | { socketPath: string };

/** Entries in the client-side cache of Redis reads (least recently used evicted first). */
const CLIENT_CACHE_ENTRIES = 10_000;
/**
 * How long a command may wait to be written to the connection: past it the caller gets an error
 * instead of waiting behind a connection that stopped taking writes. node-redis disarms this timeout
 * once the command is written, so it does not bound the wait for the reply: a Redis that stops
 * answering while its connection stays open is not detected by it (measured 2026-11-27 as not a cause
 * of the chat tail either: the chat benchmark without it ran the same).
 */
export const COMMAND_TIMEOUT_MS = 10_000;

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
    error instanceof TimeoutError
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
export async function connectRedis(endpoint: RedisEndpoint, logger: Logger): Promise<RedisClient> {
  let wasReady = false;
  const reconnectStrategy = (retries: number, cause: Error) => {
    if (wasReady) return Math.min(50 * 2 ** retries, 2000);
    if (retries >= 10) {
      return new RedisUnreachableError(`Redis is not reachable at ${where(endpoint)}: ${cause.message}`);
    }
    return Math.min(50 * 2 ** retries, 500);
  };
  const client = createCachingClient(endpoint, reconnectStrategy);
  client.on('error', (error: Error) => {
    if (wasReady) logger.warn({ err: error.message }, 'redis connection error');
  });
  client.on('ready', () => {
    if (wasReady) logger.info('redis reconnected');
    wasReady = true;
  });
  await client.connect();
  return client;
}

/**
 * RESP3 with client-side caching: reads of rarely-changing records (chatbots, sources, key owners)
 * are answered from memory, and Redis's tracking invalidates them the moment any process writes the
 * key, so every gateway still treats Redis as the source of truth.
 */
function createCachingClient(
  endpoint: RedisEndpoint,
  reconnectStrategy: (retries: number, cause: Error) => number | Error,
) {
  const socket = 'url' in endpoint ? { reconnectStrategy } : { path: endpoint.socketPath, reconnectStrategy };
  return createClient({
    RESP: 3,
    clientSideCache: { maxEntries: CLIENT_CACHE_ENTRIES },
    disableOfflineQueue: true,
    commandOptions: { timeout: COMMAND_TIMEOUT_MS },
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
function where(endpoint: RedisEndpoint): string {
  if ('socketPath' in endpoint) return endpoint.socketPath;
  const url = new URL(endpoint.url);
  return `${url.hostname}:${url.port || '6379'}`;
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
export async function openRedis(
  settings: { redisUrl: string | undefined; dataDir: string },
  logger: Logger,
): Promise<RedisHandle> {
  if (settings.redisUrl) {
    const redis = await connectRedis({ url: settings.redisUrl }, logger);
    return { redis, close: () => closeClient(redis) };
  }
  const managed = new ManagedRedis(settings.dataDir, logger);
  await managed.start();
  try {
    const redis = await connectRedis({ socketPath: managed.socketPath }, logger);
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

async function closeClient(redis: RedisClient): Promise<void> {
  if (redis.isOpen) await redis.close();
}
