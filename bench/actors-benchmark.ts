/**
 * The actors benchmark: the conversation router and its nact actors alone, over instant in-memory
 * fakes of the stores, retrieval, LLM and events (bench/actors-child.ts). Three figures, each in a
 * child process of its own run with `--expose-gc`: heap bytes per idle conversation actor, messages
 * per second through `router.send`, and the process's RSS after one message to each of a million
 * conversations with passivation on. A bare nact actor per session, answering at once, is measured
 * first in the same child as the baseline for the first two.
 */

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  BATCH,
  IDLE_ACTORS,
  PASSIVATION_IDLE_MS,
  THROUGHPUT_MESSAGES,
  THROUGHPUT_SESSIONS,
  TOUCHED_CONVERSATIONS,
  type IdleMemoryResult,
  type PassivationResult,
  type ThroughputResult,
} from './actors-child.ts';
import { describeMachine } from './bench-support.ts';

const NODE = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
const CHILD = fileURLToPath(new URL('./actors-child.ts', import.meta.url));
const MIB = 1024 * 1024;

const TARGET_IDLE_BYTES = 2048;
const TARGET_RSS_MIB = 1536;

/** A child process failed; the message is its one-line reason. */
class FigureFailed extends Error {
  override name = 'FigureFailed';
}

export async function run(): Promise<number> {
  const machine = await describeMachine();
  console.log(
    'actors benchmark: ConversationRouter and its nact actors with instant in-memory fakes of Redis, retrieval, ' +
      'LLM and events; each figure in its own node --expose-gc process',
  );
  console.log(`machine: ${machine}`);

  let idle: IdleMemoryResult;
  let speed: ThroughputResult;
  let touched: PassivationResult;
  try {
    idle = await figure<IdleMemoryResult>('idle-memory');
    speed = await figure<ThroughputResult>('throughput');
    touched = await figure<PassivationResult>('passivation');
  } catch (error) {
    if (!(error instanceof FigureFailed)) throw error;
    console.error(`bench: ${error.message}`);
    return 1;
  }
  printReport(idle, speed, touched, machine);
  return 0;
}

function printReport(idle: IdleMemoryResult, speed: ThroughputResult, touched: PassivationResult, machine: string) {
  const rssMib = touched.rssBytes / MIB;
  const ratio = speed.routerPerSec / speed.bareNactPerSec;

  console.log('');
  console.log(
    `1. heap per idle actor: ${IDLE_ACTORS} sessions sent one message each and left live (idle time 24 h), ` +
      'heap used after a forced GC minus before',
  );
  console.log(row('   bare nact actor (baseline)', `${idle.bareNactBytes.toFixed(0)} B`));
  console.log(
    row(
      '   conversation actor',
      `${idle.conversationBytes.toFixed(0)} B`,
      `target ≤ ${TARGET_IDLE_BYTES} B: ${verdict(idle.conversationBytes <= TARGET_IDLE_BYTES)}`,
    ),
  );
  console.log(
    `2. dispatch, ${speed.messages} messages to ${speed.sessions} live sessions, ${speed.sessions} in flight`,
  );
  console.log(row('   bare nact actor (baseline)', `${speed.bareNactPerSec.toFixed(0)} msg/s`));
  console.log(row('   router.send', `${speed.routerPerSec.toFixed(0)} msg/s`, 'no target'));
  console.log(`   ratio router/bare nact: ${ratio.toFixed(2)}`);
  console.log(
    `3. ${touched.conversations} conversations touched once each, ${BATCH} at a time, ` +
      `passivation after ${touched.idleMs} ms idle (sweep every ${touched.idleMs} ms)`,
  );
  console.log(
    row(
      '   RSS after a forced GC',
      `${rssMib.toFixed(0)} MiB`,
      `target ≤ ${TARGET_RSS_MIB} MiB: ${verdict(rssMib <= TARGET_RSS_MIB)}`,
    ),
  );
  console.log(
    row(
      '   heap used / heap total',
      `${(touched.heapUsedBytes / MIB).toFixed(0)} / ${(touched.heapTotalBytes / MIB).toFixed(0)} MiB`,
      'the rest of RSS is mostly pages V8 keeps after the garbage of the run',
    ),
  );
  console.log(
    row('   router.size at the end', String(touched.liveAtEnd), `at most ${touched.peakLive} after any batch`),
  );
  console.log(
    row(
      '   touch rate',
      `${(touched.conversations / touched.seconds).toFixed(0)} /s`,
      `spawn, one turn, passivation; ${touched.seconds.toFixed(1)} s`,
    ),
  );
  console.log('');
  console.log(
    'README row (| benchmark | bytes per idle actor | router.send msg/s | bare nact msg/s | ratio | ' +
      'RSS after 1M conversations | machine |):',
  );
  const cells = [
    `\`actors\`: router over instant fakes; ${IDLE_ACTORS} idle actors; ${THROUGHPUT_MESSAGES} messages to ` +
      `${THROUGHPUT_SESSIONS} sessions; ${TOUCHED_CONVERSATIONS} conversations with ${PASSIVATION_IDLE_MS} ms ` +
      `passivation (${touched.liveAtEnd} live at the end)`,
    idle.conversationBytes.toFixed(0),
    speed.routerPerSec.toFixed(0),
    speed.bareNactPerSec.toFixed(0),
    ratio.toFixed(2),
    `${rssMib.toFixed(0)} MiB`,
    machine,
  ];
  console.log(`| ${cells.join(' | ')} |`);
}

/** Runs one figure in a child process under --expose-gc and parses the JSON line it prints. */
function figure<T>(name: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, ['--expose-gc', CHILD, name], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) {
        try {
          resolve(JSON.parse(stdout) as T);
        } catch {
          reject(new FigureFailed(`${name}: the child printed no result: ${stdout.trim() || '(nothing)'}`));
        }
        return;
      }
      const reason = stderr.trim().split('\n').at(-1) || `exit ${code ?? signal}`;
      reject(new FigureFailed(`${name}: ${reason}`));
    });
  });
}

function verdict(met: boolean): string {
  return met ? 'met' : 'not met';
}

function row(...cells: string[]): string {
  const [label = '', value = '', note = ''] = cells;
  return `${label.padEnd(32)}${value.padStart(14)}   ${note}`.trimEnd();
}
