/**
 * Helpers the chat and actors benchmarks share (the read benchmark keeps its own copies): the
 * BENCH_DURATION override, the machine line, and millisecond formatting.
 */

import { readFile } from 'node:fs/promises';
import os from 'node:os';

/** BENCH_DURATION, in whole seconds, or the benchmark's default when it is unset. */
export function durationSeconds(value: string | undefined, defaultSeconds: number): number {
  if (value === undefined || value === '') return defaultSeconds;
  if (!/^[1-9]\d*$/.test(value)) {
    throw new Error(`BENCH_DURATION must be a positive whole number of seconds, got "${value}"`);
  }
  return Number(value);
}

/** CPU model (from /proc/cpuinfo where there is one), usable cores, Node version. */
export async function describeMachine(): Promise<string> {
  let model: string | undefined;
  try {
    const cpuinfo = await readFile('/proc/cpuinfo', 'utf8');
    model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim();
  } catch {
    // Not Linux: fall back to what os.cpus() reports.
  }
  model ??= os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  const cores = os.availableParallelism();
  return `${model}, ${cores} ${cores === 1 ? 'core' : 'cores'}, Node ${process.version}`;
}

/**
 * Milliseconds as autocannon records them, whole and truncated: 0 means under 1 ms, 3 means 3 to 4 ms.
 * Exact figures from elsewhere are truncated the same way.
 */
export function millis(value: number): string {
  const whole = Math.floor(value);
  return whole === 0 ? '<1' : String(whole);
}

/** The median and the 99th percentile of latencies (the value at rank ⌊q·n⌋; 0 for none). */
export function percentiles(values: number[]): { p50: number; p99: number } {
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99) };
}
