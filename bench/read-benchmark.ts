/**
 * The read benchmark: `GET /api/v1/chatbots` through the whole gateway (key lookup, the rate-limit
 * Lua script, the chatbot read) against a bare restify server answering a similar JSON array, both
 * under the same load. The ratio between the two is the gateway's cost per request.
 */

import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import restify, { type Request, type Response } from 'restify';
import { startApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { closeGracefully, listen } from '../src/http/http-server.ts';
import { createLogger } from '../src/logger.ts';
import { startRedis } from '../test/support/redis-server.ts';
import { describeMachine, durationSeconds } from './bench-support.ts';

const PATH = '/api/v1/chatbots';
const HOST = '127.0.0.1';
const CONNECTIONS = 32;
const DEFAULT_DURATION_S = 10;
const CHATBOT_NAMES = ['Support', 'Sales', 'Docs'];
/** High enough never to reject, so the limiter still runs its script on every request. */
const RATE_LIMIT_PER_MINUTE = '100000000';

/** One target's figures. */
interface Measurement {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  responses: number;
}

/** Thrown when a target answered anything but 200; the message says what it answered. */
class UnexpectedResponses extends Error {
  override name = 'UnexpectedResponses';
}

export async function run(): Promise<number> {
  const duration = durationSeconds(process.env['BENCH_DURATION'], DEFAULT_DURATION_S);
  const machine = await describeMachine();
  console.log(
    `read benchmark: GET ${PATH} (${CHATBOT_NAMES.length} chatbots), ${CONNECTIONS} connections, ` +
      `${duration} s per target, load generated from a worker thread`,
  );
  console.log(`machine: ${machine}`);

  let baseline: Measurement;
  let gateway: Measurement;
  try {
    baseline = await measureBaseline(duration);
    gateway = await measureGateway(duration);
  } catch (error) {
    if (!(error instanceof UnexpectedResponses)) throw error;
    console.error(`bench: ${error.message}`);
    return 1;
  }
  printReport(baseline, gateway, duration, machine);
  return 0;
}

/** The figures as a table, the ratio, and one markdown row for the README. */
function printReport(baseline: Measurement, gateway: Measurement, duration: number, machine: string): void {
  const ratio = gateway.reqPerSec / baseline.reqPerSec;

  console.log('');
  console.log(row('target', 'req/s', 'p50 ms', 'p99 ms', 'responses'));
  console.log(row('baseline (bare restify)', ...figures(baseline)));
  console.log(row('gateway (auth + limiter)', ...figures(gateway)));
  console.log(`ratio gateway/baseline: ${ratio.toFixed(2)}`);
  console.log('(latencies in whole milliseconds as autocannon records them: 2 means 2 to 3 ms)');
  console.log('');
  console.log('README row (| benchmark | gateway req/s | p50 ms | p99 ms | baseline req/s | ratio | machine |):');
  const cells = [
    `GET ${PATH}, ${CONNECTIONS} connections, ${duration} s`,
    gateway.reqPerSec.toFixed(0),
    millis(gateway.p50Ms),
    millis(gateway.p99Ms),
    baseline.reqPerSec.toFixed(0),
    ratio.toFixed(2),
    machine,
  ];
  console.log(`| ${cells.join(' | ')} |`);
}

/** A bare restify server with one async route answering a list shaped like the gateway's. */
async function measureBaseline(duration: number): Promise<Measurement> {
  const body = CHATBOT_NAMES.map((name) => ({
    id: randomUUID(),
    name,
    slug: name.toLowerCase(),
    provider: 'chatgpt',
    is_active: true,
    created_at: '2026-11-21T21:06:33.123456+00:00',
  }));
  const server = restify.createServer();
  server.get(PATH, async (_req: Request, res: Response) => {
    res.send(200, body);
  });
  const port = await listen(server, 0, HOST);
  try {
    return await measure('baseline', `http://${HOST}:${port}${PATH}`, {}, duration);
  } finally {
    await closeGracefully(server, 1000);
  }
}

/** The gateway over its own redis-server, with a Scale account, an API key and three chatbots. */
async function measureGateway(duration: number): Promise<Measurement> {
  const redis = await startRedis();
  try {
    const config = loadConfig({
      REDIS_URL: redis.url,
      PORT: '0',
      HOST,
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_MINUTE,
    });
    const app = await startApp(config, createLogger(config.LOG_LEVEL), { shutdownGraceMs: 1000 });
    try {
      const user = await app.services.accounts.create(`bench-${randomUUID()}@example.com`, 'scale');
      const { key } = await app.services.apiKeys.create(user.id, 'bench');
      for (const name of CHATBOT_NAMES) await app.services.chatbots.create(user.id, { name });
      const url = `http://${HOST}:${app.port}${PATH}`;
      const headers = { authorization: `Bearer ${key}` };
      await expectChatbotList(url, headers);
      return await measure('gateway', url, headers, duration);
    } finally {
      await app.stop();
    }
  } finally {
    await redis.stop();
  }
}

/** One request before the load, so a broken setup fails with a clear message, not a flood of 4xx. */
async function expectChatbotList(url: string, headers: Record<string, string>): Promise<void> {
  const response = await fetch(url, { headers });
  const body: unknown = await response.json();
  if (response.status !== 200 || !Array.isArray(body) || body.length !== CHATBOT_NAMES.length) {
    throw new UnexpectedResponses(
      `gateway answered ${response.status} ${JSON.stringify(body)} before the load; ` +
        `expected 200 with ${CHATBOT_NAMES.length} chatbots`,
    );
  }
}

/**
 * Runs autocannon against one target. The load comes from a worker thread, so the client does not
 * share the event loop of the server it measures. Every response must be a 200.
 */
async function measure(
  target: string,
  url: string,
  headers: Record<string, string>,
  duration: number,
): Promise<Measurement> {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration, workers: 1 });
  const statuses = Object.keys(result.statusCodeStats);
  const all200 = statuses.length === 1 && statuses[0] === '200';
  if (result.non2xx !== 0 || result.errors !== 0 || result.timeouts !== 0 || !all200) {
    const counts = Object.entries(result.statusCodeStats)
      .map(([status, { count }]) => `${status}: ${count}`)
      .join(', ');
    throw new UnexpectedResponses(
      `${target}: expected every response to be 200, got ${result.non2xx} non-2xx ` +
        `(status counts: ${counts || 'none'}), ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return {
    reqPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    responses: result['2xx'],
  };
}

function figures(m: Measurement): [string, string, string, string] {
  return [m.reqPerSec.toFixed(1), millis(m.p50Ms), millis(m.p99Ms), String(m.responses)];
}

/** autocannon records whole milliseconds, truncated: 0 means under 1 ms, 3 means 3 to 4 ms. */
function millis(value: number): string {
  return value === 0 ? '<1' : String(value);
}

function row(...cells: string[]): string {
  const [label = '', ...rest] = cells;
  return label.padEnd(26) + rest.map((cell) => cell.padStart(11)).join('');
}
