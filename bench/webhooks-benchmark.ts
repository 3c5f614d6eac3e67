/**
 * The webhooks benchmark: signed deliveries per second from the durable outbox through the webhook
 * dispatcher (claim script, webhook lookup, HMAC signature, got POST, attempt record script) to a
 * loopback receiver, against a plain got POST loop sending a body of the same size with the same
 * headers to the same receiver, both with 32 requests in flight. The ratio between the two is the
 * dispatcher's cost per delivery.
 */

import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import got from 'got';
import { dispatcherFromConfig } from '../src/actors/webhook-dispatcher.ts';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { messageReceived } from '../src/webhooks/webhook-event.ts';
import { createLogger } from '../src/logger.ts';
import { createServices, type Services } from '../src/services.ts';
import { connectRedis } from '../src/redis/redis-client.ts';
import { sign, USER_AGENT } from '../src/webhooks/webhook-sender.ts';
import { commandCalls } from '../test/support/commands-executed.ts';
import { startRedis } from '../test/support/redis-server.ts';
import { describeMachine, durationSeconds, percentiles } from './bench-support.ts';

const HOST = '127.0.0.1';
const CONCURRENCY = 32;
const DEFAULT_DURATION_S = 10;
const TARGET_RATIO = 0.6;
const TARGET_PER_SEC = 5000;
const EVENT = 'message.received';
/** A chat message of a typical length; every body is one `message.received` event carrying it. */
const CONTENT = 'Hello! I ordered a blue jacket last week and it still has not arrived. '.repeat(3).trim();
/** The outbox is filled with the baseline's rate times the duration times this, so it cannot run dry. */
const PREFILL_HEADROOM = 1.5;
const PREFILL_MIN = 5000;
/** Events emitted concurrently while filling the outbox. */
const PREFILL_BATCH = 500;
/** The receiver checks the signature of one request in this many. */
const VERIFY_EVERY = 50;
/**
 * The receiver keeps the delivery id of one request in this many; the store must show each of those
 * delivered. (Not the whole delivery log: `DeliveryStore.log` reads every delivery of the webhook at
 * once, tens of thousands here, and then drops the reads that time out.)
 */
const SAMPLE_EVERY = 10;
const RECEIVER_ROLE = 'webhooks-benchmark-receiver';
/** The module whose Lua scripts the dispatcher runs: the commands they call are not sent by the client. */
const DELIVERY_STORE = new URL('../src/store/delivery-store.ts', import.meta.url);

/** One target's figures: 2xx answered by the receiver inside the measuring window, and latencies. */
interface Measurement {
  perSec: number;
  inWindow: number;
  /** 2xx answered for this target in all, including after the window while attempts in flight finished. */
  total: number;
  p50: number;
  p99: number;
}

/** The dispatcher's measurement and what the store says about it. */
interface DispatcherFigures extends Measurement {
  prefilled: number;
  prefillSeconds: number;
  pendingAfter: number;
  /** Commands the client sent per delivery (EVALSHA as one), and all Redis executed per delivery. */
  commandsSent: number;
  commandsExecuted: number;
  verified: number;
  /** Deliveries the receiver sampled and the store showed delivered with one 200 attempt. */
  sampled: number;
}

/** What the receiver has counted since it was last reset. */
interface ReceiverStats {
  type: 'stats';
  ok: number;
  verified: number;
  badSignatures: number;
  /** Epoch milliseconds on the receiver's clock when it answered. */
  atMs: number;
}

type ToReceiver = { type: 'reset'; secret: string } | { type: 'stats' } | { type: 'sample' };
type FromReceiver =
  { type: 'listening'; port: number } | { type: 'reset' } | ReceiverStats | { type: 'sample'; deliveryIds: string[] };

/** Thrown when a run did not do what it must; the message says what happened instead. */
class BenchFailure extends Error {
  override name = 'BenchFailure';
}

export async function run(): Promise<number> {
  const duration = durationSeconds(process.env['BENCH_DURATION'], DEFAULT_DURATION_S);
  const machine = await describeMachine();
  const bodyBytes = Buffer.byteLength(JSON.stringify(sampleEvent(randomUUID())));
  console.log(
    `webhooks benchmark: signed POSTs of a ${bodyBytes}-byte ${EVENT} body, ${CONCURRENCY} in flight ` +
      `(WEBHOOK_CONCURRENCY and WEBHOOK_DESTINATION_CONCURRENCY ${CONCURRENCY}), ${duration} s per target, ` +
      `to a node:http receiver on loopback in a worker thread (200 at once, 1 signature in ${VERIFY_EVERY} verified)`,
  );
  console.log(`machine: ${machine}`);

  let baseline: Measurement;
  let dispatcher: DispatcherFigures;
  const receiver = await Receiver.start();
  try {
    baseline = await measureBaseline(receiver, duration);
    dispatcher = await measureDispatcher(receiver, duration, baseline.perSec);
  } catch (error) {
    if (!(error instanceof BenchFailure)) throw error;
    console.error(`bench: ${error.message}`);
    return 1;
  } finally {
    await receiver.stop();
  }
  printReport(baseline, dispatcher, duration, machine);
  return 0;
}

/** The figures as a table, each with its target, and one markdown row for the README. */
function printReport(baseline: Measurement, dispatcher: DispatcherFigures, duration: number, machine: string): void {
  const ratio = dispatcher.perSec / baseline.perSec;
  const delivered = dispatcher.total;

  console.log('');
  console.log(row('target', 'deliveries/s', 'p50 ms', 'p99 ms', 'in window', '2xx in all'));
  console.log(row('baseline (got.post loop)', ...figures(baseline)));
  console.log(row('dispatcher (outbox)', ...figures(dispatcher)));
  console.log(
    `ratio dispatcher/baseline: ${ratio.toFixed(2)} (target ≥ ${TARGET_RATIO}: ${verdict(ratio >= TARGET_RATIO)})`,
  );
  console.log(
    `dispatcher deliveries/s: ${dispatcher.perSec.toFixed(0)} ` +
      `(target ≥ ${TARGET_PER_SEC}: ${verdict(dispatcher.perSec >= TARGET_PER_SEC)})`,
  );
  console.log(
    `Redis commands per delivery: ${dispatcher.commandsSent.toFixed(2)} sent (EVALSHA counts as one), ` +
      `${dispatcher.commandsExecuted.toFixed(2)} executed counting those the scripts call (INFO commandstats)`,
  );
  console.log(
    `outbox: ${dispatcher.prefilled} deliveries queued in ${dispatcher.prefillSeconds.toFixed(1)} s before the ` +
      `dispatcher started; ${delivered} delivered by its stop (pending count ${dispatcher.prefilled} → ` +
      `${dispatcher.pendingAfter}, a drop equal to the receiver's 2xx); ${dispatcher.sampled} of them, 1 in ` +
      `${SAMPLE_EVERY} at the receiver, read back delivered with one 200 attempt each; ` +
      `${dispatcher.verified} signatures verified at the receiver, none bad`,
  );
  console.log(
    '(latencies: round trip of a POST in whole milliseconds, rounded, as the dispatcher records it in ' +
      `duration_ms; for the dispatcher over the ${dispatcher.sampled} sampled deliveries)`,
  );
  console.log('');
  console.log('README row (| benchmark | gateway req/s | p50 ms | p99 ms | baseline req/s | ratio | machine |):');
  const cells = [
    `\`webhooks\`: signed ${EVENT} POSTs to a loopback receiver, ${CONCURRENCY} in flight, ${duration} s; ` +
      `deliveries/s against a got.post loop; ${dispatcher.commandsSent.toFixed(1)} Redis commands per delivery`,
    dispatcher.perSec.toFixed(0),
    String(dispatcher.p50),
    String(dispatcher.p99),
    baseline.perSec.toFixed(0),
    ratio.toFixed(2),
    machine,
  ];
  console.log(`| ${cells.join(' | ')} |`);
}

/**
 * 32 workers, each posting the same body with the same headers (a fixed signature, valid for a
 * secret the receiver is given) with got and awaiting the answer before the next.
 */
async function measureBaseline(receiver: Receiver, duration: number): Promise<Measurement> {
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  await receiver.reset(secret);
  const body = JSON.stringify(sampleEvent(randomUUID()));
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-switchboard-signature': sign(body, secret),
    'x-switchboard-event': EVENT,
    'x-switchboard-delivery': randomUUID(),
    'x-switchboard-attempt': '1',
  };
  let stopping = false;
  let failure: string | undefined;
  const latencies: number[] = [];
  const worker = async () => {
    while (!stopping) {
      const started = performance.now();
      try {
        const response = await got.post(receiver.url, { body, headers });
        if (response.statusCode !== 200) throw new Error(`answered ${response.statusCode}`);
      } catch (error) {
        failure ??= error instanceof Error ? error.message : String(error);
        stopping = true;
        return;
      }
      latencies.push(Math.round(performance.now() - started));
    }
  };
  const workers = Array.from({ length: CONCURRENCY }, worker);
  let start: ReceiverStats;
  let end: ReceiverStats;
  try {
    start = await receiver.stats();
    await sleep(duration * 1000);
    end = await receiver.stats();
  } finally {
    // The workers never reject: each records its failure and returns.
    stopping = true;
    await Promise.all(workers);
  }
  if (failure !== undefined) throw new BenchFailure(`baseline: a got.post failed: ${failure}`);
  const final = await receiver.stats();
  if (final.badSignatures !== 0) {
    throw new BenchFailure(`baseline: the receiver rejected ${final.badSignatures} signatures`);
  }
  if (final.ok !== latencies.length) {
    throw new BenchFailure(`baseline: the receiver answered ${final.ok} 2xx, the loop counted ${latencies.length}`);
  }
  return { ...windowRate(start, end), total: final.ok, ...percentiles(latencies) };
}

/**
 * The dispatcher over its own redis-server, wired as src/app.ts wires it: the outbox is filled
 * first (one webhook on the receiver, one event per conversation so ordering never holds one back),
 * then the dispatcher starts and the receiver's 2xx are counted over the window. Afterwards the
 * store must agree: the pending count dropped by exactly the 2xx, and the delivery log shows each
 * of those delivered with one 200 attempt.
 */
async function measureDispatcher(
  receiver: Receiver,
  duration: number,
  baselinePerSec: number,
): Promise<DispatcherFigures> {
  const scriptCommands = await commandsCalledByScripts();
  const server = await startRedis();
  try {
    const config = loadConfig({
      REDIS_URL: server.url,
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      WEBHOOK_DESTINATION_CONCURRENCY: String(CONCURRENCY),
    });
    const logger = createLogger(config.LOG_LEVEL);
    const redis = await connectRedis({ url: server.url }, logger);
    try {
      const services = createServices(redis, config, systemClock, logger);
      const user = await services.accounts.create(`bench-${randomUUID()}@example.com`, 'scale');
      const chatbot = await services.chatbots.create(user.id, { name: 'Webhooks' });
      const hook = await services.webhooks.create(chatbot.id, receiver.url, [EVENT]);
      await receiver.reset(hook.secret);

      const prefilled = Math.max(PREFILL_MIN, Math.ceil(baselinePerSec * duration * PREFILL_HEADROOM));
      const prefillStarted = performance.now();
      await prefill(services, chatbot.id, prefilled);
      const prefillSeconds = (performance.now() - prefillStarted) / 1000;
      const pendingBefore = await services.deliveries.pendingCount();
      if (pendingBefore !== prefilled) {
        throw new BenchFailure(`dispatcher: ${prefilled} events emitted but ${pendingBefore} deliveries pending`);
      }

      const dispatcher = dispatcherFromConfig(
        { deliveries: services.deliveries, webhooks: services.webhooks, clock: systemClock, logger },
        config,
      );
      const statsBefore = await commandCalls(redis);
      let start: ReceiverStats;
      let end: ReceiverStats;
      let pendingAtEnd: number;
      dispatcher.start();
      try {
        start = await receiver.stats();
        await sleep(duration * 1000);
        end = await receiver.stats();
        pendingAtEnd = await services.deliveries.pendingCount();
      } finally {
        await dispatcher.stop();
      }
      const statsAfter = await commandCalls(redis);
      const final = await receiver.stats();
      const pendingAfter = await services.deliveries.pendingCount();

      // Claimed deliveries stay in the due queue: more than the claims in flight means work was left.
      if (pendingAtEnd <= CONCURRENCY) {
        throw new BenchFailure(
          `dispatcher: the outbox ran dry before the window ended (${pendingAtEnd} of ${prefilled} left)`,
        );
      }
      if (final.badSignatures !== 0) {
        throw new BenchFailure(`dispatcher: the receiver rejected ${final.badSignatures} signatures`);
      }
      const finished = pendingBefore - pendingAfter;
      if (final.ok !== finished) {
        throw new BenchFailure(
          `dispatcher: the receiver answered ${final.ok} 2xx but the pending count dropped by ${finished}`,
        );
      }
      const latencies = await checkSample(services, await receiver.sample());
      const commands = commandsPerDelivery(statsBefore, statsAfter, scriptCommands, finished);
      return {
        ...windowRate(start, end),
        total: final.ok,
        ...percentiles(latencies),
        prefilled,
        prefillSeconds,
        pendingAfter,
        ...commands,
        verified: final.verified,
        sampled: latencies.length,
      };
    } finally {
      if (redis.isOpen) await redis.close();
    }
  } finally {
    await server.stop();
  }
}

/** `count` events through the outbox, PREFILL_BATCH at a time; each becomes one pending delivery. */
async function prefill(services: Services, chatbotId: string, count: number): Promise<void> {
  for (let queued = 0; queued < count; queued += PREFILL_BATCH) {
    const batch = Math.min(PREFILL_BATCH, count - queued);
    await Promise.all(Array.from({ length: batch }, () => services.outbox.emit(sampleEvent(chatbotId))));
  }
}

/** A `message.received` event of a new conversation (so no delivery waits for another's turn). */
function sampleEvent(chatbotId: string) {
  const data = { conversation_id: randomUUID(), session_id: `api-${randomUUID()}`, content: CONTENT, source: 'api' };
  return messageReceived(chatbotId, data, systemClock.nowMicros());
}

/**
 * The deliveries the receiver sampled, as the store shows them: each must be delivered, with exactly
 * one attempt answered 200 without error. Returns the recorded attempt durations.
 */
async function checkSample(services: Services, deliveryIds: string[]): Promise<number[]> {
  if (deliveryIds.length === 0) throw new BenchFailure('dispatcher: the receiver sampled no deliveries');
  const views = await Promise.all(deliveryIds.map((id) => services.deliveries.get(id)));
  return views.map((view) => {
    const [attempt, ...more] = view.attempts;
    if (view.status !== 'delivered' || attempt?.status_code !== 200 || attempt.error !== null || more.length > 0) {
      throw new BenchFailure(`dispatcher: delivery ${view.id} is not one clean delivery: ${JSON.stringify(view)}`);
    }
    return attempt.duration_ms;
  });
}

/** Commands the delivery store's Lua scripts call, read from its source (`redis.call('NAME', ...)`). */
async function commandsCalledByScripts(): Promise<Set<string>> {
  const source = await readFile(DELIVERY_STORE, 'utf8');
  return new Set([...source.matchAll(/redis\.call\('(\w+)'/g)].map((match) => match[1]!.toLowerCase()));
}

/**
 * Commandstats counts the commands a script calls as well as the EVALSHA that ran it. Those the
 * client sent are the EVALSHA/EVAL calls plus every command no script calls; INFO is the
 * benchmark's own. (A command the client sends that a script also calls would be missed.)
 */
function commandsPerDelivery(
  before: Map<string, number>,
  after: Map<string, number>,
  scriptCommands: Set<string>,
  deliveries: number,
): { commandsSent: number; commandsExecuted: number } {
  let sent = 0;
  let executed = 0;
  for (const [command, calls] of after) {
    if (command === 'info') continue;
    const delta = calls - (before.get(command) ?? 0);
    executed += delta;
    if (!scriptCommands.has(command)) sent += delta;
  }
  return { commandsSent: sent / deliveries, commandsExecuted: executed / deliveries };
}

/** Deliveries per second between two receiver snapshots, timed by the receiver's clock. */
function windowRate(start: ReceiverStats, end: ReceiverStats): { perSec: number; inWindow: number } {
  const inWindow = end.ok - start.ok;
  return { perSec: inWindow / ((end.atMs - start.atMs) / 1000), inWindow };
}

/**
 * The loopback receiver, in a worker thread so it does not share an event loop with the client it
 * measures. It answers 200 as soon as a request's body has arrived, counts its 2xx, checks the
 * signature of one request in VERIFY_EVERY against the secret it was last given (401 if wrong), and
 * keeps the delivery id of one request in SAMPLE_EVERY.
 */
class Receiver {
  readonly url: string;
  private readonly worker: Worker;

  private constructor(worker: Worker, port: number) {
    this.worker = worker;
    this.url = `http://${HOST}:${port}/webhook`;
  }

  static async start(): Promise<Receiver> {
    const worker = new Worker(new URL(import.meta.url), { workerData: { role: RECEIVER_ROLE } });
    try {
      const ready = await nextMessage(worker);
      if (ready.type !== 'listening') throw new Error(`receiver sent ${ready.type} before listening`);
      return new Receiver(worker, ready.port);
    } catch (error) {
      await worker.terminate();
      throw error;
    }
  }

  /** Zeroes the counters and verifies signatures with `secret` from now on. */
  async reset(secret: string): Promise<void> {
    await this.request({ type: 'reset', secret });
  }

  async stats(): Promise<ReceiverStats> {
    const reply = await this.request({ type: 'stats' });
    if (reply.type !== 'stats') throw new Error(`receiver answered ${reply.type} to stats`);
    return reply;
  }

  /** The delivery ids (x-switchboard-delivery) of one 2xx-answered request in SAMPLE_EVERY. */
  async sample(): Promise<string[]> {
    const reply = await this.request({ type: 'sample' });
    if (reply.type !== 'sample') throw new Error(`receiver answered ${reply.type} to sample`);
    return reply.deliveryIds;
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }

  private async request(message: ToReceiver): Promise<FromReceiver> {
    const reply = nextMessage(this.worker);
    this.worker.postMessage(message);
    return reply;
  }
}

function nextMessage(worker: Worker): Promise<FromReceiver> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: FromReceiver) => {
      worker.off('error', onError);
      worker.off('exit', onExit);
      resolve(message);
    };
    const onError = (error: Error) => {
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      reject(new Error(`receiver failed: ${error.message}`));
    };
    const onExit = (code: number) => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      reject(new Error(`receiver exited with code ${code}`));
    };
    worker.once('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
  });
}

/** The receiver's side: runs in the worker thread. */
function serveReceiver(): void {
  const port = parentPort!;
  let secret = '';
  let requests = 0;
  let ok = 0;
  let verified = 0;
  let badSignatures = 0;
  let deliveryIds: string[] = [];
  const server = http.createServer((req, res) => {
    requests += 1;
    if (requests % SAMPLE_EVERY === 0) deliveryIds.push(String(req.headers['x-switchboard-delivery']));
    if (requests % VERIFY_EVERY !== 0) {
      req.resume();
      req.on('end', () => {
        ok += 1;
        res.writeHead(200).end();
      });
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const expected = Buffer.from(createHmac('sha256', secret).update(Buffer.concat(chunks)).digest('hex'));
      const given = Buffer.from(String(req.headers['x-switchboard-signature'] ?? ''));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        badSignatures += 1;
        res.writeHead(401).end();
        return;
      }
      verified += 1;
      ok += 1;
      res.writeHead(200).end();
    });
  });
  port.on('message', (message: ToReceiver) => {
    let reply: FromReceiver;
    if (message.type === 'reset') {
      secret = message.secret;
      requests = ok = verified = badSignatures = 0;
      deliveryIds = [];
      reply = { type: 'reset' };
    } else if (message.type === 'sample') {
      reply = { type: 'sample', deliveryIds };
    } else {
      reply = { type: 'stats', ok, verified, badSignatures, atMs: performance.timeOrigin + performance.now() };
    }
    port.postMessage(reply);
  });
  server.listen(0, HOST, () => {
    port.postMessage({ type: 'listening', port: (server.address() as AddressInfo).port } satisfies FromReceiver);
  });
}

function figures(m: Measurement): [string, string, string, string, string] {
  return [m.perSec.toFixed(1), String(m.p50), String(m.p99), String(m.inWindow), String(m.total)];
}

function verdict(met: boolean): string {
  return met ? 'met' : 'not met';
}

function row(...cells: string[]): string {
  const [label = '', ...rest] = cells;
  return label.padEnd(26) + rest.map((cell) => cell.padStart(13)).join('');
}

// This module is also the receiver's worker entry point.
if (!isMainThread && (workerData as { role?: unknown } | null)?.role === RECEIVER_ROLE) serveReceiver();
