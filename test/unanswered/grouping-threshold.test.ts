import t from 'tap';
import {
  chooseThreshold,
  grouped,
  halfOf,
  loadPairs,
  measurePairs,
  PAIR_KINDS,
} from '../../scripts/grouping-calibration.ts';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';
import { GROUPING_THRESHOLDS, groupingThreshold, nearestGroup } from '../../src/unanswered/grouping-threshold.ts';

const local = new LocalEmbedder();
const measured = await measurePairs(local);

t.test('the pairs: 24 paraphrases, 24 near misses, 12 unrelated, split in halves by id', async (t) => {
  const pairs = loadPairs();
  t.same(
    PAIR_KINDS.map((kind) => pairs.filter((pair) => pair.kind === kind).length),
    [24, 24, 12],
  );
  t.same(
    PAIR_KINDS.map((kind) => pairs.filter((pair) => pair.kind === kind && halfOf(pair) === 'dev').length),
    [12, 12, 6],
  );
  t.equal(new Set(pairs.map((pair) => pair.id)).size, pairs.length, 'ids are unique');
});

t.test("the local space's threshold is the one the rule chooses, and what it groups is pinned", async (t) => {
  t.equal(chooseThreshold(measured), 0.84);
  t.equal(GROUPING_THRESHOLDS[local.space], 0.84);
  t.equal(groupingThreshold(local.space), 0.84);
  t.same(
    [
      grouped(measured, 0.84, 'paraphrase', 'dev'),
      grouped(measured, 0.84, 'paraphrase', 'held-out'),
      grouped(measured, 0.84, 'near-miss', 'dev'),
      grouped(measured, 0.84, 'near-miss', 'held-out'),
      grouped(measured, 0.84, 'unrelated'),
    ],
    ['2/12', '3/12', '0/12', '0/12', '0/12'],
  );
  // One step lower groups a near miss of the dev half ("change my email" / "change my billing address").
  t.same(grouped(measured, 0.83, 'near-miss', 'dev'), '1/12');
});

t.test('a space nobody measured has no threshold: its questions group by text only', async (t) => {
  t.equal(groupingThreshold('openai-text-embedding-3-small'), undefined);
  t.equal(groupingThreshold('local-384'), undefined, 'an older local space is another space');
});

t.test('nearestGroup: the nearest at or above the threshold; vectors of another length are skipped', async (t) => {
  const [asked, paraphrase, nearMiss] = await local.embed([
    'How do I delete my account?',
    'I want to delete my account, how?',
    'How do I create an account?',
  ]);
  const candidates = new Map([
    ['near-miss', nearMiss!],
    ['short', new Float32Array(3)],
    ['paraphrase', paraphrase!],
  ]);
  t.equal(nearestGroup(asked!, candidates, 0.84), 'paraphrase');
  t.equal(nearestGroup(asked!, new Map([['near-miss', nearMiss!]]), 0.84), undefined);
  t.equal(nearestGroup(asked!, new Map([['same', asked!]]), 1), 'same', 'a cosine equal to the threshold groups');
});
