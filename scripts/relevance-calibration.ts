/**
 * The relevance floor's calibration (docs/decisions.md, "The relevance floor"): how the best
 * relevance a turn would get is spread over an eval set's answerable questions (per split) and its
 * out-of-scope ones, what a candidate floor keeps and refuses, and the floor the rule chooses.
 *
 * A question is refused when its best relevance is below the floor, kept when at or above it.
 */

import { CONTEXT_CHUNKS } from '../src/rag/hybrid-retriever.ts';
import { HALVES, halfOf, OUT_OF_SCOPE, type EvalResult, type Half, type RelevanceResult } from './retrieval-eval.ts';

/** The floors the calibration table shows (the chosen one is added where it is not among them). */
export const CANDIDATE_FLOORS: readonly number[] = [0.15, 0.2, 0.22, 0.24, 0.26, 0.28, 0.3, 0.35, 0.4];

/**
 * The rule: the highest floor, in steps of 0.01, that keeps at least 95 % of the answerable
 * questions whose answer reaches the prompt (a chunk graded 2 in the hybrid top 5), in the dev half
 * of every set; the held-out half then shows whether it carries over.
 */
export const FLOOR_RULE = { keep: 0.95, half: 'dev' as Half, step: 0.01 };

/** How many of how many questions. */
export interface Share {
  count: number;
  of: number;
}

/** What one floor does to an eval set's questions. */
export interface FloorRow {
  floor: number;
  /** Answerable questions whose answer reaches the prompt, kept: all of them and per half. */
  kept: Record<'all' | Half, Share>;
  /** Out-of-scope questions refused: all of them and per half. */
  outOfScopeRefused: Record<'all' | Half, Share>;
  /** Answerable questions whose answer does not reach the prompt, refused (no answer is in the sources given). */
  missedRefused: Share;
}

/** The best relevance of a group of questions, as quantiles. */
export interface Distribution {
  label: string;
  count: number;
  /** At QUANTILES. */
  quantiles: number[];
}

/** min, 5th percentile, quartiles, 95th percentile, max. */
export const QUANTILES: readonly number[] = [0, 0.05, 0.25, 0.5, 0.75, 0.95, 1];

function share(results: RelevanceResult[], counted: (result: RelevanceResult) => boolean): Share {
  return { count: results.filter(counted).length, of: results.length };
}

function byHalf(results: RelevanceResult[], counted: (result: RelevanceResult) => boolean) {
  const ofHalf = (half: Half) => results.filter((result) => halfOf(result.question) === half);
  return {
    all: share(results, counted),
    dev: share(ofHalf('dev'), counted),
    'held-out': share(ofHalf('held-out'), counted),
  };
}

/** What `floor` keeps and refuses of a set's questions. */
export function floorRow(result: EvalResult, floor: number): FloorRow {
  const answered = result.perQuestion.filter((question) => question.answerInContext);
  const missed = result.perQuestion.filter((question) => !question.answerInContext);
  const kept = (question: RelevanceResult) => question.bestRelevance >= floor;
  const refused = (question: RelevanceResult) => question.bestRelevance < floor;
  return {
    floor,
    kept: byHalf(answered, kept),
    outOfScopeRefused: byHalf(result.outOfScope, refused),
    missedRefused: share(missed, refused),
  };
}

/** The floor FLOOR_RULE chooses over the sets (all measured in the same embedding space). */
export function chooseFloor(results: EvalResult[], rule = FLOOR_RULE): number {
  const spaces = new Set(results.map((result) => result.space));
  if (spaces.size !== 1) throw new Error(`a floor is chosen within one embedding space, not ${[...spaces].join(', ')}`);
  const holds = (floor: number) =>
    results.every((result) => {
      const { count, of } = floorRow(result, floor).kept[rule.half];
      return count >= rule.keep * of;
    });
  let chosen = 0;
  for (let step = 1; step * rule.step <= 1 && holds(round(step * rule.step)); step++) chosen = round(step * rule.step);
  return chosen;
}

/** The best relevance per split of answerable questions, by whether the answer reached the prompt, and out of scope. */
export function relevanceDistributions(result: EvalResult): Distribution[] {
  const groups: Array<[string, RelevanceResult[]]> = [];
  for (const style of Object.keys(result.byStyle)) {
    groups.push([style, result.perQuestion.filter(({ question }) => question.style === style)]);
  }
  groups.push(
    ['all answerable', result.perQuestion],
    [`answer in the top ${CONTEXT_CHUNKS}`, result.perQuestion.filter((question) => question.answerInContext)],
    [`answer not in the top ${CONTEXT_CHUNKS}`, result.perQuestion.filter((question) => !question.answerInContext)],
    [OUT_OF_SCOPE, result.outOfScope],
  );
  return groups.map(([label, results]) => {
    const sorted = results.map((question) => question.bestRelevance).sort((a, b) => a - b);
    const at = (q: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.round(q * (sorted.length - 1))]!);
    return { label, count: sorted.length, quantiles: QUANTILES.map(at) };
  });
}

/** The distributions and the table of candidate floors, as plain text. */
export function formatCalibration(result: EvalResult, floors: readonly number[]): string {
  const cells = (cells: string[], widths: number[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[i]!))).join('  ');
  const distributionWidths = [30, 4, ...QUANTILES.map(() => 5)];
  const lines = [
    `best relevance of the ${CONTEXT_CHUNKS} passages a turn gets (${result.space}):`,
    '',
    cells(['questions', 'n', 'min', 'p05', 'p25', 'p50', 'p75', 'p95', 'max'], distributionWidths),
  ];
  for (const { label, count, quantiles } of relevanceDistributions(result)) {
    lines.push(cells([label, String(count), ...quantiles.map((q) => q.toFixed(3))], distributionWidths));
  }
  const tableWidths = [5, 13, 13, 13, 13, 13, 13, 13];
  const shareCell = ({ count, of }: Share) => `${(of === 0 ? 0 : count / of).toFixed(3)} ${count}/${of}`.padStart(13);
  lines.push(
    '',
    `floor  ${'kept: answer in the top 5'.padEnd(43)}  ${'refused: out of scope'.padEnd(43)}  refused: answer`,
    cells(['', 'all', 'dev', 'held-out', 'all', 'dev', 'held-out', 'not in top 5'], tableWidths),
  );
  for (const floor of floors) {
    const row = floorRow(result, floor);
    const halves = (shares: Record<'all' | Half, Share>) => [shares.all, ...HALVES.map((half) => shares[half])];
    lines.push(
      cells(
        [
          floor.toFixed(2),
          ...halves(row.kept).map(shareCell),
          ...halves(row.outOfScopeRefused).map(shareCell),
          shareCell(row.missedRefused),
        ],
        tableWidths,
      ),
    );
  }
  return lines.join('\n');
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
