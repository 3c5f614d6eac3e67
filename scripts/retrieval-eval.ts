/**
 * The retrieval quality eval: the labelled questions of test/fixtures/eval/questions.json asked of
 * the chunks of test/fixtures/eval/corpus.jsonl three ways — BM25 alone, vector search alone (the
 * `local` embedder) and the in-process engine's hybrid search (both fused by Reciprocal Rank Fusion)
 * — scored by recall@5 and nDCG@10. Every question, the out-of-scope ones too, also records the best
 * relevance of the passages a turn would get (relevance-calibration.ts reads them).
 *
 * BM25 and vector search run on their own `Bm25Index` and `VectorIndex`, built exactly as the
 * in-process engine builds its own (BM25 over `bm25Terms`, the engine's default HNSW
 * parameters), so each single method is scored as the hybrid engine sees it. Chunks are embedded
 * as ingestion embeds them (`title\ncontent`).
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Bm25Index } from '../src/rag/bm25-index.ts';
import type { ChunkRecord } from '../src/rag/chunk.ts';
import { CONTEXT_CHUNKS } from '../src/rag/hybrid-retriever.ts';
import { bm25Terms, InProcessSearchEngine } from '../src/rag/in-process-search-engine.ts';
import { bestRelevance } from '../src/rag/relevance-floor.ts';
import type { HybridHit } from '../src/rag/search-engine.ts';
import type { Embedder } from '../src/rag/embedder.ts';
import { LocalEmbedder } from '../src/rag/local-embedder.ts';
import { tokenize } from '../src/rag/text-tokenizer.ts';
import { VectorIndex, type VectorSearchMethod } from '../src/rag/vector-index.ts';

export const FIXTURE_DIR = path.resolve(import.meta.dirname, '../test/fixtures/eval');

/** The eval's sets: a corpus and its labelled questions. */
export interface EvalSet {
  name: string;
  corpusPath: string;
  questionsPath: string;
}

export const EVAL_SETS: readonly EvalSet[] = [
  {
    name: 'node-docs',
    corpusPath: path.join(FIXTURE_DIR, 'corpus.jsonl'),
    questionsPath: path.join(FIXTURE_DIR, 'questions.json'),
  },
  {
    name: 'company',
    corpusPath: path.join(FIXTURE_DIR, 'company/corpus.jsonl'),
    questionsPath: path.join(FIXTURE_DIR, 'company/questions.json'),
  },
];
export const METHODS = ['bm25', 'vector', 'hybrid'] as const;
export type Method = (typeof METHODS)[number];

/** How deep each ranking is read: recall at RECALL_AT, nDCG at NDCG_AT. */
export const RECALL_AT = 5;
export const NDCG_AT = 10;
export const CHATBOT_ID = 'eval';

/** One line of corpus.jsonl. */
export interface CorpusChunk {
  id: string;
  title: string;
  content: string;
}

/** A labelled question: the chunks that answer it, graded 2 (answers it) or 1 (partly, or a near copy). */
export interface EvalQuestion {
  id: string;
  question: string;
  /**
   * The kind of question, the eval's split: `keyword` questions name the API (or share the rare
   * words: `lexical`); `paraphrase` ones describe the need in other words; `disambiguation` ones name
   * one member of a family of near-duplicates; `conversational` ones are vague or misspelt;
   * `out-of-scope` ones (OUT_OF_SCOPE) are not answered by the corpus at all.
   */
  style: string;
  /** Empty for an out-of-scope question, at least one chunk for any other. */
  relevant: Record<string, number>;
  /**
   * The sentence of a grade-2 chunk that answers the question, verbatim. A paraphrase question that
   * gives it must share at most one content word (`tokenize`'s stems) with it.
   */
  answer?: string;
}

/** A method's mean scores over a set of questions. */
export interface Scores {
  recall: number;
  ndcg: number;
}

/** The split of questions that the corpus does not answer: they calibrate the relevance floor. */
export const OUT_OF_SCOPE = 'out-of-scope';

/** What a turn would get for a question: the best relevance among the hybrid top CONTEXT_CHUNKS. */
export interface RelevanceResult {
  question: EvalQuestion;
  bestRelevance: number;
}

/** One answerable question's rankings (top NDCG_AT ids per method), scores and relevance. */
export interface QuestionResult extends RelevanceResult {
  ranked: Record<Method, string[]>;
  scores: Record<Method, Scores>;
  /** Whether a chunk graded 2 is among the hybrid top CONTEXT_CHUNKS: the answer reaches the prompt. */
  answerInContext: boolean;
}

export interface EvalResult {
  /** The embedding space measured (the relevance floor is that space's). */
  space: string;
  documents: number;
  chunks: number;
  /** Answerable questions; the scores below are theirs. */
  questions: number;
  /** Candidates each method contributes to the hybrid fusion. */
  candidates: number;
  /** Mean scores over all questions, per method. */
  overall: Record<Method, Scores>;
  /** Mean scores per question style (the splits, in the order they first appear), per method. */
  byStyle: Record<string, { questions: number; scores: Record<Method, Scores> }>;
  /** Mean scores per half of the questions (see `halfOf`), per method. */
  byHalf: Record<Half, { questions: number; scores: Record<Method, Scores> }>;
  perQuestion: QuestionResult[];
  /** The out-of-scope questions' relevance. */
  outOfScope: RelevanceResult[];
}

export interface EvalOptions {
  corpusPath?: string;
  questionsPath?: string;
  /** The hybrid engine's `candidates` (default: the engine's own default). */
  candidates?: number;
  /** The embedder to measure (default: the `local` embedder). */
  embedder?: EvalEmbedder;
}

/** An embedder the eval can measure: it says how its vectors are searched. */
export type EvalEmbedder = Embedder & { vectorSearch: VectorSearchMethod };

/**
 * The two halves of the questions: `dev` (odd-numbered ids) is what retrieval settings are tuned on,
 * `held-out` (even-numbered ids) only checks that a change carries over to questions it was not
 * chosen on.
 */
export const HALVES = ['dev', 'held-out'] as const;
export type Half = (typeof HALVES)[number];

/** The half a question belongs to, by the parity of its number (`q001` → dev, `q002` → held-out). */
export function halfOf(question: EvalQuestion): Half {
  return Number(question.id.replace(/^\D+/, '')) % 2 === 1 ? 'dev' : 'held-out';
}

export function loadCorpus(file = path.join(FIXTURE_DIR, 'corpus.jsonl')): CorpusChunk[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as CorpusChunk);
}

export function loadQuestions(file = path.join(FIXTURE_DIR, 'questions.json')): EvalQuestion[] {
  const { questions } = JSON.parse(readFileSync(file, 'utf8')) as { questions: EvalQuestion[] };
  return questions;
}

/** The share of the relevant chunks found in the first `k` of a ranking. */
export function recallAt(ranked: readonly string[], relevant: Readonly<Record<string, number>>, k: number): number {
  const wanted = Object.keys(relevant).filter((id) => relevant[id]! > 0);
  if (wanted.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return wanted.filter((id) => top.has(id)).length / wanted.length;
}

/** Normalised discounted cumulative gain at `k`, with gain 2^grade − 1 and a log2(rank + 1) discount. */
export function ndcgAt(ranked: readonly string[], relevant: Readonly<Record<string, number>>, k: number): number {
  const gain = (grade: number) => 2 ** grade - 1;
  const dcg = ranked.slice(0, k).reduce((sum, id, i) => sum + gain(relevant[id] ?? 0) / Math.log2(i + 2), 0);
  const ideal = Object.values(relevant)
    .filter((grade) => grade > 0)
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((sum, grade, i) => sum + gain(grade) / Math.log2(i + 2), 0);
  return ideal === 0 ? 0 : dcg / ideal;
}

function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

function meanScores(results: QuestionResult[]): Record<Method, Scores> {
  const scores = {} as Record<Method, Scores>;
  for (const method of METHODS) {
    scores[method] = {
      recall: mean(results.map((result) => result.scores[method].recall)),
      ndcg: mean(results.map((result) => result.scores[method].ndcg)),
    };
  }
  return scores;
}

/** Most content words a paraphrase question may share with its answering sentence. */
export const PARAPHRASE_SHARED_WORDS = 1;

/** The content words (stems) a question shares with a text. */
export function sharedContentWords(question: string, text: string): string[] {
  const words = new Set(tokenize(text));
  return [...new Set(tokenize(question))].filter((word) => words.has(word));
}

/**
 * Checks that every labelled chunk exists, so a rebuilt corpus cannot silently void the labels, and
 * that every given answer is in a chunk that answers the question and, for a paraphrase, really is
 * said in other words.
 */
function checkLabels(questions: EvalQuestion[], chunks: ReadonlyMap<string, CorpusChunk>): void {
  const chunkIds = new Set(chunks.keys());
  const ids = new Set<string>();
  for (const question of questions) {
    if (ids.has(question.id)) throw new Error(`question id ${question.id} is used twice`);
    ids.add(question.id);
    const labelled = Object.entries(question.relevant);
    if (question.style === OUT_OF_SCOPE) {
      if (labelled.length > 0 || question.answer !== undefined) {
        throw new Error(`out-of-scope question ${question.id} labels a chunk or an answer`);
      }
      continue;
    }
    if (labelled.length === 0) throw new Error(`question ${question.id} has no relevant chunk`);
    for (const [id, grade] of labelled) {
      if (!chunkIds.has(id)) throw new Error(`question ${question.id} labels ${id}, which is not in the corpus`);
      if (grade !== 1 && grade !== 2) throw new Error(`question ${question.id} grades ${id} ${grade}, not 1 or 2`);
    }
    if (question.answer === undefined) continue;
    const answer = question.answer;
    const answering = labelled.some(([id, grade]) => grade === 2 && chunks.get(id)!.content.includes(answer));
    if (!answering) throw new Error(`question ${question.id}: its answer is not in a chunk graded 2`);
    const shared = sharedContentWords(question.question, answer);
    if (question.style === 'paraphrase' && shared.length > PARAPHRASE_SHARED_WORDS) {
      throw new Error(`paraphrase ${question.id} shares ${shared.join(', ')} with its answer`);
    }
  }
}

/** The three ways the eval searches a corpus, built as the in-process engine builds its own. */
export interface Searchers {
  bm25: Bm25Index;
  vectors: VectorIndex;
  engine: InProcessSearchEngine;
  records: ChunkRecord[];
}

export async function buildSearchers(
  corpus: CorpusChunk[],
  embedder: EvalEmbedder,
  candidates?: number,
): Promise<Searchers> {
  // The vector index as the gateway builds it for this embedder.
  const vectorIndex = { method: embedder.vectorSearch };
  const engine = new InProcessSearchEngine({
    dimensions: embedder.dimensions,
    vectorIndex,
    ...(candidates === undefined ? {} : { candidates }),
  });
  const bm25 = new Bm25Index();
  const vectors = new VectorIndex({ ...vectorIndex, dimensions: embedder.dimensions });
  const vectorsOfChunks = await embedder.embed(corpus.map((chunk) => `${chunk.title}\n${chunk.content}`));
  const records: ChunkRecord[] = corpus.map((chunk, i) => {
    const sourceId = chunk.id.slice(0, chunk.id.lastIndexOf(':'));
    return {
      id: chunk.id,
      chatbotId: CHATBOT_ID,
      sourceId,
      position: Number(chunk.id.slice(sourceId.length + 1)),
      title: chunk.title,
      url: `node:${sourceId}`,
      content: chunk.content,
      embedding: vectorsOfChunks[i]!,
    };
  });
  for (const record of records) {
    bm25.add(record.id, bm25Terms(record));
    vectors.add(record.id, record.embedding);
  }
  await engine.upsert(records);
  return { bm25, vectors, engine, records };
}

/** One answerable question's rankings, scores and relevance, from its hybrid hits. */
function scoreQuestion(question: EvalQuestion, embedding: Float32Array, hybridHits: HybridHit[], searchers: Searchers) {
  const ranked: Record<Method, string[]> = {
    bm25: searchers.bm25.search(tokenize(question.question), NDCG_AT).map((hit) => hit.id),
    vector: searchers.vectors.search(embedding, NDCG_AT).map((hit) => hit.id),
    hybrid: hybridHits.map((hit) => hit.chunk.id),
  };
  const scores = {} as Record<Method, Scores>;
  for (const method of METHODS) {
    scores[method] = {
      recall: recallAt(ranked[method], question.relevant, RECALL_AT),
      ndcg: ndcgAt(ranked[method], question.relevant, NDCG_AT),
    };
  }
  const context = hybridHits.slice(0, CONTEXT_CHUNKS);
  const answerInContext = context.some((hit) => question.relevant[hit.chunk.id] === 2);
  return { question, ranked, scores, bestRelevance: bestRelevance(context), answerInContext };
}

/**
 * Runs every question through BM25, vector search and hybrid search, and scores the rankings; the
 * out-of-scope questions through hybrid search alone, for their relevance.
 */
export async function evaluate(options: EvalOptions = {}): Promise<EvalResult> {
  const corpus = loadCorpus(options.corpusPath);
  const questions = loadQuestions(options.questionsPath);
  checkLabels(questions, new Map(corpus.map((chunk) => [chunk.id, chunk])));
  const embedder = options.embedder ?? new LocalEmbedder();
  const searchers = await buildSearchers(corpus, embedder, options.candidates);

  const queryVectors = await embedder.embed(questions.map((question) => question.question));
  const perQuestion: QuestionResult[] = [];
  const outOfScope: RelevanceResult[] = [];
  for (const [i, question] of questions.entries()) {
    const embedding = queryVectors[i]!;
    const query = { chatbotId: CHATBOT_ID, text: question.question, embedding, k: NDCG_AT };
    const hybridHits = await searchers.engine.search(query);
    if (question.style === OUT_OF_SCOPE) {
      outOfScope.push({ question, bestRelevance: bestRelevance(hybridHits.slice(0, CONTEXT_CHUNKS)) });
    } else {
      perQuestion.push(scoreQuestion(question, embedding, hybridHits, searchers));
    }
  }

  const ofStyle = (style: string) => perQuestion.filter((result) => result.question.style === style);
  const ofHalf = (half: Half) => perQuestion.filter((result) => halfOf(result.question) === half);
  return {
    space: embedder.space,
    documents: new Set(searchers.records.map((record) => record.sourceId)).size,
    chunks: corpus.length,
    questions: perQuestion.length,
    candidates: searchers.engine.candidates,
    overall: meanScores(perQuestion),
    byStyle: Object.fromEntries(
      [...new Set(perQuestion.map(({ question }) => question.style))].map((style) => [
        style,
        { questions: ofStyle(style).length, scores: meanScores(ofStyle(style)) },
      ]),
    ),
    byHalf: {
      dev: { questions: ofHalf('dev').length, scores: meanScores(ofHalf('dev')) },
      'held-out': { questions: ofHalf('held-out').length, scores: meanScores(ofHalf('held-out')) },
    },
    perQuestion,
    outOfScope,
  };
}

/** The result as a small plain-text table: every method's scores overall, per half and per split. */
export function formatReport(result: EvalResult): string {
  const row = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(22) : cell.padStart(13))).join('  ');
  const scoreCells = (scores: Record<Method, Scores>) =>
    METHODS.map((method) => `${scores[method].recall.toFixed(3)}/${scores[method].ndcg.toFixed(3)}`);
  const lines = [
    `${result.chunks} chunks from ${result.documents} documents; ${result.questions} questions ` +
      `(and ${result.outOfScope.length} out of scope); ` +
      `hybrid fuses the top ${result.candidates} of each method (RRF)`,
    '',
    row([`recall@${RECALL_AT}/nDCG@${NDCG_AT}`, ...METHODS]),
    row([`all (${result.questions})`, ...scoreCells(result.overall)]),
  ];
  for (const [style, { questions, scores }] of Object.entries(result.byStyle)) {
    lines.push(row([`${style} (${questions})`, ...scoreCells(scores)]));
  }
  for (const half of HALVES) {
    const { questions, scores } = result.byHalf[half];
    lines.push(row([`${half} half (${questions})`, ...scoreCells(scores)]));
  }
  return lines.join('\n');
}
