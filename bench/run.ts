/**
 * `npm run bench -- <name>`: runs one benchmark. Each benchmark module exports `run()`, which
 * prints its figures and resolves with the process exit code; it cleans up after itself, so the
 * process ends on its own.
 */

interface Benchmark {
  run(): Promise<number>;
}

const BENCHMARKS = new Map<string, () => Promise<Benchmark>>([
  ['read', () => import('./read-benchmark.ts')],
  ['chat', () => import('./chat-benchmark.ts')],
  ['actors', () => import('./actors-benchmark.ts')],
  ['webhooks', () => import('./webhooks-benchmark.ts')],
  ['retrieval', () => import('./retrieval-benchmark.ts')],
  ['widget', () => import('./widget-benchmark.ts')],
  ['scale', () => import('./scale-benchmark.ts')],
  ['resync', () => import('./resync-benchmark.ts')],
  ['auth', () => import('./auth-benchmark.ts')],
  ['stream', () => import('./stream-benchmark.ts')],
  ['startup', () => import('./startup-benchmark.ts')],
]);

const name = process.argv[2];
const load = name === undefined ? undefined : BENCHMARKS.get(name);
const known = [...BENCHMARKS.keys()].join(', ');

if (load === undefined) {
  const problem = name === undefined ? 'no benchmark given' : `unknown benchmark "${name}"`;
  console.error(`bench: ${problem}; known benchmarks: ${known} (usage: npm run bench -- <name>)`);
  process.exitCode = 1;
} else {
  try {
    const benchmark = await load();
    process.exitCode = await benchmark.run();
  } catch (error) {
    console.error(`bench: ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}
