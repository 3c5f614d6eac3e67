/**
 * The unanswered inbox's grouping threshold (docs/decisions.md, "Unanswered questions and improved
 * answers"): the cosine of the embeddings of pairs of visitor questions
 * (test/fixtures/unanswered/question-pairs.json): paraphrases, which should share a group, and
 * near misses and unrelated questions, which must not. A pair is grouped when its cosine reaches the
 * threshold (as `nearestGroup` does).
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Embedder } from '../src/rag/embedder.ts';
import { LocalEmbedder } from '../src/rag/local-embedder.ts';
import { chunkRelevance } from '../src/rag/relevance-floor.ts';

export const PAIRS_PATH = path.resolve(import.meta.dirname, '../test/fixtures/unanswered/question-pairs.json');

/** The kinds of pairs: the first should be grouped, the others must not. */
export const PAIR_KINDS = ['paraphrase', 'near-miss', 'unrelated'] as const;
export type PairKind = (typeof PAIR_KINDS)[number];
type Half = 'dev' | 'held-out';

export interface QuestionPair {
  id: string;
  kind: PairKind;
  a: string;
  b: string;
}

/** A pair and the cosine of its questions' embeddings. */
export interface MeasuredPair extends QuestionPair {
  cosine: number;
}

/**
 * The rule: the lowest threshold, in steps of 0.01, that groups no near-miss or unrelated pair of the
 * dev half (odd ids). Merging two different questions is the costly mistake (an answer written for
 * one would resolve the other); splitting one question in two only shows it twice.
 */
export const THRESHOLD_RULE = { half: 'dev' as Half, step: 0.01 };

/** The thresholds the table shows (the chosen one is added where it is not among them). */
export const CANDIDATE_THRESHOLDS: readonly number[] = [0.7, 0.75, 0.8, 0.82, 0.84, 0.86, 0.88, 0.9, 0.95];

export function loadPairs(file = PAIRS_PATH): QuestionPair[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { pairs: QuestionPair[] }).pairs;
}

/** The half a pair belongs to, by the parity of its number (`p01` → dev, `p02` → held-out). */
export function halfOf(pair: { id: string }): Half {
  return Number(pair.id.replace(/^\D+/, '')) % 2 === 1 ? 'dev' : 'held-out';
}

/** Every pair's cosine with `embedder` (the local one by default). */
export async function measurePairs(
  embedder: Embedder = new LocalEmbedder(),
  pairs = loadPairs(),
): Promise<MeasuredPair[]> {
  const vectors = await embedder.embed(pairs.flatMap((pair) => [pair.a, pair.b]));
  return pairs.map((pair, i) => ({
    ...pair,
    cosine: chunkRelevance(vectors[2 * i]!, { embedding: vectors[2 * i + 1]! }),
  }));
}

/** The threshold THRESHOLD_RULE chooses. */
export function chooseThreshold(measured: MeasuredPair[], rule = THRESHOLD_RULE): number {
  const apart = measured.filter((pair) => pair.kind !== 'paraphrase' && halfOf(pair) === rule.half);
  const highest = Math.max(0, ...apart.map((pair) => pair.cosine));
  // The first step above the highest cosine (a pair exactly at a step would be grouped).
  const steps = Math.floor(highest / rule.step + 1e-9) + 1;
  return Math.round(steps * rule.step * 100) / 100;
}

/** How many pairs of a kind (and half) a threshold groups, as `count/of`. */
export function grouped(measured: MeasuredPair[], threshold: number, kind: PairKind, half?: Half): string {
  const pairs = measured.filter((pair) => pair.kind === kind && (half === undefined || halfOf(pair) === half));
  return `${pairs.filter((pair) => pair.cosine >= threshold).length}/${pairs.length}`;
}

/** The table `npm run eval` prints: per threshold, the pairs grouped by kind and half. */
export function formatGrouping(measured: MeasuredPair[], thresholds: readonly number[]): string {
  const cell = (text: string, width: number) => text.padStart(width);
  const header = ['threshold', 'paraphrases: dev', 'held-out', 'near misses: dev', 'held-out', 'unrelated: all'];
  const widths = header.map((title) => Math.max(title.length, 9));
  const lines = [header.map((title, i) => cell(title, widths[i]!)).join('  ')];
  for (const threshold of thresholds) {
    const row = [
      threshold.toFixed(2),
      grouped(measured, threshold, 'paraphrase', 'dev'),
      grouped(measured, threshold, 'paraphrase', 'held-out'),
      grouped(measured, threshold, 'near-miss', 'dev'),
      grouped(measured, threshold, 'near-miss', 'held-out'),
      grouped(measured, threshold, 'unrelated'),
    ];
    lines.push(row.map((text, i) => cell(text, widths[i]!)).join('  '));
  }
  const highest = (kind: PairKind) => Math.max(...measured.filter((p) => p.kind === kind).map((p) => p.cosine));
  const lowest = Math.min(...measured.filter((p) => p.kind === 'paraphrase').map((p) => p.cosine));
  lines.push(
    '',
    `cosines: paraphrases ${lowest.toFixed(3)} to ${highest('paraphrase').toFixed(3)}, ` +
      `near misses up to ${highest('near-miss').toFixed(3)}, unrelated up to ${highest('unrelated').toFixed(3)}`,
  );
  return lines.join('\n');
}
