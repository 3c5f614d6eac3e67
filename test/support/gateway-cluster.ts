import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createServices, type Services } from '../../src/services.ts';
import { scaleOwnerWithBot } from './scale-owner.ts';
import { connectRedis, type RedisClient } from '../../src/redis/redis-client.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { spawnGateway, type GatewayProcess } from './gateway-process.ts';
import { startRedisCluster, type TestRedisCluster } from './redis-cluster.ts';
import { startRedis } from './redis-server.ts';

/** Where the gateways' data lives: one redis-server, or a Redis Cluster of 3 masters with a replica each. */
export type TestBedRedis = 'server' | 'cluster';
/** Both, for the load tests that run on each. */
export const TEST_BEDS: readonly TestBedRedis[] = ['server', 'cluster'];

/** How a test's name says which bed it ran on. */
export function bedName(bed: TestBedRedis): string {
  return bed === 'cluster' ? 'Redis Cluster, 3 masters and 3 replicas' : 'one redis-server';
}

/** Several gateway processes on one Redis, and the service layer over the same Redis. */
export interface GatewayCluster {
  /** The gateways' REDIS_URL (a cluster's seed nodes, separated by commas). */
  redis: { url: string };
  /** The Redis Cluster, when the gateways run on one. */
  redisCluster: TestRedisCluster | undefined;
  gateways: GatewayProcess[];
  /** The test's own view of Redis, through the gateway's service layer. */
  services: Services;
  /** A gateway chosen at random among those still running (as a load balancer without stickiness). */
  pick(): GatewayProcess;
  /** SIGKILLs one gateway: no shutdown, its leases and claims simply stop being renewed. */
  kill(gateway: GatewayProcess): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `count` gateways (child processes running `node src/main.ts`) on a fresh redis-server, or on
 * a fresh 3-master, 3-replica Redis Cluster (`REDIS_URL` naming every node, `REDIS_CLUSTER=1`).
 */
export async function startGatewayCluster(
  count: number,
  env: Record<string, string>,
  bed: TestBedRedis = 'server',
): Promise<GatewayCluster> {
  const redisCluster = bed === 'cluster' ? await startRedisCluster() : undefined;
  const server = redisCluster ? undefined : await startRedis();
  const redisUrl = redisCluster ? redisCluster.urls.join(',') : server!.url;
  const fullEnv = { REDIS_URL: redisUrl, LOG_LEVEL: 'warn', ...(redisCluster && { REDIS_CLUSTER: '1' }), ...env };
  const gateways = await Promise.all(Array.from({ length: count }, () => spawnGateway(fullEnv)));
  const client: RedisClient = await connectRedis(
    redisCluster ? { cluster: redisCluster.urls } : { url: redisUrl },
    createLogger('silent'),
  );
  const services = createServices(client, loadConfig(fullEnv), systemClock, createLogger('silent'));
  const dead = new Set<GatewayProcess>();
  return {
    redis: { url: redisUrl },
    redisCluster,
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
      await (redisCluster ?? server!).stop();
    },
  };
}

/**
 * Three gateways talking to a fake OpenAI and delivering `conversation.started` and `message.received`
 * of one Scale owner's chatbot to a webhook receiver, with retries a millisecond apart; `env` adds to
 * or overrides the gateways' settings. The test sets the LLM's behaviour and the receiver's answers.
 */
export async function webhookCluster(name: string, env: Record<string, string>, bed: TestBedRedis = 'server') {
  const openai = await fakeOpenAi().start();
  const receiver = await new WebhookReceiver().start();
  const cluster = await startGatewayCluster(
    3,
    {
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      CONVERSATION_RATE_LIMIT: '1000',
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_RETRY_DELAYS: '1,1,1',
      WEBHOOK_POLL_MS: '50',
      ...env,
    },
    bed,
  );
  const { key, bot } = await scaleOwnerWithBot(cluster.services, name);
  const hook = await cluster.services.webhooks.create(bot.id, receiver.url, [
    'conversation.started',
    'message.received',
  ]);
  receiver.secrets.push(hook.secret);
  const stop = async () => {
    await cluster.stop();
    await receiver.stop();
    await openai.stop();
  };
  return { cluster, openai, receiver, key, bot, hook, stop };
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
