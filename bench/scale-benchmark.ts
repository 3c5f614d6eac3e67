/**
 * The scale benchmark: chat throughput with 1, 2 and 3 gateway processes on one redis-server, each
 * request for a conversation drawn at random (no stickiness, so a conversation's turns move between
 * processes and take its lease in turn), with an instant LLM inside each gateway. The load comes from
 * one autocannon worker thread per gateway, on the same machine. Then what the lease costs a
 * conversation that moves: sequential turns always on one gateway against turns alternating between
 * two, and two messages of one conversation arriving at once on one gateway against on two. Then the
 * same curve on a Redis Cluster of 3 masters with a replica each, over three chatbots whose keys are
 * on three different masters (the single server's curve, over the same three chatbots, is the same
 * run's baseline).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { createServices } from '../src/services.ts';
import { connectRedis, sendRawCommand } from '../src/redis/redis-client.ts';
import type { Services } from '../src/services.ts';
import { scaleOwnerWithBot } from '../test/support/scale-owner.ts';
import { masterIndexOfSlot, startRedisCluster } from '../test/support/redis-cluster.ts';
import { startRedis } from '../test/support/redis-server.ts';
import { describeMachine, durationSeconds, millis, percentiles } from './bench-support.ts';
import { chatBody, FAKE_REPLY, replyBody, SESSIONS } from './chat-request.ts';
import { TARGETS_ENV, type ScaleTarget } from './scale-request.ts';

const CONNECTIONS = 48;
const DEFAULT_DURATION_S = 10;
const CHILD = fileURLToPath(new URL('./scale-gateway-child.ts', import.meta.url));
const SETUP_REQUEST = fileURLToPath(new URL('./scale-request.ts', import.meta.url));
const VERIFY_BODY = fileURLToPath(new URL('./chat-verify.ts', import.meta.url));
/** Conversations and turns of the lease measurements. */
const MOVING_SESSIONS = 200;
const MOVING_TURNS = 4;

interface Gateway {
  child: ChildProcess;
  url: string;
}

interface Throughput {
  processes: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

export async function run(): Promise<number> {
  const duration = durationSeconds(process.env['BENCH_DURATION'], DEFAULT_DURATION_S);
  const machine = await describeMachine();
  console.log(
    `scale benchmark: POST /api/v1/chatbots/{id}/chat, instant LLM, ${SESSIONS} sessions drawn at random, ` +
      `${CONNECTIONS} connections split over the gateways, ${duration} s per run`,
  );
  console.log(`machine: ${machine}`);
  const redis = await startRedis();
  const client = await connectRedis({ url: redis.url }, createLogger('silent'));
  let curve: Throughput[];
  let moving: Awaited<ReturnType<typeof leaseCost>>;
  try {
    const services = createServices(client, loadConfig({ REDIS_URL: redis.url }), systemClock, createLogger('silent'));
    // Three chatbots, as on the cluster below, so that both curves do the same work.
    const targets = await Promise.all([0, 1, 2].map((i) => scaleTarget(services, `Scale Bench ${i}`)));
    curve = await throughputCurve(redis.url, targets, duration);
    moving = await withGateways(redis.url, 2, (gateways) => leaseCost(gateways, targets[0]!));
  } finally {
    await client.close();
    await redis.stop();
  }
  const cluster = await startRedisCluster();
  const clusterClient = await connectRedis({ cluster: cluster.urls }, createLogger('silent'));
  let clusterCurve: Throughput[];
  try {
    const seeds = cluster.urls.join(',');
    const services = createServices(
      clusterClient,
      loadConfig({ REDIS_URL: seeds }),
      systemClock,
      createLogger('silent'),
    );
    const keySlot = (key: string) => sendRawCommand<number>(clusterClient, ['CLUSTER', 'KEYSLOT', key]);
    const targets = await targetsOnEveryMaster(services, await cluster.masters(), keySlot);
    clusterCurve = await throughputCurve(seeds, targets, duration);
  } finally {
    await clusterClient.close();
    await cluster.stop();
  }
  report(curve, moving, clusterCurve, machine);
  return 0;
}

/** A Scale-plan owner's chatbot as the load addresses it. */
async function scaleTarget(services: Services, name: string): Promise<ScaleTarget & { chatbotId: string }> {
  const { key, bot } = await scaleOwnerWithBot(services, name);
  return { path: `/api/v1/chatbots/${bot.id}/chat`, authorization: `Bearer ${key}`, chatbotId: bot.id };
}

/** Chatbots (each of its own owner) until one has its keys on each master. */
async function targetsOnEveryMaster(
  services: Services,
  masters: Array<{ slots: Array<[number, number]> }>,
  keySlot: (key: string) => Promise<number>,
): Promise<ScaleTarget[]> {
  const byMaster = new Map<number, ScaleTarget>();
  for (let i = 0; byMaster.size < masters.length; i += 1) {
    if (i === 100) throw new Error('no chatbot landed on some master after 100 tries');
    const target = await scaleTarget(services, `Scale Cluster ${i}`);
    const slot = await keySlot(`{b:${target.chatbotId}}`);
    const master = masterIndexOfSlot(masters, slot);
    if (!byMaster.has(master)) byMaster.set(master, target);
  }
  return [...byMaster.values()];
}

async function throughputCurve(redisUrl: string, targets: ScaleTarget[], duration: number): Promise<Throughput[]> {
  process.env[TARGETS_ENV] = JSON.stringify(targets.map(({ path, authorization }) => ({ path, authorization })));
  const curve: Throughput[] = [];
  for (const processes of [1, 2, 3]) {
    curve.push(await withGateways(redisUrl, processes, (gateways) => throughput(gateways, targets, duration)));
  }
  return curve;
}

async function withGateways<T>(redisUrl: string, count: number, use: (gateways: Gateway[]) => Promise<T>): Promise<T> {
  const gateways = await Promise.all(Array.from({ length: count }, () => startGateway(redisUrl)));
  try {
    return await use(gateways);
  } finally {
    await Promise.all(gateways.map(stopGateway));
  }
}

async function startGateway(redisUrl: string): Promise<Gateway> {
  const child = spawn(process.execPath, [CHILD], {
    env: { PATH: process.env['PATH'] ?? '', REDIS_URL: redisUrl },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const first = await lines[Symbol.asyncIterator]().next();
  lines.close();
  if (first.done) throw new Error('a gateway exited before it listened');
  const { port } = JSON.parse(first.value) as { port: number };
  return { child, url: `http://127.0.0.1:${port}` };
}

function stopGateway(gateway: Gateway): Promise<void> {
  return new Promise((resolve) => {
    gateway.child.once('exit', () => resolve());
    gateway.child.kill('SIGTERM');
  });
}

/** Every gateway under load at once, each from its own autocannon worker. */
async function throughput(gateways: Gateway[], targets: ScaleTarget[], duration: number): Promise<Throughput> {
  for (const gateway of gateways) for (const target of targets) await chat(gateway, target, 'api-scale-check');
  const results = await Promise.all(
    gateways.map((gateway) =>
      autocannon({
        url: `${gateway.url}${targets[0]!.path}`,
        method: 'POST',
        headers: { authorization: targets[0]!.authorization, 'content-type': 'application/json' },
        body: chatBody(0),
        requests: [{ setupRequest: SETUP_REQUEST }],
        verifyBody: VERIFY_BODY,
        connections: Math.floor(CONNECTIONS / gateways.length),
        duration,
        workers: 1,
      }),
    ),
  );
  for (const result of results) {
    if (result.non2xx !== 0 || result.errors !== 0 || result.timeouts !== 0 || result.mismatches !== 0) {
      throw new Error(
        `unexpected responses on ${gateways.length} gateways: ${result.non2xx} non-2xx, ${result.errors} errors ` +
          `(${result.timeouts} of them timeouts), ${result.mismatches} other bodies`,
      );
    }
  }
  const total = results.reduce((sum, result) => sum + result.requests.average, 0);
  const weighted = (pick: (r: autocannon.Result) => number) =>
    results.reduce((sum, result) => sum + pick(result) * result.requests.average, 0) / total;
  return {
    processes: gateways.length,
    reqPerSec: total,
    p50Ms: weighted((result) => result.latency.p50),
    p99Ms: Math.max(...results.map((result) => result.latency.p99)),
  };
}

/** Latencies of a conversation that stays on one gateway against one that moves between two. */
async function leaseCost(gateways: Gateway[], target: ScaleTarget) {
  const [a, b] = gateways as [Gateway, Gateway];
  const sequential = async (pick: (turn: number) => Gateway, tag: string) => {
    const latencies: number[] = [];
    for (let s = 0; s < MOVING_SESSIONS; s += 1) {
      for (let turn = 0; turn < MOVING_TURNS; turn += 1) {
        const started = performance.now();
        await chat(pick(turn), target, `api-${tag}-${s}`);
        latencies.push(performance.now() - started);
      }
    }
    return percentiles(latencies);
  };
  const pairs = async (second: Gateway, tag: string) => {
    const latencies: number[] = [];
    for (let s = 0; s < MOVING_SESSIONS; s += 1) {
      const started = performance.now();
      await Promise.all([chat(a, target, `api-${tag}-${s}`), chat(second, target, `api-${tag}-${s}`)]);
      latencies.push(performance.now() - started);
    }
    return percentiles(latencies);
  };
  return {
    sticky: await sequential(() => a, 'sticky'),
    alternating: await sequential((turn) => (turn % 2 === 0 ? a : b), 'moving'),
    pairOnOne: await pairs(a, 'pair-one'),
    pairOnTwo: await pairs(b, 'pair-two'),
  };
}

async function chat(gateway: Gateway, target: ScaleTarget, sessionId: string) {
  const response = await fetch(`${gateway.url}${target.path}`, {
    method: 'POST',
    headers: { authorization: target.authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'What are your opening hours?', session_id: sessionId }),
  });
  const text = await response.text();
  if (response.status !== 200 || text !== replyBody(FAKE_REPLY))
    throw new Error(`chat answered ${response.status} ${text}`);
}

function report(
  curve: Throughput[],
  moving: Awaited<ReturnType<typeof leaseCost>>,
  clusterCurve: Throughput[],
  machine: string,
): void {
  const base = curve[0]!.reqPerSec;
  console.log('');
  console.log('one redis-server:');
  console.log('processes       req/s   vs 1 process   p50 ms   p99 ms');
  for (const point of curve) {
    console.log(
      `${String(point.processes).padEnd(9)}${point.reqPerSec.toFixed(0).padStart(11)}` +
        `${(point.reqPerSec / base).toFixed(2).padStart(15)}${millis(point.p50Ms).padStart(9)}${millis(point.p99Ms).padStart(9)}`,
    );
  }
  console.log('');
  console.log('Redis Cluster, 3 masters with a replica each (baseline: the same number of processes on one server):');
  console.log('processes       req/s   vs one server   p50 ms   p99 ms');
  clusterCurve.forEach((point, i) => {
    console.log(
      `${String(point.processes).padEnd(9)}${point.reqPerSec.toFixed(0).padStart(11)}` +
        `${(point.reqPerSec / curve[i]!.reqPerSec).toFixed(2).padStart(16)}${millis(point.p50Ms).padStart(9)}` +
        `${millis(point.p99Ms).padStart(9)}`,
    );
  });
  const ms = (value: number) => value.toFixed(1);
  console.log('');
  console.log(`a conversation's turns, one after another (${MOVING_SESSIONS} conversations x ${MOVING_TURNS} turns):`);
  console.log(`  always on one gateway:        p50 ${ms(moving.sticky.p50)} ms, p99 ${ms(moving.sticky.p99)} ms`);
  console.log(
    `  alternating between two:      p50 ${ms(moving.alternating.p50)} ms, p99 ${ms(moving.alternating.p99)} ms`,
  );
  console.log(`two messages of one conversation at once (${MOVING_SESSIONS} pairs, time until both are answered):`);
  console.log(
    `  both on one gateway (queued in its actor):  p50 ${ms(moving.pairOnOne.p50)} ms, p99 ${ms(moving.pairOnOne.p99)} ms`,
  );
  console.log(
    `  on two gateways (the second waits for the lease): p50 ${ms(moving.pairOnTwo.p50)} ms, p99 ${ms(moving.pairOnTwo.p99)} ms`,
  );
  console.log('');
  console.log(`(the machine has the cores it reports: ${machine}; gateways, Redis and the load share them)`);
}
