import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { buildCorpus, EXPECTED_VERSION } from '../../scripts/build-eval-corpus.ts';
import { CANDIDATE_FLOORS, chooseFloor, floorRow, FLOOR_RULE } from '../../scripts/relevance-calibration.ts';
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
import { relevanceFloor } from '../../src/rag/relevance-floor.ts';

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

t.test('a question out of scope labels no chunk and no answer', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'eval-'));
  t.teardown(() => rmSync(dir, { recursive: true }));
  const corpusPath = path.join(dir, 'corpus.jsonl');
  const questionsPath = path.join(dir, 'questions.json');
  writeFileSync(corpusPath, `${JSON.stringify({ id: 'bike:0', title: 'Bike', content: 'The bike weighs 16 kg.' })}\n`);
  const ask = (question: Record<string, unknown>) =>
    writeFileSync(
      questionsPath,
      JSON.stringify({
        questions: [
          { id: 'c001', question: 'How heavy is it?', style: 'paraphrase', relevant: { 'bike:0': 2 } },
          { id: 'o001', question: 'What colour is the bike?', style: 'out-of-scope', relevant: {}, ...question },
        ],
      }),
    );
  ask({ relevant: { 'bike:0': 1 } });
  await t.rejects(evaluate({ corpusPath, questionsPath }), {
    message: 'out-of-scope question o001 labels a chunk or an answer',
  });
  ask({ answer: 'The bike weighs 16 kg.' });
  await t.rejects(evaluate({ corpusPath, questionsPath }), {
    message: 'out-of-scope question o001 labels a chunk or an answer',
  });
  ask({});
  const tiny = await evaluate({ corpusPath, questionsPath });
  t.equal(tiny.questions, 1, 'only the answerable question is scored for retrieval');
  t.same(
    tiny.outOfScope.map(({ question }) => question.id),
    ['o001'],
  );
  t.ok(tiny.outOfScope[0]!.bestRelevance > 0, 'the one chunk is returned, with its relevance');
});

// Issue 21: the out-of-scope splits and the relevance floor they calibrate with the local embedder.
// These are the figures of docs/decisions.md ("The relevance floor"): a change to the embedder, the
// engine, the relevance measure or the questions that moves them fails here, and the floor is then
// chosen again (`npm run eval` prints the rule's choice beside the shipped one).
t.test('each set has 48 out-of-scope questions, 24 in each half', async (t) => {
  for (const set of [result, company]) {
    t.equal(set.outOfScope.length, 48);
    t.equal(set.outOfScope.filter(({ question }) => halfOf(question) === 'dev').length, 24);
    t.ok(set.outOfScope.every(({ question }) => Object.keys(question.relevant).length === 0));
  }
});

t.test('the relevance floor: the rule chooses the shipped one for local-v2-384', async (t) => {
  t.equal(result.space, 'local-v2-384');
  t.same(FLOOR_RULE, { keep: 0.95, half: 'dev', step: 0.01 });
  t.equal(chooseFloor([result, company]), 0.26);
  t.equal(relevanceFloor(result.space), 0.26);
  t.equal(chooseFloor([result]), 0.38, 'the Node.js set alone would allow a higher floor');
  t.equal(chooseFloor([company]), 0.26);
  t.throws(() => chooseFloor([result, { ...company, space: 'openai-text-embedding-3-small' }]), {
    message: 'a floor is chosen within one embedding space, not local-v2-384, openai-text-embedding-3-small',
  });
});

t.test('what each candidate floor keeps and refuses, per set and half', async (t) => {
  // [floor, kept of the questions whose answer is in the top 5 (all, dev, held-out), out-of-scope
  // refused (all, dev, held-out), questions whose answer is not in the top 5 refused]
  const rows = (set: typeof result) =>
    CANDIDATE_FLOORS.map((floor) => {
      const row = floorRow(set, floor);
      return [
        floor,
        row.kept.all.count,
        row.kept.dev.count,
        row.kept['held-out'].count,
        row.outOfScopeRefused.all.count,
        row.outOfScopeRefused.dev.count,
        row.outOfScopeRefused['held-out'].count,
        row.missedRefused.count,
      ];
    });
  const totals = (set: typeof result) => {
    const row = floorRow(set, 0);
    return [row.kept.all.of, row.kept.dev.of, row.kept['held-out'].of, row.missedRefused.of];
  };
  t.same(totals(result), [166, 83, 83, 29]);
  t.same(rows(result), [
    [0.15, 166, 83, 83, 0, 0, 0, 0],
    [0.2, 166, 83, 83, 0, 0, 0, 0],
    [0.22, 166, 83, 83, 1, 1, 0, 0],
    [0.24, 166, 83, 83, 1, 1, 0, 0],
    [0.26, 166, 83, 83, 1, 1, 0, 1],
    [0.28, 166, 83, 83, 4, 4, 0, 2],
    [0.3, 165, 83, 82, 6, 5, 1, 3],
    [0.35, 162, 80, 82, 15, 12, 3, 3],
    [0.4, 154, 75, 79, 24, 17, 7, 5],
  ]);
  t.same(totals(company), [104, 50, 54, 56]);
  t.same(rows(company), [
    [0.15, 104, 50, 54, 1, 1, 0, 0],
    [0.2, 104, 50, 54, 1, 1, 0, 3],
    [0.22, 103, 50, 53, 2, 2, 0, 4],
    [0.24, 102, 49, 53, 3, 3, 0, 7],
    [0.26, 100, 48, 52, 4, 4, 0, 9],
    [0.28, 98, 47, 51, 5, 4, 1, 11],
    [0.3, 93, 45, 48, 6, 5, 1, 16],
    [0.35, 80, 39, 41, 12, 8, 4, 31],
    [0.4, 56, 24, 32, 21, 11, 10, 49],
  ]);
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
