/**
 * The 401 benchmark (issue 18): how long the gateway takes to refuse an unknown key and a revoked
 * key, `GET /api/v1/chatbots` one request at a time over one keep-alive connection, the two kinds
 * interleaved (ABBA) so that load on the machine falls on both alike. Two cases: the same token
 * again and again (the client-side cache warm), and every token used once (a revoked key that was
 * in use until its revocation, against a never-seen unknown key). Prints p50 and p90 in µs and the
 * revoked/unknown ratio of the medians; exits 1 when a response is not the uniform 401.
 */

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { startApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { generateApiKey } from '../src/auth/api-key-token.ts';
import { startRedis } from '../test/support/redis-server.ts';
import { describeMachine } from './bench-support.ts';

const PATH = '/api/v1/chatbots';
const HOST = '127.0.0.1';
const REPEATED_PAIRS = 3000;
const FRESH_PAIRS = 600;
const WARMUP = 300;

/** One case's latencies in microseconds, by kind of key. */
interface Samples {
  unknown: number[];
  revoked: number[];
}

/** A response that is not the uniform 401. */
class UnexpectedResponse extends Error {
  override name = 'UnexpectedResponse';
}

export async function run(): Promise<number> {
  console.log(`401 benchmark: GET ${PATH}, unknown vs revoked key, sequential, interleaved`);
  console.log(`machine: ${await describeMachine()}`);
  const redis = await startRedis();
  const config = loadConfig({ REDIS_URL: redis.url, PORT: '0', HOST, LOG_LEVEL: 'silent' });
  const app = await startApp(config, createLogger(config.LOG_LEVEL), { shutdownGraceMs: 1000 });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const user = await app.services.accounts.create(`bench-${randomUUID()}@example.com`, 'scale');
    const get = (token: string) => timedGet(agent, app.port, token);
    const revoked = await revokedKeys(app, user.id, 1, get);
    const unknown = generateApiKey();
    for (let i = 0; i < WARMUP; i += 1) await get(i % 2 ? unknown : revoked[0]!);
    const repeated = await interleave(
      REPEATED_PAIRS,
      get,
      () => unknown,
      () => revoked[0]!,
    );
    const fresh = await revokedKeys(app, user.id, FRESH_PAIRS, get);
    const once = await interleave(
      FRESH_PAIRS,
      get,
      () => generateApiKey(),
      (i) => fresh[i]!,
    );
    console.log('');
    console.log(row('case', 'kind', 'samples', 'p50 µs', 'p90 µs'));
    report('same token again', repeated);
    report('each token once', once);
  } catch (error) {
    if (!(error instanceof UnexpectedResponse)) throw error;
    console.error(`bench: ${error.message}`);
    return 1;
  } finally {
    agent.destroy();
    await app.stop();
    await redis.stop();
  }
  return 0;
}

/** `count` keys of the user, each used once (so its lookup is cached) and then revoked. */
async function revokedKeys(app: App, userId: string, count: number, get: (token: string) => Promise<number>) {
  const keys: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const created = await app.services.apiKeys.create(userId, `bench ${i}`);
    await get(created.key).catch(() => undefined);
    await app.services.apiKeys.revoke(userId, created.id);
    keys.push(created.key);
  }
  return keys;
}

/** `pairs` pairs of requests, unknown and revoked in ABBA order. */
async function interleave(
  pairs: number,
  get: (token: string) => Promise<number>,
  unknown: (i: number) => string,
  revoked: (i: number) => string,
): Promise<Samples> {
  const samples: Samples = { unknown: [], revoked: [] };
  for (let i = 0; i < pairs; i += 1) {
    if (i % 2 === 0) {
      samples.unknown.push(await get(unknown(i)));
      samples.revoked.push(await get(revoked(i)));
    } else {
      samples.revoked.push(await get(revoked(i)));
      samples.unknown.push(await get(unknown(i)));
    }
  }
  return samples;
}

/** One request's time to the end of its response, in µs; throws unless it is the uniform 401. */
function timedGet(agent: http.Agent, port: number, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.get(
      { host: HOST, port, path: PATH, agent, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        res.on('end', () => {
          const micros = Number(process.hrtime.bigint() - started) / 1000;
          if (res.statusCode === 401 && body === '{"detail":"Unauthorized"}') resolve(micros);
          else reject(new UnexpectedResponse(`expected the uniform 401, got ${res.statusCode} ${body}`));
        });
      },
    );
    req.on('error', reject);
  });
}

function report(name: string, samples: Samples): void {
  const unknown = quantiles(samples.unknown);
  const revoked = quantiles(samples.revoked);
  console.log(row(name, 'unknown', String(samples.unknown.length), unknown.p50.toFixed(0), unknown.p90.toFixed(0)));
  console.log(row('', 'revoked', String(samples.revoked.length), revoked.p50.toFixed(0), revoked.p90.toFixed(0)));
  console.log(row('', 'revoked/unknown p50', '', (revoked.p50 / unknown.p50).toFixed(3), ''));
}

function quantiles(values: number[]): { p50: number; p90: number } {
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p90: at(0.9) };
}

function row(...cells: string[]): string {
  const widths = [18, 20, 8, 8, 8];
  return cells.map((cell, i) => cell.padEnd(widths[i] ?? 8)).join(' ');
}
