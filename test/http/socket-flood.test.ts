import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import t, { type Test } from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { startGatewayCluster } from '../support/gateway-cluster.ts';
import type { FloodOrder, FloodReport } from '../support/socket-flooder.ts';
import { WidgetClient } from '../support/widget-client.ts';

// Issue 18: one anonymous widget socket sending 200,000 small frames as fast as it could stalled
// the whole gateway (/healthz timed out for ~13 s, RSS 266 -> 589 MB); an agent socket did the same.
// Here the gateway runs in a process of its own with the default socket limits (so its RSS is its
// own), the flooder in a worker thread (so its sending does not stall this process's clocks), and
// meanwhile visitors chat on their own sockets and /healthz is probed. The spacing below paces the
// load and the measurement windows; nothing waits a fixed time for something to happen.
//
// Noise: with no flood at all, replies here now and then take 50-200 ms on an idle machine, and on a
// loaded 2-core machine the p99 alone passes 200 ms (the test process, the gateway and redis-server
// share the cores with whatever else runs, and a descheduled process stalls every reply in flight).
// So the visitors are staggered, hundreds of samples are taken, and each flood is measured against
// a window of the same load without a flood just before it: the bounds hold unless that
// window shows the machine itself is too slow for them, and then the flood may not make the p99
// more than twice as bad. A flood whose figures miss a bound is measured once more, and the better
// attempt counts: a stall the flood causes comes back every time (the lasted seconds),
// scheduling noise seldom twice. /healthz must never take a second.

const VISITORS = 6;
/** Each visitor sends its next message this long after the last one (8 a second: under the default 10). */
const VISITOR_SPACING_MS = 125;
const PROBE_SPACING_MS = 20;
/** Load runs this long before anything is measured. */
const WARM_UP_MS = 500;
/** A flood window lasts at least this long after the flooder's socket closed. */
const TAIL_MS = 1500;
/** Replies each window measures at least. */
const MIN_REPLIES = 180;
/** The bounds: a visitor's reply p99 and /healthz answers. */
const REPLY_P99_MS = 200;
const PROBE_P99_MS = 100;
/** How much worse than the window without a flood a flood may make the p99, on a machine too slow for the bounds. */
const NOISE_FACTOR = 2;
/** A single probe slower than this is a stall, not scheduling noise on a busy machine. */
const PROBE_MAX_MS = 1000;
/** Floods measured at most per test (see above). */
const ATTEMPTS = 2;
/**
 * The issue saw +323 MB; with no flood at all the gateway's RSS grows by up to ~50 MB here while it
 * warms up under the visitors' load (heap growth, lazily loaded code).
 */
const RSS_GROWTH_MB = 100;

/** Frames a second a socket may send (the default SOCKET_FRAME_RATE, named for the error-frame bound). */
const FRAME_RATE = 10;

const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'An answer.' });
const cluster = await startGatewayCluster(1, {
  SOCKET_FRAME_RATE: String(FRAME_RATE),
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  CONVERSATION_RATE_LIMIT: '100000',
});
const visitors: WidgetClient[] = [];
t.teardown(async () => {
  for (const visitor of visitors) await visitor.close();
  await cluster.stop();
  await openai.stop();
});
const gateway = cluster.gateways[0]!;
const wsBase = gateway.baseUrl.replace(/^http/, 'ws');
const owner = await cluster.services.accounts.create('flood@example.com', 'scale');
const bot = await cluster.services.chatbots.create(owner.id, { name: 'Flooded' });
const agent = await cluster.services.agents.create(owner.id, 'Flood');
for (let i = 0; i < VISITORS; i += 1)
  visitors.push((await WidgetClient.ready(gateway.baseUrl, { chatbot_id: bot.id })).client);

t.test('a widget socket sending 200,000 frames: closed with 1008, others unaffected', async (t) => {
  await floodTest(t, {
    url: `${wsBase}/widget/v1/socket?chatbot_id=${bot.id}`,
    frame: JSON.stringify({ type: 'message', content: 'flood' }),
    count: 200_000,
  });
});

t.test('an authenticated agent socket sending 100,000 frames: closed with 1008, others unaffected', async (t) => {
  await floodTest(t, {
    url: `${wsBase}/agents/v1/socket`,
    first: { frame: JSON.stringify({ type: 'auth', token: agent.token }), answer: 'conversations' },
    frame: JSON.stringify({ type: 'takeover', chatbot_id: bot.id, session_id: 'embed-flood' }),
    count: 100_000,
  });
});

type Done = Extract<FloodReport, { kind: 'done' }>;

/** What one window measured. */
interface Window {
  replies: number[];
  probes: number[];
  rssPeakMb: number;
}

interface Measured {
  report: Done;
  quiet: Window;
  flooded: Window;
  rssBeforeMb: number;
}

/** Floods, checks how the flooder was cut off, and holds the figures to the bounds (see above). */
async function floodTest(t: Test, order: FloodOrder): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    const measured = await measureFlood(order);
    checkCutOff(t, measured.report);
    const verdicts = bounds(t, measured);
    const missed = verdicts.filter(([ok]) => !ok).map(([, what]) => what);
    if (missed.length === 0 || attempt === ATTEMPTS) {
      for (const [ok, what] of verdicts) t.ok(ok, what);
      return;
    }
    t.comment(`attempt ${attempt} missed: ${missed.join('; ')}; measuring again`);
  }
}

function checkCutOff(t: Test, report: Done): void {
  t.equal(report.code, 1008, 'the flooding socket is closed for policy');
  t.equal(report.reason, 'frame rate exceeded');
  // The first frame of each run of dropped frames gets the error frame (docs/api.md). The flooder
  // never slows down, but the gateway stops reading while SOCKET_INBOUND_QUEUE frames wait (slowly,
  // on a loaded machine), and the bucket refills meanwhile: a frame accepted after that starts a new
  // run. Each accepted frame after the first drop takes a token refilled since, so at most
  // FRAME_RATE × the flood's time of them, and as many more runs; far fewer than one error frame per
  // dropped frame.
  const errorFrames = report.errorFrames.filter((detail) => detail === 'Frame rate limit exceeded.').length;
  const mostRuns = 1 + Math.ceil((FRAME_RATE * report.sendMs) / 1000);
  t.ok(
    errorFrames >= 1 && errorFrames <= mostRuns,
    `an error frame for each run of dropped frames: ${errorFrames}, at most ${mostRuns} in ${report.sendMs.toFixed(0)} ms`,
  );
  t.ok(report.sent < 200_000, 'the flooder was cut off before it sent everything');
  const closes = gateway.stdout().match(/"reason":"frame rate exceeded"[^\n]*"msg":"closed a socket for policy"/g);
  t.ok(closes && closes.length >= 1, 'the gateway logged the close');
}

/** Each bound with whether the figures keep it; the figures go to the test's output. */
function bounds(t: Test, { report, quiet, flooded, rssBeforeMb }: Measured): Array<[boolean, string]> {
  const [quietReplies, replies] = [summary(quiet.replies), summary(flooded.replies)];
  const [quietProbes, probes] = [summary(quiet.probes), summary(flooded.probes)];
  const growth = flooded.rssPeakMb - rssBeforeMb;
  t.comment(
    `flooder wrote ${report.sent} frames in ${report.sendMs.toFixed(0)} ms before the close; ` +
      `replies ${figures(replies)} (no flood: ${figures(quietReplies)}); ` +
      `/healthz ${figures(probes)} (no flood: ${figures(quietProbes)}); ` +
      `RSS ${rssBeforeMb.toFixed(0)} -> peak ${flooded.rssPeakMb.toFixed(0)} MB`,
  );
  const replyBound = Math.max(REPLY_P99_MS, NOISE_FACTOR * quietReplies.p99);
  const probeBound = Math.max(PROBE_P99_MS, NOISE_FACTOR * quietProbes.p99);
  return [
    [replies.n >= MIN_REPLIES && quietReplies.n >= MIN_REPLIES, 'enough replies measured'],
    [replies.p99 < replyBound, `the other visitors' reply p99 ${replies.p99} ms < ${replyBound} ms`],
    [probes.p99 < probeBound, `/healthz p99 ${probes.p99} ms < ${probeBound} ms`],
    [probes.max < PROBE_MAX_MS, `no /healthz stall: slowest ${probes.max} ms < ${PROBE_MAX_MS} ms`],
    [growth < RSS_GROWTH_MB, `RSS grew ${growth.toFixed(1)} MB < ${RSS_GROWTH_MB} MB`],
  ];
}

/**
 * Runs the visitors and probes; once warm, measures a window without a flood, then floods and
 * measures until the tail has passed. Each window lasts until it has `MIN_REPLIES` replies.
 */
async function measureFlood(order: FloodOrder): Promise<Measured> {
  let running = true;
  let window: Window | undefined;
  const loops = [
    ...visitors.map((visitor, i) =>
      paced(VISITOR_SPACING_MS, (i * VISITOR_SPACING_MS) / VISITORS, async () => {
        const started = performance.now();
        visitor.send({ type: 'message', content: `question from ${i}` });
        await visitor.next('message', 10_000);
        window?.replies.push(performance.now() - started);
      }),
    ),
    paced(PROBE_SPACING_MS, 0, async () => {
      const started = performance.now();
      const response = await fetch(`${gateway.baseUrl}/healthz`);
      await response.text();
      if (!window) return;
      window.probes.push(performance.now() - started);
      window.rssPeakMb = Math.max(window.rssPeakMb, rssMb());
    }),
  ];
  function paced(spacingMs: number, offsetMs: number, step: () => Promise<void>): Promise<void> {
    return (async () => {
      await delay(offsetMs);
      while (running) {
        const started = performance.now();
        await step();
        const rest = spacingMs - (performance.now() - started);
        if (rest > 0) await delay(rest);
      }
    })();
  }
  const filled = async (current: Window) => {
    while (current.replies.length < MIN_REPLIES) await delay(VISITOR_SPACING_MS);
  };
  try {
    await delay(WARM_UP_MS);
    const quiet: Window = (window = { replies: [], probes: [], rssPeakMb: 0 });
    await filled(quiet);
    const rssBeforeMb = rssMb();
    const flooded: Window = (window = { replies: [], probes: [], rssPeakMb: rssBeforeMb });
    const report = await flood(order);
    await delay(TAIL_MS);
    await filled(flooded);
    return { report, quiet, flooded, rssBeforeMb };
  } finally {
    running = false;
    await Promise.all(loops);
  }
}

function flood(order: FloodOrder): Promise<Done> {
  const worker = new Worker(new URL('../support/socket-flooder.ts', import.meta.url), { workerData: order });
  return new Promise((resolve, reject) => {
    worker.on('message', (message: FloodReport) => {
      if (message.kind !== 'done') return;
      resolve(message);
      void worker.terminate();
    });
    worker.on('error', reject);
  });
}

/** The gateway process's resident set, in MB. */
function rssMb(): number {
  const status = readFileSync(`/proc/${gateway.child.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) / 1024;
}

function figures({ n, p50, p99, max }: ReturnType<typeof summary>): string {
  return `n=${n} p50=${p50} p99=${p99} max=${max} ms`;
}

function summary(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
  return { n: sorted.length, p50: at(0.5), p99: at(0.99), max: Math.round(sorted.at(-1) ?? NaN) };
}
