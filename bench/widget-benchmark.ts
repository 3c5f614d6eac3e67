/**
 * The widget benchmark: 5,000 concurrent widget sockets (`/widget/v1/socket`) held open on the whole
 * gateway, and message round trips per second through its conversation actors with an instant fake
 * LLM. The gateway runs in a child process with `--expose-gc` (bench/widget-gateway-child.ts) over a
 * throwaway redis-server, so its RSS is its own: RSS per socket is its RSS after forced collections
 * with every socket open, less the same with none open, over the sockets. Throughput is a closed
 * loop: a fixed number of the open sockets each send their next message as soon as the assistant's
 * reply to the previous one arrived. A bare `ws` server in a child of its own
 * (bench/widget-baseline-child.ts) is measured the same way first, as the baseline for both.
 */

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { startRedis } from '../test/support/redis-server.ts';
import { describeMachine, durationSeconds } from './bench-support.ts';
import { measureChild, REPLY, startChild, stopChild } from './widget-baseline-child.ts';
import type { Child, ChildMeasurement } from './widget-baseline-child.ts';

const GATEWAY_CHILD = fileURLToPath(new URL('./widget-gateway-child.ts', import.meta.url));
const BASELINE_CHILD = fileURLToPath(new URL('./widget-baseline-child.ts', import.meta.url));
const HOST = '127.0.0.1';
const DEFAULT_SOCKETS = 5000;
const DEFAULT_DURATION_S = 10;
/** Sockets opened concurrently, each waiting for its ready frame. */
const OPEN_BATCH = 200;
/** Sockets opened and closed before anything is measured, so lazily loaded code is in. */
const WARM_UP_SOCKETS = 100;
/** Visitors kept busy in the closed loop. */
const BUSY_VISITORS = 500;
/** How long a socket may take to open, or a message to be answered, before it counts as failed. */
const TIMEOUT_MS = 15_000;
/** File descriptors a process needs beyond its sockets (Redis, stdio, the event loop's own). */
const FD_MARGIN = 256;
const MESSAGE = JSON.stringify({ type: 'message', content: 'What are your opening hours?' });
const KIB = 1024;
const MIB = 1024 * 1024;
const TARGET_RSS_PER_SOCKET_KIB = 16;

/** One server's figures. */
interface SideFigures {
  idle: ChildMeasurement;
  loaded: ChildMeasurement;
  after: ChildMeasurement;
  opened: number;
  openSeconds: number;
  loop: LoopFigures;
  /** Everything that went wrong on the client side, by kind: failed opens, error frames, drops. */
  problems: Map<string, number>;
}

/** The closed loop's figures. */
interface LoopFigures {
  visitors: number;
  roundTrips: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
}

export async function run(): Promise<number> {
  const duration = durationSeconds(process.env['BENCH_DURATION'], DEFAULT_DURATION_S);
  const sockets = socketCount(process.env['BENCH_SOCKETS']);
  const machine = await describeMachine();
  const busy = Math.min(BUSY_VISITORS, sockets);
  console.log(
    `widget benchmark: ${sockets} concurrent widget sockets on /widget/v1/socket, opened ${OPEN_BATCH} at a time ` +
      `from this process; then ${busy} of them in a closed loop of message round trips for ${duration} s; ` +
      'instant fake LLM; the real webhook outbox with no webhook registered; each server in its own ' +
      'node --expose-gc process',
  );
  console.log(`machine: ${machine}`);
  console.log(await fileLimitNote(sockets));

  const baseline = await measureSide(BASELINE_CHILD, {}, sockets, busy, duration);
  const redis = await startRedis();
  let gateway: SideFigures;
  try {
    gateway = await measureSide(GATEWAY_CHILD, { REDIS_URL: redis.url }, sockets, busy, duration);
  } finally {
    await redis.stop();
  }
  printReport(baseline, gateway, sockets);
  return 0;
}

function socketCount(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_SOCKETS;
  if (!/^[1-9]\d*$/.test(value)) throw new Error(`BENCH_SOCKETS must be a positive whole number, got "${value}"`);
  return Number(value);
}

/**
 * The open-file limit (Node raises its soft limit to the hard one at start; the children inherit it).
 * This process holds every client socket and each server child every server socket: ~10k descriptors
 * in all, a little over one per socket in each process.
 */
async function fileLimitNote(sockets: number): Promise<string> {
  const limits = await readFile('/proc/self/limits', 'utf8').catch(() => '');
  const found = /^Max open files\s+(\S+)/m.exec(limits)?.[1];
  const needed = sockets + FD_MARGIN;
  const limit = found === 'unlimited' ? Infinity : Number(found ?? NaN);
  if (limit >= needed) return `open files: limit ${found} per process, ${needed} needed in each: ok`;
  return (
    `open files: WARNING: limit ${found ?? 'unknown'} per process, but this process and each server child need ` +
    `${needed} for ${sockets} sockets, so sockets may fail to open. Raise it before running: \`ulimit -n ` +
    `${Math.max(65536, needed)}\` in the shell (the hard limit must allow it; Docker: --ulimit nofile=65536), ` +
    'or set BENCH_SOCKETS lower.'
  );
}

/** One server from start to stop: warm-up, memory with 0 and with `count` sockets open, the closed loop. */
async function measureSide(
  script: string,
  env: Record<string, string>,
  count: number,
  busy: number,
  duration: number,
): Promise<SideFigures> {
  const child = await startChild(script, env);
  const problems = new Map<string, number>();
  const open: WebSocket[] = [];
  try {
    const url = `ws://${HOST}:${child.ready.port}/widget/v1/socket?chatbot_id=${child.ready.chatbotId}`;
    const warm = await openSockets(url, WARM_UP_SOCKETS, problems);
    for (const socket of warm) socket.terminate();
    await untilNoSockets(child);
    const idle = await measureChild(child);
    const start = performance.now();
    open.push(...(await openSockets(url, count, problems)));
    const openSeconds = (performance.now() - start) / 1000;
    const loaded = await measureChild(child);
    const loop = await closedLoop(open.slice(0, busy), duration, problems);
    const after = await measureChild(child);
    return { idle, loaded, after, opened: open.length, openSeconds, loop, problems };
  } finally {
    for (const socket of open) socket.terminate();
    await stopChild(child);
  }
}

/** Waits until the server has seen every socket close. */
async function untilNoSockets(child: Child): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    if ((await measureChild(child)).sockets === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the warm-up sockets did not close on the server');
}

/** Opens `count` sockets, OPEN_BATCH at a time, each once its ready frame arrived; failures are counted. */
async function openSockets(url: string, count: number, problems: Map<string, number>): Promise<WebSocket[]> {
  const open: WebSocket[] = [];
  for (let from = 0; from < count; from += OPEN_BATCH) {
    const batch = Array.from({ length: Math.min(OPEN_BATCH, count - from) }, () => openOne(url));
    for (const outcome of await Promise.allSettled(batch)) {
      if (outcome.status === 'fulfilled') open.push(outcome.value);
      else add(problems, `open failed: ${(outcome.reason as Error).message}`);
    }
  }
  return open;
}

function openOne(url: string): Promise<WebSocket> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      clearTimeout(timer);
      socket.terminate();
      reject(new Error(reason));
    };
    const timer = setTimeout(() => fail('no ready frame in time'), TIMEOUT_MS);
    socket.once('error', (error) => fail(error.message));
    socket.once('unexpected-response', (_req, res) => fail(`HTTP ${res.statusCode}`));
    socket.once('close', (code) => fail(`closed with ${code} before ready`));
    socket.once('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as { type?: string };
      if (frame.type !== 'ready') return fail(`first frame was ${frame.type}, not ready`);
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => {});
      resolve(socket);
    });
  });
}

/**
 * Each visitor sends its next message as soon as the assistant's reply to the previous one arrived.
 * One round each first, not counted (it starts each conversation); then `seconds` of round trips,
 * counted when their reply arrived within the window.
 */
async function closedLoop(visitors: WebSocket[], seconds: number, problems: Map<string, number>): Promise<LoopFigures> {
  await Promise.all(visitors.map((socket) => roundTrip(socket, problems)));
  const latencies: number[] = [];
  const start = performance.now();
  const end = start + seconds * 1000;
  const visit = async (socket: WebSocket) => {
    while (performance.now() < end) {
      const sent = performance.now();
      if (!(await roundTrip(socket, problems))) return;
      const received = performance.now();
      if (received <= end) latencies.push(received - sent);
    }
  };
  await Promise.all(visitors.map(visit));
  latencies.sort((a, b) => a - b);
  const [p50Ms, p99Ms] = [percentile(latencies, 0.5), percentile(latencies, 0.99)];
  return { visitors: visitors.length, roundTrips: latencies.length, seconds, p50Ms, p99Ms };
}

/**
 * Sends one message and resolves when the assistant's message frame arrived (true), or when the
 * socket can go on no longer (false: closed, an error frame, no reply in time). Typing frames pass.
 */
function roundTrip(socket: WebSocket, problems: Map<string, number>): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean, problem?: string) => {
      clearTimeout(timer);
      socket.off('message', onMessage).off('close', onClose);
      if (problem !== undefined) add(problems, problem);
      resolve(ok);
    };
    const onMessage = (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as { type?: string; role?: string; content?: string };
      if (frame.type === 'typing') return;
      if (frame.type === 'message' && frame.role === 'assistant') {
        return done(true, frame.content === REPLY ? undefined : `unexpected reply: ${frame.content}`);
      }
      done(false, `frame ${JSON.stringify(frame).slice(0, 120)}`);
    };
    const onClose = (code: number) => done(false, `socket closed with ${code} mid-loop`);
    const timer = setTimeout(() => done(false, `no reply within ${TIMEOUT_MS} ms`), TIMEOUT_MS);
    socket.on('message', onMessage).on('close', onClose);
    socket.send(MESSAGE);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? NaN;
}

function add(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** Bytes per open socket: RSS and heap with them open, less with none open, over the sockets open. */
function perSocket(side: SideFigures): { rss: number; heap: number } {
  const sockets = Math.max(1, side.loaded.sockets);
  return {
    rss: (side.loaded.rss - side.idle.rss) / sockets,
    heap: (side.loaded.heapUsed - side.idle.heapUsed) / sockets,
  };
}

const kib = (bytes: number) => `${(bytes / KIB).toFixed(2)} KiB`;
const mib = (m: ChildMeasurement) => `${(m.rss / MIB).toFixed(1)} / ${(m.heapUsed / MIB).toFixed(1)} MiB`;
const rate = (loop: LoopFigures) => loop.roundTrips / loop.seconds;

function printReport(baseline: SideFigures, gateway: SideFigures, requested: number): void {
  const sides = [
    ['baseline', baseline],
    ['gateway ', gateway],
  ] as const;
  console.log('');
  console.log('RSS / heap used after forced GC: with no socket open, with all open, after the closed loop');
  for (const [name, side] of sides) {
    console.log(
      `   ${name}: ${mib(side.idle)}; ${mib(side.loaded)}; ${mib(side.after)} ` +
        `(${side.opened}/${requested} opened in ${side.openSeconds.toFixed(1)} s, ${side.loaded.sockets} open on the server)`,
    );
  }
  printMemory(baseline, gateway);
  printRoundTrips(baseline, gateway);
  for (const [name, side] of sides) {
    const problems = [...side.problems].map(([problem, n]) => `${n} × ${problem}`);
    console.log(`problems, ${name.trim()}: ${problems.length === 0 ? 'none' : problems.join('; ')}`);
  }
}

function printMemory(baseline: SideFigures, gateway: SideFigures): void {
  const gate = perSocket(gateway);
  const bare = perSocket(baseline);
  const met = gate.rss / KIB <= TARGET_RSS_PER_SOCKET_KIB ? 'met' : 'not met';
  console.log('1. memory per open socket (all open minus none open, over the sockets open on the server)');
  console.log(`   baseline (bare ws server): RSS ${kib(bare.rss)}, heap used ${kib(bare.heap)}`);
  console.log(`   gateway: RSS ${kib(gate.rss)}, heap used ${kib(gate.heap)}`);
  console.log(`   RSS per socket ${kib(gate.rss)} (target ≤ ${TARGET_RSS_PER_SOCKET_KIB} KiB: ${met})`);
  console.log(
    `   ratio gateway/baseline: RSS ${(gate.rss / bare.rss).toFixed(2)}, heap used ${(gate.heap / bare.heap).toFixed(2)}`,
  );
}

function printRoundTrips(baseline: SideFigures, gateway: SideFigures): void {
  const { visitors, seconds } = gateway.loop;
  console.log(
    `2. round trips (message sent → assistant message frame), ${visitors} visitors in a closed loop, ${seconds} s`,
  );
  for (const [name, loop] of [
    ['baseline (bare ws echo)', baseline.loop],
    ['gateway', gateway.loop],
  ] as const) {
    console.log(
      `   ${name}: ${rate(loop).toFixed(0)} round trips/s, p50 ${loop.p50Ms.toFixed(1)} ms, ` +
        `p99 ${loop.p99Ms.toFixed(1)} ms (${loop.roundTrips} round trips)`,
    );
  }
  console.log(`   ratio gateway/baseline: ${(rate(gateway.loop) / rate(baseline.loop)).toFixed(2)} (no target)`);
}
