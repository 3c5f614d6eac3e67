/**
 * The stream benchmark (issue 21): how long after the LLM writes the first piece of a reply the
 * visitor's widget socket has it, with 100 visitors streaming at once. A fake OpenAI in a process of its
 * own (stream-llm-child.ts, the real SSE wire format) writes each reply as 30 pieces, one every 20 ms,
 * and notes when it handed the first one to the kernel; each visitor's socket, in this process, notes
 * when its first `delta` frame arrived (both as epoch milliseconds with sub-millisecond precision). The difference is the
 * time the server in between added to the first piece: the whole gateway (stream-children.ts,
 * `gateway`) over a throwaway redis-server, and, as the same-run baseline, a bare relay that streams
 * the same SDK call straight to the socket (`relay`). Each visitor asks its next question as soon as
 * the stored reply (`message`) arrived; one round first is not counted.
 */

import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { startRedis } from '../test/support/redis-server.ts';
import { describeMachine, durationSeconds, percentiles } from './bench-support.ts';
import { PIECE_INTERVAL_MS, PIECES, REPLY, type FirstPieces, type LlmChildRequest } from './stream-llm-child.ts';
import { startChild, stopChild, type Child } from './widget-baseline-child.ts';

const SERVERS = fileURLToPath(new URL('./stream-children.ts', import.meta.url));
const LLM = fileURLToPath(new URL('./stream-llm-child.ts', import.meta.url));
const VISITORS = 100;
const DEFAULT_DURATION_S = 15;
const TARGET_P99_MS = 15;
const TIMEOUT_MS = 30_000;
/** How long the LLM takes to write one reply. */
const REPLY_MS = PIECES * PIECE_INTERVAL_MS;

/** Now, as epoch milliseconds with sub-millisecond precision (comparable with the LLM child's). */
const now = (): number => performance.timeOrigin + performance.now();

/** One server's figures: per reply, when its first piece arrived, by question; what went wrong. */
interface SideFigures {
  firstDeltaAt: Map<string, number>;
  problems: Map<string, number>;
}

export async function run(): Promise<number> {
  const duration = durationSeconds(process.env['BENCH_DURATION'], DEFAULT_DURATION_S);
  console.log(
    `stream benchmark: ${VISITORS} widget visitors at once, each asking its next question when the last ` +
      `reply is stored (their first questions spread over one reply's length), for ${duration} s; a fake OpenAI (a process of its own) streams each reply as ` +
      `${PIECES} pieces ${PIECE_INTERVAL_MS} ms apart; figure: when the visitor's socket got the first ` +
      'piece, less when the fake wrote it',
  );
  console.log(`machine: ${await describeMachine()}`);
  const llm = await startChild<{ url: string }>(LLM, {});
  const redis = await startRedis();
  try {
    const env = { OPENAI_BASE_URL: llm.ready.url };
    const relay = await measure({ ...env, STREAM_CHILD: 'relay' }, duration);
    const gateway = await measure({ ...env, STREAM_CHILD: 'gateway', REDIS_URL: redis.url }, duration);
    const { firstPieces, maxInFlight } = await report(llm);
    printReport(relay, gateway, new Map(firstPieces), maxInFlight);
  } finally {
    await redis.stop();
    await stopChild(llm);
  }
  return 0;
}

function report(llm: Child<{ url: string }>): Promise<{ firstPieces: FirstPieces; maxInFlight: number }> {
  return new Promise((resolve) => {
    llm.process.once('message', resolve);
    llm.process.send({ type: 'report' } satisfies LlmChildRequest);
  });
}

async function measure(env: Record<string, string>, seconds: number): Promise<SideFigures> {
  const child = await startChild(SERVERS, env);
  const figures: SideFigures = { firstDeltaAt: new Map(), problems: new Map() };
  const sockets: WebSocket[] = [];
  try {
    const url = `ws://127.0.0.1:${child.ready.port}/widget/v1/socket?chatbot_id=${child.ready.chatbotId}`;
    sockets.push(...(await Promise.all(Array.from({ length: VISITORS }, () => open(url)))));
    const side = env['STREAM_CHILD']!;
    // One round each first, not counted: it starts each conversation and loads what loads lazily.
    await Promise.all(sockets.map((socket, i) => ask(socket, `${side} warm-up ${i}`, figures.problems)));
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      sockets.map(async (socket, visitor) => {
        // Spread over one reply's length, so that replies start at a steady rate, not all at once.
        await new Promise((resolve) => setTimeout(resolve, (visitor * REPLY_MS) / VISITORS));
        for (let round = 0; performance.now() < end; round += 1) {
          const question = `${side} visitor ${visitor} round ${round}`;
          const firstDeltaAt = await ask(socket, question, figures.problems);
          if (firstDeltaAt === undefined) return;
          figures.firstDeltaAt.set(question, firstDeltaAt);
        }
      }),
    );
    return figures;
  } finally {
    for (const socket of sockets) socket.terminate();
    await stopChild(child);
  }
}

function open(url: string): Promise<WebSocket> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('message', () => resolve(socket));
  });
}

/**
 * Sends a question and waits for its stored reply; resolves with when its first piece arrived, or
 * undefined (counted as a problem) when the reply was not the streamed text or did not come.
 */
function ask(socket: WebSocket, question: string, problems: Map<string, number>): Promise<number | undefined> {
  return new Promise((resolve) => {
    let firstDeltaAt: number | undefined;
    let streamed = '';
    const done = (problem?: string) => {
      clearTimeout(timer);
      socket.off('message', onFrame);
      if (problem) add(problems, problem);
      resolve(problem ? undefined : firstDeltaAt);
    };
    const onFrame = (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as { type: string; content?: string; detail?: string };
      if (frame.type === 'delta') {
        firstDeltaAt ??= now();
        streamed += frame.content ?? '';
      } else if (frame.type === 'message') {
        if (frame.content !== REPLY) done('a reply that is not the streamed text');
        else if (streamed !== REPLY) done('pieces that do not make the reply');
        else done();
      } else if (frame.type === 'error') done(`error frame: ${frame.detail}`);
    };
    const timer = setTimeout(() => done('no reply within 30 s'), TIMEOUT_MS);
    socket.on('message', onFrame);
    socket.send(JSON.stringify({ type: 'message', content: question }));
  });
}

function add(problems: Map<string, number>, problem: string): void {
  problems.set(problem, (problems.get(problem) ?? 0) + 1);
}

/** Each reply's extra time to the first piece: its arrival at the socket less its writing by the LLM. */
function extraTimes(side: SideFigures, written: Map<string, number>): number[] {
  const times: number[] = [];
  for (const [question, arrived] of side.firstDeltaAt) {
    const at = written.get(question);
    if (at === undefined) add(side.problems, 'no first piece recorded by the LLM');
    else times.push(arrived - at);
  }
  return times;
}

function printReport(relay: SideFigures, gateway: SideFigures, written: Map<string, number>, maxInFlight: number) {
  const relayTimes = percentiles(extraTimes(relay, written));
  const gatewayTimes = percentiles(extraTimes(gateway, written));
  const line = (name: string, side: SideFigures, { p50, p99 }: { p50: number; p99: number }) =>
    `${name.padEnd(8)} ${String(side.firstDeltaAt.size).padStart(7)} replies   first piece ` +
    `+${p50.toFixed(1)} ms p50, +${p99.toFixed(1)} ms p99`;
  console.log('');
  console.log(line('relay', relay, relayTimes));
  console.log(line('gateway', gateway, gatewayTimes));
  console.log(
    `gateway / relay p99: ${(gatewayTimes.p99 / relayTimes.p99).toFixed(2)} ` +
      `(+${(gatewayTimes.p99 - relayTimes.p99).toFixed(1)} ms); target: gateway p99 <= ${TARGET_P99_MS} ms: ` +
      (gatewayTimes.p99 <= TARGET_P99_MS ? 'met' : 'NOT met'),
  );
  console.log(`most LLM streams at once: ${maxInFlight}`);
  for (const [name, side] of [
    ['relay', relay],
    ['gateway', gateway],
  ] as const) {
    for (const [problem, count] of side.problems) console.log(`${name} problem: ${problem} (${count})`);
  }
}
