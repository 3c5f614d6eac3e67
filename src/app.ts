import type { Server } from 'restify';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import { closeGracefully, createHttpServer, listen } from './http/http-server.ts';
import { registerHealthRoutes } from './http/health-routes.ts';
import { registerPublicApi } from './http/public-api.ts';
import type { Logger } from './logger.ts';
import { createServices, type Services } from './services.ts';
import { openRedis, type RedisHandle } from './store/redis-client.ts';

/** A running gateway. */
export interface App {
  readonly port: number;
  readonly services: Services;
  stop(): Promise<void>;
}

/** Injected collaborators; tests pass a simulated clock. */
export interface AppOptions {
  clock?: Clock;
  /** How long in-flight requests may take to finish at shutdown. */
  shutdownGraceMs?: number;
}

/**
 * The composition root: wires Redis, the service layer and the HTTP server, starts them in
 * dependency order and stops them in reverse.
 */
export async function startApp(config: Config, logger: Logger, options: AppOptions = {}): Promise<App> {
  const clock = options.clock ?? systemClock;
  const handle: RedisHandle = await openRedis({ redisUrl: config.REDIS_URL, dataDir: config.DATA_DIR }, logger);
  let server: Server | undefined;
  try {
    const services = createServices(handle.redis, config, clock);
    server = createHttpServer(logger);
    registerHealthRoutes(server, () => redisAnswers(handle));
    registerPublicApi(server, services);
    const port = await listen(server, config.PORT, config.HOST);
    logger.info({ port, host: config.HOST }, 'gateway listening');
    const httpServer = server;
    return {
      port,
      services,
      stop: async () => {
        await closeGracefully(httpServer, options.shutdownGraceMs ?? 10_000);
        await handle.close();
        logger.info('gateway stopped');
      },
    };
  } catch (error) {
    if (server) await closeGracefully(server, 0);
    await handle.close();
    throw error;
  }
}

async function redisAnswers(handle: RedisHandle): Promise<boolean> {
  if (!handle.redis.isReady) return false;
  try {
    return (await handle.redis.ping()) === 'PONG';
  } catch {
    return false;
  }
}
