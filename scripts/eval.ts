/**
 * `npm run eval`: the retrieval quality eval (see retrieval-eval.ts) — recall@5 and nDCG@10 of BM25
 * alone, vector search alone (local embedder) and the hybrid engine, per split of questions, for
 * each eval set under test/fixtures/eval — and the relevance floor's calibration (see
 * relevance-calibration.ts): the best relevance of answerable and out-of-scope questions, what
 * candidate floors keep and refuse, and the floor the rule chooses against the one shipped; the
 * unanswered inbox's grouping threshold (see grouping-calibration.ts) and, with the company set, its
 * improved-answer split (see improved-answer-eval.ts).
 *
 *   npm run eval                      the tables
 *   npm run eval -- --set company     one eval set
 *   npm run eval -- --misses          also every question hybrid does not fully answer in its top 5
 *   npm run eval -- --candidates 100  the hybrid engine fusing another number of candidates
 */

import { parseArgs } from 'node:util';
import { relevanceFloor } from '../src/rag/relevance-floor.ts';
import { CANDIDATE_FLOORS, chooseFloor, formatCalibration, FLOOR_RULE } from './relevance-calibration.ts';
import { EVAL_SETS, evaluate, formatReport, RECALL_AT, type EvalResult } from './retrieval-eval.ts';
import { GROUPING_THRESHOLDS } from '../src/unanswered/grouping-threshold.ts';
import { CANDIDATE_THRESHOLDS, chooseThreshold, formatGrouping, measurePairs } from './grouping-calibration.ts';
import { evaluateImprovedAnswers, formatImproved } from './improved-answer-eval.ts';

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
const results: EvalResult[] = [];
for (const set of sets) {
  const started = performance.now();
  const result = await evaluate({
    ...set,
    ...(values.candidates === undefined ? {} : { candidates: Number(values.candidates) }),
  });
  results.push(result);
  console.log(`\n${set.name}: ${formatReport(result)}`);
  console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);
  if (values.misses) printMisses(result);
}
const shipped = relevanceFloor(results[0]!.space);
const floors = [...new Set([...CANDIDATE_FLOORS, shipped])].sort((a, b) => a - b);
for (const [i, result] of results.entries()) console.log(`\n${sets[i]!.name}: ${formatCalibration(result, floors)}`);
console.log(
  `\nrelevance floor chosen by the rule (≥ ${FLOOR_RULE.keep * 100} % of the ${FLOOR_RULE.half} half's answerable ` +
    `questions whose answer is in the top ${RECALL_AT} kept, in ${sets.map((set) => set.name).join(' and ')}): ` +
    `${chooseFloor(results)}; shipped for ${results[0]!.space}: ${shipped}`,
);

if (sets.some((set) => set.name === 'company')) {
  const improved = [
    await evaluateImprovedAnswers('questions and answer'),
    await evaluateImprovedAnswers('answer only'),
  ];
  console.log(`\ncompany: ${formatImproved(improved)}`);
}
const pairs = await measurePairs();
const thresholds = [...new Set([...CANDIDATE_THRESHOLDS, chooseThreshold(pairs)])].sort((a, b) => a - b);
console.log(
  `\nunanswered questions: pairs grouped by the cosine of their embeddings\n${formatGrouping(pairs, thresholds)}`,
);
console.log(
  `grouping threshold chosen by the rule (the lowest that groups no near-miss or unrelated pair of the dev half): ` +
    `${chooseThreshold(pairs)}; shipped for ${results[0]!.space}: ${GROUPING_THRESHOLDS[results[0]!.space] ?? 'none'}`,
);

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
