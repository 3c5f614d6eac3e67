/**
 * The chat benchmark: `POST /api/v1/chatbots/{id}/chat` through the whole gateway (the key check and
 * rate-limit script, the chatbot read, the monthly quota, the conversation actor with its turn
 * scripts) with an LLM that answers instantly in-process, so the figures are the gateway's own cost.
 * The load is spread over 1,000 conversations. Measured against a bare restify POST route that
 * reads a JSON body, under the same load; then the gateway again at half its measured peak rate,
 * for the latency a gateway sees when it is busy but not saturated (and the bare route at that rate,
 * for the tail the machine and the load generator make alone); and the Redis round trips each chat
 * costs.
 */

import { randomUUID } from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import { createHistogram, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import getRawBody from 'raw-body';
import { createClient } from 'redis';
import restify, { type Request, type Response } from 'restify';
import { startApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { closeGracefully, listen } from '../src/http/http-server.ts';
import type { LlmProvider, LlmReply } from '../src/llm/llm-provider.ts';
import type { LlmProviders } from '../src/llm/llm-providers.ts';
import { createLogger } from '../src/logger.ts';
import { commandCalls, commandCallsBetween } from '../test/support/commands-executed.ts';
import { startRedis } from '../test/support/redis-server.ts';
import { describeMachine, durationSeconds, millis } from './bench-support.ts';
import { BASELINE_REPLY, chatBody, FAKE_REPLY, replyBody, SESSIONS } from './chat-request.ts';
import { pacedLoad } from './paced-load.ts';

const HOST = '127.0.0.1';
const CONNECTIONS = 64;
const DEFAULT_DURATION_S = 15;
/** Seconds each paced run spends at its rate before it is measured (see paced-load.ts). */
const WARMUP_S = 1;
/** The module autocannon's worker loads to give each request the next session's body. */
const SETUP_REQUEST = fileURLToPath(new URL('./chat-request.ts', import.meta.url));
/** The module autocannon's worker loads to check each response body. */
const VERIFY_BODY = fileURLToPath(new URL('./chat-verify.ts', import.meta.url));
/** High enough never to refuse, so every limit still runs its script on every request. */
const UNLIMITED = '100000000';

// Issue 25's targets.
const TARGET_RATIO = 0.2;
const TARGET_HALF_RATE_P99_MS = 20;
const TARGET_COMMANDS = 30;
/** Redis commands slower than this (µs) are kept in its SLOWLOG during the half-rate run. */
const SLOWLOG_MICROS = 1000;

/** One load run's figures. */
interface Measurement {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  responses: number;
  /**
   * A paced run's warm-up p99 (left out of the figures above), and its load generator's share: p99 of
   * how late it sent, and of its wait for a free connection (ms).
   */
  paced?: { warmupP99Ms: number; sentLateP99Ms: number; connectionWaitP99Ms: number };
}

/** What Redis did for the chats of the half-rate run. */
interface RedisUse {
  chats: number;
  /** Requests the gateway's Redis clients sent, by command (client-side count). */
  roundTrips: Map<string, number>;
  /** Commands Redis executed, by command, script-internal ones included (INFO commandstats). */
  executed: Map<string, number>;
  /** Of the chats, those recorded as unanswered (a process drops recordings beyond 1,000 waiting). */
  unanswered: number;
}

/** Where the half-rate run's time went, besides the requests themselves. */
interface TailCauses {
  /** The gateway process's event-loop delay (ms): p50, p99 and max. */
  loopDelay: { p50: number; p99: number; max: number };
  /**
   * The chats' latency inside the gateway (ms), from the request's headers parsed to the response
   * handed to the socket: what is left of the load generator's figure is waiting to be read and
   * written, and the load generator's own scheduling.
   */
  serverSide: { p50: number; p99: number; max: number };
  /** Garbage collection pauses in the gateway process: how many, their total and longest (ms). */
  gc: { count: number; totalMs: number; maxMs: number };
  /** Commands Redis logged as slower than SLOWLOG_MICROS: how many, and by command (scripts by SHA1 prefix). */
  slow: { count: number; byCommand: string };
  /** The gateway's Redis round trips (ms), from a command's send to its reply's handling. */
  roundTrip: { p50: number; p99: number; max: number };
}

interface GatewayFigures {
  full: Measurement;
  halfRate: number;
  half: Measurement;
  redis: RedisUse;
  causes: TailCauses;
  /** The same half-rate load on a chatbot whose source answers the question; `unanswered`: its turns recorded. */
  grounded: {
    /** Full load on it, after the half-rate run (its ratio to the baseline is printed beside the main one). */
    full: Measurement;
    half: Measurement;
    executed: Map<string, number>;
    chats: number;
    unanswered: number;
  };
}

/** Thrown when a target answered anything but the expected 200; the message says what it answered. */
class UnexpectedResponses extends Error {
  override name = 'UnexpectedResponses';
}

export async function run(): Promise<number> {
  const duration = durationSeconds(process.env['BENCH_DURATION'], DEFAULT_DURATION_S);
  const machine = await describeMachine();
  console.log(
    `chat benchmark: POST /api/v1/chatbots/{id}/chat, instant in-process LLM, ${SESSIONS} sessions, ` +
      `${CONNECTIONS} connections, ${duration} s per run, load generated from a worker thread`,
  );
  console.log(`machine: ${machine}`);

  let baseline: Measurement;
  let gateway: GatewayFigures;
  /** The bare route at the gateway's half rate: the tail of this machine and load generator alone. */
  let baselineHalf: Measurement;
  try {
    baseline = await withBaseline((url) => measure('baseline', url, {}, duration));
    gateway = await measureGateway(duration);
    const { halfRate } = gateway;
    baselineHalf = await withBaseline((url) =>
      measureAtRate('baseline at half rate', url, {}, duration, halfRate, BASELINE_REPLY),
    );
  } catch (error) {
    if (!(error instanceof UnexpectedResponses)) throw error;
    console.error(`bench: ${error.message}`);
    return 1;
  }
  printReport(baseline, baselineHalf, gateway, duration, machine);
  return 0;
}

/** The figures as a table, each with its target, and one markdown row for the README. */
function printReport(
  baseline: Measurement,
  baselineHalf: Measurement,
  gateway: GatewayFigures,
  duration: number,
  machine: string,
): void {
  const ratio = gateway.full.reqPerSec / baseline.reqPerSec;
  const { chats, roundTrips, executed } = gateway.redis;
  const tripsPerChat = sum(roundTrips) / chats;
  const executedPerChat = sum(executed) / chats;

  console.log('');
  console.log(row('target', 'req/s', 'p50 ms', 'p99 ms', 'responses'));
  console.log(row('baseline (bare restify POST)', ...figures(baseline)));
  console.log(row('gateway, full load', ...figures(gateway.full)));
  console.log(row(`gateway at ${gateway.halfRate} req/s (half)`, ...figures(gateway.half)));
  console.log(row(`baseline at ${gateway.halfRate} req/s`, ...figures(baselineHalf)));
  console.log(
    `ratio gateway/baseline: ${ratio.toFixed(2)} (target ≥ ${TARGET_RATIO}: ${verdict(ratio >= TARGET_RATIO)})`,
  );
  console.log(
    `p99 at half the peak rate: ${gateway.half.p99Ms.toFixed(1)} ms ` +
      `(target ≤ ${TARGET_HALF_RATE_P99_MS} ms: ${verdict(gateway.half.p99Ms <= TARGET_HALF_RATE_P99_MS)})`,
  );
  console.log(`Redis round trips per chat: ${tripsPerChat.toFixed(2)}: ${perChat(roundTrips, chats)}`);
  console.log(
    `  (requests the gateway sent to Redis over the ${chats} chats of the half-rate run, counted client-side on ` +
      "node-redis's diagnostics channel: a Lua script is one round trip whatever it runs inside Redis, and a read " +
      'answered by the client-side cache is none)',
  );
  console.log(
    `Redis commands executed per chat (the chatbot has no sources: ${gateway.redis.unanswered} of its ${chats} ` +
      `turns recorded as unanswered): ${executedPerChat.toFixed(2)} ` +
      `(target ≤ ${TARGET_COMMANDS}: ${verdict(executedPerChat <= TARGET_COMMANDS)}): ${perChat(executed, chats)}`,
  );
  console.log(
    '  (INFO commandstats delta over the same run: Redis 7 counts the commands a script calls as well as the ' +
      'script, so this is work inside Redis, not round trips)',
  );
  const grounded = gateway.grounded;
  const groundedPerChat = sum(grounded.executed) / grounded.chats;
  console.log(
    `grounded chatbot (a source answers the question, so no turn is recorded as unanswered: ` +
      `${grounded.unanswered} of its ${grounded.chats} turns recorded as unanswered), same half-rate load: ` +
      `${grounded.half.reqPerSec.toFixed(0)} req/s, p50 ${millis(grounded.half.p50Ms)} ms, ` +
      `p99 ${grounded.half.p99Ms.toFixed(1)} ms; Redis commands executed per chat: ${groundedPerChat.toFixed(2)} ` +
      `(target ≤ ${TARGET_COMMANDS}: ${verdict(groundedPerChat <= TARGET_COMMANDS)}): ` +
      perChat(grounded.executed, grounded.chats),
  );
  console.log(
    `grounded chatbot at full load: ${grounded.full.reqPerSec.toFixed(0)} req/s, p50 ${millis(grounded.full.p50Ms)} ms, ` +
      `p99 ${millis(grounded.full.p99Ms)} ms, ratio ${(grounded.full.reqPerSec / baseline.reqPerSec).toFixed(2)} ` +
      '(the main ratio is the sourceless chatbot, every turn of which also records an unanswered question)',
  );
  const { loopDelay, serverSide, gc, slow, roundTrip } = gateway.causes;
  console.log(
    `half-rate run, where the tail comes from: inside the gateway p50 ${serverSide.p50.toFixed(1)} ms, ` +
      `p99 ${serverSide.p99.toFixed(1)} ms, max ${serverSide.max.toFixed(1)} ms; ` +
      `the bare restify route at the same rate p99 ${baselineHalf.p99Ms.toFixed(1)} ms; ` +
      `event-loop delay p50 ${loopDelay.p50.toFixed(1)} ms, ` +
      `p99 ${loopDelay.p99.toFixed(1)} ms, max ${loopDelay.max.toFixed(1)} ms; ` +
      `GC ${gc.count} pauses, ${gc.totalMs.toFixed(0)} ms in all, longest ${gc.maxMs.toFixed(1)} ms; ` +
      `Redis round trips p50 ${roundTrip.p50.toFixed(2)} ms, p99 ${roundTrip.p99.toFixed(1)} ms, ` +
      `max ${roundTrip.max.toFixed(1)} ms; ` +
      `Redis SLOWLOG (> ${SLOWLOG_MICROS} µs): ${slow.count} commands${slow.count > 0 ? `: ${slow.byCommand}` : ''}; ` +
      `the first ${WARMUP_S} s of each paced run is a warm-up left out of every figure (this run's: p99 ` +
      `${gateway.half.paced!.warmupP99Ms.toFixed(1)} ms; the bare route's: ` +
      `${baselineHalf.paced!.warmupP99Ms.toFixed(1)} ms); ` +
      `the load generator sent p99 ${generatorFigures(gateway.half)} ` +
      `(the bare route at the same rate: ${generatorFigures(baselineHalf)})`,
  );
  console.log(
    '(latencies in whole milliseconds as autocannon records them: 2 means 2 to 3 ms; the half-rate run is ' +
      'open-loop: requests leave evenly spaced from a worker thread and each latency counts from when its ' +
      `request was due, after a ${WARMUP_S} s warm-up at the same rate)`,
  );
  console.log('');
  console.log('README row (| benchmark | gateway req/s | p50 ms | p99 ms | baseline req/s | ratio | machine |):');
  const cells = [
    `\`chat\`: POST /api/v1/chatbots/{id}/chat, instant fake LLM, ${SESSIONS} sessions, ${CONNECTIONS} connections, ` +
      `${duration} s; p99 ${gateway.half.p99Ms.toFixed(1)} ms at ${gateway.halfRate} req/s (half the peak); ` +
      `${tripsPerChat.toFixed(2)} Redis round trips per chat; baseline: bare restify POST route`,
    gateway.full.reqPerSec.toFixed(0),
    millis(gateway.full.p50Ms),
    millis(gateway.full.p99Ms),
    baseline.reqPerSec.toFixed(0),
    ratio.toFixed(2),
    machine,
  ];
  console.log(`| ${cells.join(' | ')} |`);
}

/**
 * A bare restify server with one async POST route that reads a JSON body, as the chat route does,
 * while `load` runs against its URL.
 */
async function withBaseline(load: (url: string) => Promise<Measurement>): Promise<Measurement> {
  const server = restify.createServer();
  server.post('/api/v1/chatbots/:chatbot_id/chat', async (req: Request, res: Response) => {
    const text = await getRawBody(req, { limit: 64 * 1024, length: req.headers['content-length'], encoding: 'utf-8' });
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body.message !== 'string') throw new Error('no message');
    res.send(200, { response: BASELINE_REPLY });
  });
  const port = await listen(server, 0, HOST);
  try {
    const url = `http://${HOST}:${port}/api/v1/chatbots/${randomUUID()}/chat`;
    await expectReply('baseline', url, {}, BASELINE_REPLY);
    return await load(url);
  } finally {
    await closeGracefully(server, 1000);
  }
}

/**
 * The gateway over its own redis-server, with a Scale account, an API key, one chatbot and an LLM
 * that answers at once: first at full load, then at half the rate it reached.
 */
async function measureGateway(duration: number): Promise<GatewayFigures> {
  const redis = await startRedis();
  try {
    const config = loadConfig({
      REDIS_URL: redis.url,
      PORT: '0',
      HOST,
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_MINUTE: UNLIMITED,
      CONVERSATION_RATE_LIMIT: UNLIMITED,
      PLAN_QUOTAS: `free=100,scale=${UNLIMITED}`,
    });
    const llm = new InstantLlm();
    const providers: LlmProviders = { chatgpt: llm, gemini: llm, ollama: llm };
    const app = await startApp(config, createLogger(config.LOG_LEVEL), { providers, shutdownGraceMs: 1000 });
    try {
      const user = await app.services.accounts.create(`bench-${randomUUID()}@example.com`, 'scale');
      const { key } = await app.services.apiKeys.create(user.id, 'bench');
      const chatbot = await app.services.chatbots.create(user.id, { name: 'Bench Bot' });
      const url = `http://${HOST}:${app.port}/api/v1/chatbots/${chatbot.id}/chat`;
      const headers = { authorization: `Bearer ${key}` };
      await expectReply('gateway', url, headers, FAKE_REPLY);

      const full = await measure('gateway', url, headers, duration);
      const halfRate = Math.max(1, Math.round(full.reqPerSec / 2));
      // Redis use is counted over the half-rate run: the counter's own cost then touches no throughput
      // figure, and every chat of that run has ended when it returns, so none is counted half.
      const stats = createClient({ url: redis.url });
      await stats.connect();
      try {
        const counter = new RoundTripCounter();
        const chatsBefore = llm.calls;
        const recordedBefore = await recordedTurns(app, chatbot.id);
        const executedBefore = await commandCalls(stats);
        const watch = await watchTail(stats);
        counter.start();
        const half = await measureAtRate('gateway at half rate', url, headers, duration, halfRate, FAKE_REPLY, () =>
          watch.restart(),
        );
        counter.stop();
        const causes = await watch.stop();
        // Each turn of this chatbot (it has no sources) is recorded as unanswered, off the turn: those
        // recordings are counted once they are all written.
        await app.services.unansweredRecorder.settled();
        const executed = commandCallsBetween(executedBefore, await commandCalls(stats));
        // The INFO calls are this benchmark's, not the gateway's.
        executed.delete('info');
        const redisUse = {
          chats: llm.calls - chatsBefore,
          roundTrips: counter.counts,
          executed,
          unanswered: (await recordedTurns(app, chatbot.id)) - recordedBefore,
        };
        const grounded = await measureGrounded(app, user.id, headers, stats, llm, duration, halfRate);
        return { full, halfRate, half, redis: redisUse, causes, grounded };
      } finally {
        stats.destroy();
      }
    } finally {
      await app.stop();
    }
  } finally {
    await redis.stop();
  }
}

/**
 * The half-rate load again, on a chatbot with one text source that answers the benchmark's question:
 * its turns retrieve a passage above the relevance floor, so none is recorded as unanswered, as most
 * turns of a trained chatbot are not. Counts the Redis commands it executed per chat, then measures
 * it at full load.
 */
async function measureGrounded(
  app: Awaited<ReturnType<typeof startApp>>,
  userId: string,
  headers: Record<string, string>,
  stats: { info(section: string): Promise<unknown> },
  llm: InstantLlm,
  duration: number,
  rate: number,
): Promise<GatewayFigures['grounded']> {
  const chatbot = await app.services.chatbots.create(userId, { name: 'Grounded Bench Bot' });
  const source = await app.services.intake.addText(chatbot.id, GROUNDING_TEXT, 'Opening hours');
  const deadline = Date.now() + 60_000;
  while ((await app.services.sources.get(source.id)).status !== 'done') {
    if (Date.now() > deadline) throw new UnexpectedResponses('the grounded chatbot: its source was not ingested');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = `http://${HOST}:${app.port}/api/v1/chatbots/${chatbot.id}/chat`;
  await expectReply('gateway (grounded)', url, headers, FAKE_REPLY);
  await app.services.unansweredRecorder.settled();
  const recordedBefore = await recordedTurns(app, chatbot.id);
  const before = await commandCalls(stats);
  const chatsBefore = llm.calls;
  const half = await measureAtRate('gateway, grounded chatbot', url, headers, duration, rate);
  await app.services.unansweredRecorder.settled();
  const executed = commandCallsBetween(before, await commandCalls(stats));
  executed.delete('info');
  const chats = llm.calls - chatsBefore;
  const unanswered = (await recordedTurns(app, chatbot.id)) - recordedBefore;
  const full = await measure('gateway, grounded chatbot at full load', url, headers, duration);
  return { full, half, executed, chats, unanswered };
}

/** How many turns of the chatbot its unanswered inbox counts. */
async function recordedTurns(app: Awaited<ReturnType<typeof startApp>>, chatbotId: string): Promise<number> {
  const groups = await app.services.unanswered.list(chatbotId, 'open');
  return groups.reduce((total, group) => total + group.count, 0);
}

/** The grounded chatbot's one source: it answers the benchmark's question. */
const GROUNDING_TEXT =
  'Opening hours. Our opening hours are from 9:00 to 17:00, Monday to Friday. We are closed on weekends ' +
  'and public holidays.';

/** The fake LLM: answers every prompt at once with the same short text, and counts the calls. */
class InstantLlm implements LlmProvider {
  calls = 0;

  generate(): Promise<LlmReply> {
    this.calls += 1;
    return Promise.resolve({ text: FAKE_REPLY });
  }
}

/** The commands this benchmark itself sends from the gateway's process (its INFO and SLOWLOG calls). */
const benchmarkOwn = (command: string): boolean => command === 'INFO' || command === 'SLOWLOG';

/**
 * Counts the requests node-redis puts on the wire, from its `node-redis:command` tracing channel
 * (published by the client's sendCommand, so nothing in src/ changes): one per command or script,
 * whatever the script runs inside Redis, and one per MULTI/pipeline batch (its commands carry a
 * `batchMode` and are not counted again). Reads answered by the client-side cache send nothing and
 * so count nothing. Only this benchmark's INFO and SLOWLOG calls are left out; every other command in
 * the process is the gateway's.
 */
class RoundTripCounter {
  readonly counts = new Map<string, number>();

  private readonly onCommand = (message: unknown) => {
    const { command, batchMode } = message as { command: string; batchMode?: string };
    if (batchMode === undefined && !benchmarkOwn(command)) this.add(command);
  };

  private readonly onBatch = () => this.add('(batch)');

  start(): void {
    diagnosticsChannel.subscribe('tracing:node-redis:command:start', this.onCommand);
    diagnosticsChannel.subscribe('tracing:node-redis:batch:start', this.onBatch);
  }

  stop(): void {
    diagnosticsChannel.unsubscribe('tracing:node-redis:command:start', this.onCommand);
    diagnosticsChannel.unsubscribe('tracing:node-redis:batch:start', this.onBatch);
  }

  private add(command: string): void {
    this.counts.set(command, (this.counts.get(command) ?? 0) + 1);
  }
}

/**
 * Watches what can make a tail while the half-rate run goes: the chats' time inside the gateway, this
 * process's event-loop delay (the gateway runs in it; the load comes from a worker thread) and GC
 * pauses, and Redis's SLOWLOG. `restart` forgets what was seen so far (the run's warm-up).
 */
async function watchTail(stats: {
  configSet(name: string, value: string): Promise<unknown>;
  sendCommand(args: string[]): Promise<unknown>;
}): Promise<{ restart(): void; stop(): Promise<TailCauses> }> {
  await stats.configSet('slowlog-log-slower-than', String(SLOWLOG_MICROS));
  await stats.sendCommand(['SLOWLOG', 'RESET']);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const served = createHistogram();
  const started = new WeakMap<object, bigint>();
  const onStart = (message: unknown) => {
    started.set((message as { response: object }).response, process.hrtime.bigint());
  };
  const onFinish = (message: unknown) => {
    const { response } = message as { response: object };
    const at = started.get(response);
    if (at !== undefined) served.record(process.hrtime.bigint() - at);
  };
  // Every command's round trip, batches' commands included; the benchmark's own left out.
  const roundTrips = createHistogram();
  const sentAt = new WeakMap<object, bigint>();
  const onCommandStart = (message: unknown) => {
    const { command } = message as { command: string };
    if (!benchmarkOwn(command)) sentAt.set(message as object, process.hrtime.bigint());
  };
  const onCommandEnd = (message: unknown) => {
    const at = sentAt.get(message as object);
    if (at !== undefined) roundTrips.record(process.hrtime.bigint() - at);
  };
  diagnosticsChannel.subscribe('tracing:node-redis:command:start', onCommandStart);
  diagnosticsChannel.subscribe('tracing:node-redis:command:asyncEnd', onCommandEnd);
  diagnosticsChannel.subscribe('http.server.request.start', onStart);
  diagnosticsChannel.subscribe('http.server.response.finish', onFinish);
  const pauses: number[] = [];
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push(entry.duration);
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  let slowlogReset: Promise<unknown> = Promise.resolve();
  return {
    restart() {
      loop.reset();
      served.reset();
      roundTrips.reset();
      pauses.length = 0;
      slowlogReset = stats.sendCommand(['SLOWLOG', 'RESET']);
    },
    async stop() {
      await slowlogReset;
      loop.disable();
      gcObserver.disconnect();
      diagnosticsChannel.unsubscribe('http.server.request.start', onStart);
      diagnosticsChannel.unsubscribe('http.server.response.finish', onFinish);
      diagnosticsChannel.unsubscribe('tracing:node-redis:command:start', onCommandStart);
      diagnosticsChannel.unsubscribe('tracing:node-redis:command:asyncEnd', onCommandEnd);
      const entries = (await stats.sendCommand(['SLOWLOG', 'GET', '1000'])) as Array<
        [number, number, number, string[]]
      >;
      const byCommand = new Map<string, { count: number; max: number }>();
      for (const [, , micros, argv] of entries) {
        const name = argv[0]!.toUpperCase() === 'EVALSHA' ? `EVALSHA ${argv[1]!.slice(0, 8)}` : argv[0]!.toUpperCase();
        const seen = byCommand.get(name) ?? { count: 0, max: 0 };
        byCommand.set(name, { count: seen.count + 1, max: Math.max(seen.max, micros) });
      }
      const ms = (nanos: number) => nanos / 1e6;
      return {
        loopDelay: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
        serverSide: { p50: ms(served.percentile(50)), p99: ms(served.percentile(99)), max: ms(served.max) },
        roundTrip: { p50: ms(roundTrips.percentile(50)), p99: ms(roundTrips.percentile(99)), max: ms(roundTrips.max) },
        gc: {
          count: pauses.length,
          totalMs: pauses.reduce((a, b) => a + b, 0),
          maxMs: pauses.length > 0 ? Math.max(...pauses) : 0,
        },
        slow: {
          count: entries.length,
          byCommand: [...byCommand]
            .sort((a, b) => b[1].count - a[1].count)
            .map(([name, { count, max }]) => `${name} ${count} (longest ${(max / 1000).toFixed(1)} ms)`)
            .join(', '),
        },
      };
    },
  };
}

/**
 * One chat before the load, so a broken setup fails with a clear message, not a flood of errors, and
 * so each target is known to give its own reply (the load's check accepts either target's).
 */
async function expectReply(target: string, url: string, headers: Record<string, string>, reply: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'Hello?', session_id: 'api-bench-check' }),
  });
  const text = await response.text();
  if (response.status !== 200 || text !== replyBody(reply)) {
    throw new UnexpectedResponses(
      `${target} answered ${response.status} ${text} before the load; expected 200 ${replyBody(reply)}`,
    );
  }
}

/**
 * Runs autocannon against one target, each request for the next of SESSIONS conversations (see
 * chat-request.ts). The load comes from a worker thread, so the client does not share the event loop
 * of the server it measures. Every response must be a 200 with a reply body (chat-verify.ts). Returns
 * once the requests it left in flight have ended.
 */
async function measure(
  target: string,
  url: string,
  headers: Record<string, string>,
  duration: number,
): Promise<Measurement> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: chatBody(0),
    requests: [{ setupRequest: SETUP_REQUEST }],
    verifyBody: VERIFY_BODY,
    connections: CONNECTIONS,
    duration,
    workers: 1,
  });
  // The requests autocannon left in flight end before anything else is measured or counted.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const statuses = Object.keys(result.statusCodeStats);
  const all200 = statuses.length === 1 && statuses[0] === '200';
  if (result.non2xx !== 0 || result.errors !== 0 || result.timeouts !== 0 || result.mismatches !== 0 || !all200) {
    const counts = Object.entries(result.statusCodeStats)
      .map(([status, { count }]) => `${status}: ${count}`)
      .join(', ');
    throw new UnexpectedResponses(
      `${target}: expected every response to be 200 with its reply, got ${result.non2xx} non-2xx ` +
        `(status counts: ${counts || 'none'}), ${result.mismatches} other bodies, ${result.errors} errors, ` +
        `${result.timeouts} timeouts`,
    );
  }
  return {
    reqPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    responses: result['2xx'],
  };
}

/**
 * The gateway at a fixed rate, open-loop (see paced-load.ts for why not autocannon's overallRate),
 * over the same sessions and connections, after WARMUP_S at that rate (`onWarmedUp` is called when
 * the measured part starts). Its latencies are exact; they are printed truncated to whole
 * milliseconds like autocannon's, so the table reads the same for every row.
 */
async function measureAtRate(
  target: string,
  url: string,
  headers: Record<string, string>,
  duration: number,
  rate: number,
  reply = FAKE_REPLY,
  onWarmedUp?: () => void,
): Promise<Measurement> {
  const result = await pacedLoad(
    { url, headers, rate, duration, warmup: WARMUP_S, connections: CONNECTIONS, expectedBody: replyBody(reply) },
    onWarmedUp,
  );
  const failures = Object.entries(result.failures);
  if (failures.length > 0) {
    const counts = failures.map(([outcome, count]) => `${outcome}: ${count}`).join(', ');
    throw new UnexpectedResponses(`${target}: expected every response to be 200 with its reply, got ${counts}`);
  }
  return {
    reqPerSec: result.reqPerSec,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    responses: result.responses,
    paced: {
      warmupP99Ms: result.warmupP99Ms,
      sentLateP99Ms: result.sentLateP99Ms,
      connectionWaitP99Ms: result.connectionWaitP99Ms,
    },
  };
}

function sum(counts: Map<string, number>): number {
  let total = 0;
  for (const count of counts.values()) total += count;
  return total;
}

/** `EVALSHA 4.00, GET 0.01`: each command's count per chat, largest first. */
function perChat(counts: Map<string, number>, chats: number): string {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([name, count]) => `${name} ${(count / chats).toFixed(2)}`)
    .join(', ');
}

/** `1.2 ms late, waited 3.4 ms for a free connection`: a paced run's load generator figures. */
function generatorFigures(m: Measurement): string {
  const { sentLateP99Ms, connectionWaitP99Ms } = m.paced!;
  return `${sentLateP99Ms.toFixed(1)} ms late, waited ${connectionWaitP99Ms.toFixed(1)} ms for a free connection`;
}

function verdict(met: boolean): string {
  return met ? 'met' : 'not met';
}

function figures(m: Measurement): [string, string, string, string] {
  return [m.reqPerSec.toFixed(1), millis(m.p50Ms), millis(m.p99Ms), String(m.responses)];
}

function row(...cells: string[]): string {
  const [label = '', ...rest] = cells;
  return label.padEnd(34) + rest.map((cell) => cell.padStart(11)).join('');
}
