import { createLogger } from '../../src/logger.ts';
import { connectRedis, type RedisClient } from '../../src/redis/redis-client.ts';
import { startRedis, type TestRedis } from './redis-server.ts';

/** A throwaway redis-server and the project's client on it, both stopped when the test `t` ends. */
export async function connectedRedis(t: {
  teardown(fn: () => Promise<void>): void;
}): Promise<{ server: TestRedis; redis: RedisClient }> {
  const server = await startRedis();
  const redis = await connectRedis({ url: server.url }, createLogger('silent'));
  t.teardown(async () => {
    await redis.close();
    await server.stop();
  });
  return { server, redis };
}
