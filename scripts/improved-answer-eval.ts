/**
 * The improved-answer split of the retrieval eval (test/fixtures/eval/company/improved.json): answers
 * an owner wrote in the unanswered inbox, added to the company corpus as the feature adds them (a text
 * source titled with the question, its text by `improvedAnswerText`, parsed and chunked as the
 * ingestion worker does text), and later visitors' paraphrases of the questions, which must find them.
 * A paraphrase is answered when a chunk of its improved answer is in the hybrid top 5 (what the prompt
 * gets). Measured for the text the feature writes and, to compare, for the answer alone.
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chunkDocument } from '../src/ingest/chunk-document.ts';
import { parseText } from '../src/ingest/text-parser.ts';
import { CONTEXT_CHUNKS } from '../src/rag/hybrid-retriever.ts';
import { LocalEmbedder } from '../src/rag/local-embedder.ts';
import { improvedAnswerText, improvedAnswerTitle } from '../src/unanswered/improved-answer.ts';
import {
  buildSearchers,
  CHATBOT_ID,
  FIXTURE_DIR,
  loadCorpus,
  RECALL_AT,
  sharedContentWords,
  type CorpusChunk,
  type EvalEmbedder,
} from './retrieval-eval.ts';

export const IMPROVED_PATH = path.join(FIXTURE_DIR, 'company/improved.json');
const CORPUS_PATH = path.join(FIXTURE_DIR, 'company/corpus.jsonl');

/** One improved answer: the wordings asked, the owner's answer, later paraphrases. */
export interface ImprovedAnswerCase {
  id: string;
  asked: string[];
  answer: string;
  paraphrases: string[];
}

/** How an improved answer's source text is written. */
export type ImprovedTextVariant = 'questions and answer' | 'answer only';

/** One paraphrase: whether its improved answer reached the top 5, and at which rank (0 when not). */
export interface ImprovedQuestionResult {
  answer: string;
  question: string;
  half: 'dev' | 'held-out';
  rank: number;
  /** Content words (`tokenize`'s stems) it shares with the wording asked that it is closest to. */
  shared: number;
}

/** A paraphrase sharing at most this many content words with every wording asked is a hard one. */
export const HARD_SHARED_WORDS = 1;

export interface ImprovedAnswerResult {
  variant: ImprovedTextVariant;
  /** Paraphrases whose improved answer is in the hybrid top RECALL_AT. */
  recall: number;
  byHalf: Record<'dev' | 'held-out', number>;
  /** Paraphrases whose improved answer ranks first. */
  first: number;
  /** Recall of the hard paraphrases (HARD_SHARED_WORDS), and how many there are. */
  hard: { recall: number; questions: number };
  /** The wordings that were asked (the group's examples): they should find it every time. */
  askedRecall: number;
  questions: ImprovedQuestionResult[];
}

export function loadImprovedAnswers(file = IMPROVED_PATH): ImprovedAnswerCase[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { answers: ImprovedAnswerCase[] }).answers;
}

/** The chunks one improved answer's source becomes, as corpus lines (ids `improved-<id>:<n>`). */
export function improvedChunks(item: ImprovedAnswerCase, variant: ImprovedTextVariant): CorpusChunk[] {
  const text = variant === 'answer only' ? item.answer : improvedAnswerText(item.asked, item.answer);
  const title = improvedAnswerTitle(item.asked[0]!);
  const doc = { ...parseText('text.txt', new TextEncoder().encode(text)), title };
  const sourceId = `improved-${item.id}`;
  return chunkDocument(doc, { chatbotId: CHATBOT_ID, sourceId, url: '' }).map(({ id, content }) => ({
    id,
    title,
    content,
  }));
}

/** Asks every paraphrase (and every asked wording) of the company corpus plus all improved answers. */
export async function evaluateImprovedAnswers(
  variant: ImprovedTextVariant = 'questions and answer',
  embedder: EvalEmbedder = new LocalEmbedder(),
): Promise<ImprovedAnswerResult> {
  const items = loadImprovedAnswers();
  const corpus = [...loadCorpus(CORPUS_PATH), ...items.flatMap((item) => improvedChunks(item, variant))];
  const { engine } = await buildSearchers(corpus, embedder);
  const rankOf = async (item: ImprovedAnswerCase, question: string) => {
    const [embedding] = await embedder.embed([question]);
    const hits = await engine.search({ chatbotId: CHATBOT_ID, text: question, embedding: embedding!, k: RECALL_AT });
    const at = hits.slice(0, CONTEXT_CHUNKS).findIndex((hit) => hit.chunk.sourceId === `improved-${item.id}`);
    return at + 1;
  };
  const questions: ImprovedQuestionResult[] = [];
  let askedFound = 0;
  let asked = 0;
  for (const item of items) {
    const half = Number(item.id.replace(/^\D+/, '')) % 2 === 1 ? 'dev' : 'held-out';
    for (const question of item.paraphrases) {
      const shared = Math.max(...item.asked.map((wording) => sharedContentWords(question, wording).length));
      questions.push({ answer: item.id, question, half, rank: await rankOf(item, question), shared });
    }
    for (const question of item.asked) {
      asked += 1;
      if ((await rankOf(item, question)) > 0) askedFound += 1;
    }
  }
  const share = (list: ImprovedQuestionResult[]) => list.filter((q) => q.rank > 0).length / list.length;
  const hard = questions.filter((q) => q.shared <= HARD_SHARED_WORDS);
  return {
    variant,
    recall: share(questions),
    byHalf: {
      dev: share(questions.filter((q) => q.half === 'dev')),
      'held-out': share(questions.filter((q) => q.half === 'held-out')),
    },
    first: questions.filter((q) => q.rank === 1).length / questions.length,
    hard: { recall: share(hard), questions: hard.length },
    askedRecall: askedFound / asked,
    questions,
  };
}

/** The split's lines of `npm run eval`. */
export function formatImproved(results: ImprovedAnswerResult[]): string {
  const count = results[0]?.questions.length ?? 0;
  const lines = [
    `improved answers: ${loadImprovedAnswers().length} answers added to the company corpus, ${count} paraphrases; ` +
      `hybrid recall@${RECALL_AT} of the improved answer`,
  ];
  for (const result of results) {
    lines.push(
      `  ${result.variant.padEnd(22)} paraphrases ${result.recall.toFixed(3)} ` +
        `(dev ${result.byHalf.dev.toFixed(3)}, held-out ${result.byHalf['held-out'].toFixed(3)}), ` +
        `first ${result.first.toFixed(3)}; the ${result.hard.questions} sharing at most ${HARD_SHARED_WORDS} content ` +
        `word with the question ${result.hard.recall.toFixed(3)}; the wordings asked ${result.askedRecall.toFixed(3)}`,
    );
  }
  return lines.join('\n');
}
