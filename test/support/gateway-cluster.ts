import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createServices, type Services } from '../../src/services.ts';
import { connectRedis, type RedisClient } from '../../src/store/redis-client.ts';
import { spawnGateway, type GatewayProcess } from './gateway-process.ts';
import { startRedis, type TestRedis } from './redis-server.ts';

/** Several gateway processes on one redis-server, and the service layer over the same Redis. */
export interface GatewayCluster {
  redis: TestRedis;
  gateways: GatewayProcess[];
  /** The test's own view of Redis, through the gateway's service layer. */
  services: Services;
  /** A gateway chosen at random among those still running (as a load balancer without stickiness). */
  pick(): GatewayProcess;
  /** SIGKILLs one gateway: no shutdown, its leases and claims simply stop being renewed. */
  kill(gateway: GatewayProcess): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `count` gateways (child processes running `node src/main.ts`) on a fresh redis-server. */
export async function startGatewayCluster(count: number, env: Record<string, string>): Promise<GatewayCluster> {
  const redis = await startRedis();
  const fullEnv = { REDIS_URL: redis.url, LOG_LEVEL: 'warn', ...env };
  const gateways = await Promise.all(Array.from({ length: count }, () => spawnGateway(fullEnv)));
  const client: RedisClient = await connectRedis({ url: redis.url }, createLogger('silent'));
  const services = createServices(client, loadConfig(fullEnv), systemClock, createLogger('silent'));
  const dead = new Set<GatewayProcess>();
  return {
    redis,
    gateways,
    services,
    pick() {
      const alive = gateways.filter((gateway) => !dead.has(gateway));
      return alive[Math.floor(Math.random() * alive.length)]!;
    },
    async kill(gateway) {
      dead.add(gateway);
      gateway.child.kill('SIGKILL');
      await gateway.exited;
    },
    async stop() {
      for (const gateway of gateways) {
        if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGKILL');
      }
      await Promise.all(gateways.map((gateway) => gateway.exited));
      await client.close();
      await redis.stop();
    },
  };
}

/** A Scale-plan owner with one API key and one chatbot, made through the cluster's service layer. */
export async function scaleOwnerWithBot(services: Services, name: string) {
  const owner = await services.accounts.create(`${name.toLowerCase().replace(/\W+/g, '-')}@example.com`, 'scale');
  const { key } = await services.apiKeys.create(owner.id, 'load');
  const bot = await services.chatbots.create(owner.id, { name });
  return { owner, key, bot };
}

/** What one chat call came to: its HTTP status and reply, or the network error (a killed gateway). */
export type ChatResult = { status: number; body: any } | { error: string };

/** POST /api/v1/chatbots/{id}/chat on one gateway. */
export async function chatCall(
  gateway: GatewayProcess,
  key: string,
  chatbotId: string,
  sessionId: string,
  message: string,
): Promise<ChatResult> {
  try {
    const response = await fetch(`${gateway.baseUrl}/api/v1/chatbots/${chatbotId}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message, session_id: sessionId }),
    });
    return { status: response.status, body: await response.json() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}
