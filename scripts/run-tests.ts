// Runs the whole suite with tap, then prints the plain summary line `N passed, N failed` computed from
// tap's saved per-file results: one count per top-level test of each file (skipped ones apart), and a
// file that crashed or printed no plan counts as one failure of its own.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Parser, type Result } from 'tap-parser';

const RESULTS = '.tap/test-results';
/** Lines of a failed assertion's diff printed in the summary. */
const DIFF_LINES = 16;

function resultFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? resultFiles(full) : full.endsWith('.tap') ? [full] : [];
  });
}

function countFile(file: string): { passed: number; failed: number; skipped: number; failures: string[] } {
  const tests: Result[] = [];
  let complete = false;
  let ok = true;
  const parser = new Parser((summary) => {
    complete = summary.plan.end !== null || summary.plan.skipAll;
    ok = summary.ok;
  });
  // The failed assertions inside each top-level test (a subtest's lines come before its own result),
  // with where they are and the start of their diff: printed under its name, so that a log's tail
  // says why it failed.
  const failures: string[] = [];
  let inside: string[] = [];
  const collect = (child: Parser): void => {
    child.on('child', collect);
    child.on('assert', (result: Result) => {
      if (!result.ok && !result.todo && !result.skip) inside.push(describe(result));
    });
  };
  parser.on('child', collect);
  parser.on('assert', (result: Result) => {
    tests.push(result);
    if (!result.ok && !result.skip && !result.todo) {
      const why = [...new Set(inside)].slice(0, 3).map((name) => `\n    ${name}`);
      failures.push(`${result.name}${why.join('')}`);
    }
    inside = [];
  });
  parser.end(readFileSync(file, 'utf8'));
  const skipped = tests.filter((r) => r.skip || r.todo).length;
  const passed = tests.filter((r) => r.ok && !r.skip && !r.todo).length;
  let failed = failures.length;
  if ((!complete || !ok) && failed === 0) {
    failed = 1;
    failures.push(complete ? 'failed' : 'ended without a plan (crashed or timed out)');
  }
  return { passed, failed, skipped, failures };
}

/** A failed assertion: its name, file and line, and the first lines of its diff. */
function describe(result: Result): string {
  const diag = (result.diag ?? {}) as { at?: { fileName?: string; lineNumber?: number }; diff?: string };
  const at = diag.at?.fileName ? ` (${diag.at.fileName}:${diag.at.lineNumber})` : '';
  const diff = (diag.diff ?? '').split('\n').filter((line) => line !== '');
  const shown = diff.slice(0, DIFF_LINES).map((line) => `\n      ${line}`);
  const more = diff.length > DIFF_LINES ? `\n      … ${diff.length - DIFF_LINES} more lines` : '';
  return `${result.name}${at}${shown.join('')}${more}`;
}

rmSync(RESULTS, { recursive: true, force: true });
// tap builds its Test class from the configured plugins; a fresh install holds the default build
// (with the ts-node plugin .taprc turns off), and tap would only notice after starting this run.
const build = spawnSync('tap', ['build'], { stdio: ['ignore', 'ignore', 'inherit'], shell: false });
if (build.status !== 0) {
  process.stdout.write('\n0 passed, 1 failed\n');
  process.exit(1);
}
const run = spawnSync('tap', process.argv.slice(2), { stdio: 'inherit', shell: false });
let passed = 0;
let failed = 0;
let skipped = 0;
const failures: string[] = [];
for (const file of resultFiles(RESULTS).sort()) {
  const counts = countFile(file);
  passed += counts.passed;
  failed += counts.failed;
  skipped += counts.skipped;
  const name = path.relative(RESULTS, file).replace(/\.tap$/, '');
  for (const failure of counts.failures) failures.push(`not ok: ${name} — ${failure}`);
}
// The failures again at the very end, where a CI log that keeps only its tail still shows them.
if (failures.length > 0) process.stdout.write(`\n${failures.join('\n')}\n`);
if (run.status !== 0 && failed === 0) failed = 1;
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(failed > 0 || run.status !== 0 ? 1 : 0);
