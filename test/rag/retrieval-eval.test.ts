import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { buildCorpus, EXPECTED_VERSION } from '../../scripts/build-eval-corpus.ts';
import {
  EVAL_SETS,
  evaluate,
  halfOf,
  loadCorpus,
  ndcgAt,
  PARAPHRASE_SHARED_WORDS,
  recallAt,
  sharedContentWords,
} from '../../scripts/retrieval-eval.ts';

const result = await evaluate();
const { bm25, vector, hybrid } = result.overall;
const company = await evaluate(EVAL_SETS.find((set) => set.name === 'company'));

t.test('the eval set is at the size the issue asks for', async (t) => {
  t.ok(result.chunks >= 1000, `${result.chunks} chunks`);
  t.ok(result.questions >= 100, `${result.questions} questions`);
});

// Issue 4's target, on all questions. The local embedder's settings were chosen on the dev half
// (odd-numbered questions); see scripts/retrieval-eval.ts and docs/decisions.md.
t.test('hybrid recall@5 is at least that of the better single method', async (t) => {
  t.ok(
    hybrid.recall >= Math.max(bm25.recall, vector.recall),
    `hybrid ${hybrid.recall.toFixed(3)} vs bm25 ${bm25.recall.toFixed(3)}, vector ${vector.recall.toFixed(3)}`,
  );
});

t.test('hybrid nDCG@10 is at least that of the better single method', async (t) => {
  t.ok(
    hybrid.ndcg >= Math.max(bm25.ndcg, vector.ndcg),
    `hybrid ${hybrid.ndcg.toFixed(3)} vs bm25 ${bm25.ndcg.toFixed(3)}, vector ${vector.ndcg.toFixed(3)}`,
  );
});

t.test("regression floors: today's figures must not get worse", async (t) => {
  t.ok(bm25.recall >= 0.7, `bm25 recall@5 ${bm25.recall.toFixed(3)}`);
  t.ok(vector.recall >= 0.63, `vector recall@5 ${vector.recall.toFixed(3)}`);
  t.ok(hybrid.recall >= 0.73, `hybrid recall@5 ${hybrid.recall.toFixed(3)}`);
  t.ok(hybrid.ndcg >= 0.72, `hybrid nDCG@10 ${hybrid.ndcg.toFixed(3)}`);
  const heldOut = result.byHalf['held-out'].scores;
  t.ok(heldOut.hybrid.recall >= heldOut.bm25.recall, 'held-out half: hybrid recall@5 at least BM25');
  t.ok(heldOut.hybrid.ndcg >= heldOut.bm25.ndcg, 'held-out half: hybrid nDCG@10 at least BM25');
});

// Issue 26: a paraphrase split of at least 60 questions written fresh, each sharing at most one content
// word with the sentence that answers it (evaluate checks every one), among near-duplicate documents.
t.test('the company set has the paraphrase split the issue asks for', async (t) => {
  t.equal(company.documents, 68);
  t.equal(company.chunks, 82);
  t.same(Object.fromEntries(Object.entries(company.byStyle).map(([style, { questions }]) => [style, questions])), {
    paraphrase: 104,
    disambiguation: 24,
    lexical: 16,
    conversational: 16,
  });
  t.ok(
    company.perQuestion.every(({ question }) => question.answer !== undefined),
    'every question gives its answer',
  );
  t.equal(PARAPHRASE_SHARED_WORDS, 1);
  t.same(sharedContentWords('How heavy is the foldable bike?', 'The folding bike weighs 16 kg.'), ['bike']);
});

t.test('a paraphrase that shares more than one content word with its answer is refused', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'eval-'));
  t.teardown(() => rmSync(dir, { recursive: true }));
  const corpusPath = path.join(dir, 'corpus.jsonl');
  const questionsPath = path.join(dir, 'questions.json');
  writeFileSync(
    corpusPath,
    `${JSON.stringify({ id: 'bike:0', title: 'Bike', content: 'The folding bike weighs 16 kg.' })}\n`,
  );
  const ask = (question: string, answer: string) =>
    writeFileSync(
      questionsPath,
      JSON.stringify({ questions: [{ id: 'c001', question, style: 'paraphrase', relevant: { 'bike:0': 2 }, answer }] }),
    );
  ask('How much does the folding bike weigh?', 'The folding bike weighs 16 kg.');
  await t.rejects(evaluate({ corpusPath, questionsPath }), {
    message: 'paraphrase c001 shares fold, bike, weigh with its answer',
  });
  ask('How heavy is it?', 'The folding bike weighs 17 kg.');
  await t.rejects(evaluate({ corpusPath, questionsPath }), {
    message: 'question c001: its answer is not in a chunk graded 2',
  });
  ask('How heavy is it?', 'The folding bike weighs 16 kg.');
  t.equal((await evaluate({ corpusPath, questionsPath })).questions, 1);
});

// Today's figures on the company set (issue 26: no split worse than before its work).
t.test('company set floors, per split', async (t) => {
  const recall = (style: string) => company.byStyle[style]!.scores.hybrid.recall;
  t.ok(recall('paraphrase') >= 0.46, `paraphrase hybrid recall@5 ${recall('paraphrase').toFixed(3)}`);
  t.equal(recall('disambiguation'), 1);
  t.ok(recall('lexical') >= 0.96, `lexical hybrid recall@5 ${recall('lexical').toFixed(3)}`);
  t.ok(recall('conversational') >= 0.93, `conversational hybrid recall@5 ${recall('conversational').toFixed(3)}`);
});

t.test('the questions split into a dev and a held-out half by number', async (t) => {
  const question = (id: string) => ({ id, question: '', style: 'keyword' as const, relevant: {} });
  t.equal(halfOf(question('q001')), 'dev');
  t.equal(halfOf(question('q002')), 'held-out');
  t.equal(halfOf(question('q195')), 'dev');
  t.equal(result.byHalf.dev.questions, 98);
  t.equal(result.byHalf['held-out'].questions, 97);
});

t.test('recall@k and nDCG@k follow their definitions', async (t) => {
  const relevant = { a: 2, b: 1 };
  t.equal(recallAt(['x', 'a', 'y'], relevant, 2), 0.5);
  t.equal(recallAt(['b', 'a'], relevant, 2), 1);
  t.equal(ndcgAt(['a', 'b'], relevant, 10), 1);
  // Gains 3 and 1: the ideal order scores 3 + 1/log2(3); swapped, 1 + 3/log2(3).
  t.equal(ndcgAt(['b', 'a'], relevant, 10), (1 + 3 / Math.log2(3)) / (3 + 1 / Math.log2(3)));
  t.equal(ndcgAt(['x', 'y'], relevant, 10), 0);
});

const typesVersion = (
  JSON.parse(
    readFileSync(path.resolve(import.meta.dirname, '../../node_modules/@types/node/package.json'), 'utf8'),
  ) as {
    version: string;
  }
).version;

t.test(
  'the build script reproduces the committed corpus',
  { skip: typesVersion === EXPECTED_VERSION ? false : `@types/node is ${typesVersion}, not ${EXPECTED_VERSION}` },
  async (t) => {
    t.same(buildCorpus(), loadCorpus());
  },
);
