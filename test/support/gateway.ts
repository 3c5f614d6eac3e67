import { startApp, type App, type AppOptions } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startRedis, type TestRedis } from './redis-server.ts';

/** A gateway on port 0 over its own redis-server, as one test file uses it. */
export interface TestGateway {
  app: App;
  config: Config;
  redis: TestRedis;
  baseUrl: string;
  stop(): Promise<void>;
}

/** Starts redis-server and the gateway with the given environment overrides (log lines to `logs`, if given). */
export async function startGateway(
  env: Record<string, string> = {},
  options: AppOptions = {},
  logs?: { write(line: string): void },
): Promise<TestGateway> {
  const redis = await startRedis();
  const config = loadConfig({
    REDIS_URL: redis.url,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const app = await startApp(config, createLogger(config.LOG_LEVEL, logs), { shutdownGraceMs: 1000, ...options });
  return {
    app,
    config,
    redis,
    baseUrl: `http://127.0.0.1:${app.port}`,
    stop: async () => {
      await app.stop();
      await redis.stop();
    },
  };
}

/** A Scale-plan account with one API key, ready to call the public API. */
export async function scaleAccount(app: App, email = `owner-${crypto.randomUUID()}@example.com`) {
  const user = await app.services.accounts.create(email, 'scale');
  const key = await app.services.apiKeys.create(user.id, 'test key');
  return { user, key: key.key, keyId: key.id };
}
