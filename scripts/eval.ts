/**
 * `npm run eval`: the retrieval quality eval (see retrieval-eval.ts) — recall@5 and nDCG@10 of BM25
 * alone, vector search alone (local embedder) and the hybrid engine, per split of questions, for
 * each eval set under test/fixtures/eval.
 *
 *   npm run eval                      the tables
 *   npm run eval -- --set company     one eval set
 *   npm run eval -- --misses          also every question hybrid does not fully answer in its top 5
 *   npm run eval -- --candidates 100  the hybrid engine fusing another number of candidates
 */

import { parseArgs } from 'node:util';
import { EVAL_SETS, evaluate, formatReport, RECALL_AT, type EvalResult } from './retrieval-eval.ts';

const { values } = parseArgs({
  options: {
    misses: { type: 'boolean', default: false },
    candidates: { type: 'string' },
    set: { type: 'string' },
  },
});

const sets = EVAL_SETS.filter((set) => values.set === undefined || set.name === values.set);
if (sets.length === 0) {
  console.error(`no eval set "${values.set}"; the sets are ${EVAL_SETS.map((set) => set.name).join(', ')}`);
  process.exit(2);
}
for (const set of sets) {
  const started = performance.now();
  const result = await evaluate({
    ...set,
    ...(values.candidates === undefined ? {} : { candidates: Number(values.candidates) }),
  });
  console.log(`\n${set.name}: ${formatReport(result)}`);
  console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);
  if (values.misses) printMisses(result);
}

function printMisses(result: EvalResult): void {
  console.log(`\nQuestions whose relevant chunks hybrid does not all return in its top ${RECALL_AT}:`);
  for (const { question, ranked, scores } of result.perQuestion) {
    if (scores.hybrid.recall === 1) continue;
    const labels = Object.entries(question.relevant)
      .map(([id, grade]) => `${id}(${grade})`)
      .join(' ');
    console.log(`\n${question.id} [${question.style}] ${question.question}\n  relevant: ${labels}`);
    for (const method of ['bm25', 'vector', 'hybrid'] as const) {
      const top = ranked[method]
        .slice(0, RECALL_AT)
        .map((id) => (id in question.relevant ? `*${id}` : id))
        .join(' ');
      console.log(`  ${method.padEnd(6)} R@${RECALL_AT}=${scores[method].recall.toFixed(2)}  ${top}`);
    }
  }
}
