import t from 'tap';
import type { Embedder } from '../../src/rag/embedder.ts';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';
import { QueryEmbedder } from '../../src/rag/query-embedder.ts';

const BOT = '3f2b9c1e-0000-4000-8000-000000000001';
const OTHER_BOT = '3f2b9c1e-0000-4000-8000-000000000002';
const local = new LocalEmbedder();
/** Bytes one remembered `local` question takes: its vector, its key (chatbot id, NUL, text) and 64. */
const entryBytes = (text: string) => 1536 + 2 * (BOT.length + 1 + text.length) + 64;

/** The local embedder, with every call it is given written down; texts in `failing` make a call fail. */
function recordingEmbedder(failing = new Set<string>()): Embedder & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    space: local.space,
    dimensions: local.dimensions,
    calls,
    async embed(texts) {
      calls.push(texts);
      // Answered a moment later, as a provider would, so that overlapping requests can meet.
      await new Promise((resolve) => setImmediate(resolve));
      const failed = texts.find((text) => failing.has(text));
      if (failed !== undefined) throw new Error(`could not embed ${failed}`);
      return local.embed(texts);
    },
  };
}

t.test("a chatbot's question asked again is not embedded again, and gets the same vector", async (t) => {
  const inner = recordingEmbedder();
  const questions = new QueryEmbedder(inner);
  t.equal(questions.space, 'local-v2-384');
  const first = await questions.embed(BOT, 'Do you ship to Canada?');
  const again = await questions.embed(BOT, 'Do you ship to Canada?');
  await questions.embed(BOT, 'do you ship to canada');
  t.same(inner.calls, [['Do you ship to Canada?'], ['do you ship to canada']], 'only an exact repeat is remembered');
  t.equal(again, first, 'the very vector');
  t.same(Array.from(first), Array.from(local.embedOne('Do you ship to Canada?')));
});

t.test("another chatbot's visitors asking the same question do not share its embedding", async (t) => {
  // Sharing it would let anyone time a request to learn what other owners' visitors asked.
  const inner = recordingEmbedder();
  const questions = new QueryEmbedder(inner);
  const mine = await questions.embed(BOT, 'Where is my order?');
  const theirs = await questions.embed(OTHER_BOT, 'Where is my order?');
  t.same(inner.calls, [['Where is my order?'], ['Where is my order?']]);
  t.not(theirs, mine);
  t.same(Array.from(theirs), Array.from(mine));
});

t.test('questions asked at once share one embedding call each', async (t) => {
  const inner = recordingEmbedder();
  const questions = new QueryEmbedder(inner);
  const [one, two, three] = await Promise.all([
    questions.embed(BOT, 'opening hours'),
    questions.embed(BOT, 'opening hours'),
    questions.embed(BOT, 'returns'),
  ]);
  t.same(inner.calls, [['opening hours'], ['returns']]);
  t.equal(one, two);
  t.same(Array.from(three), Array.from(local.embedOne('returns')));
});

t.test('a failed embedding is not kept: the next request tries again', async (t) => {
  const failing = new Set(['flaky']);
  const inner = recordingEmbedder(failing);
  const questions = new QueryEmbedder(inner);
  await t.rejects(Promise.all([questions.embed(BOT, 'flaky'), questions.embed(BOT, 'flaky')]), {
    message: 'could not embed flaky',
  });
  t.same(inner.calls, [['flaky']], 'the two requests shared the failed call');
  failing.clear();
  const vector = await questions.embed(BOT, 'flaky');
  t.same(Array.from(vector), Array.from(local.embedOne('flaky')));
  t.same(inner.calls, [['flaky'], ['flaky']]);
});

t.test('an embedder that returns no vector is an error, not an undefined vector', async (t) => {
  const questions = new QueryEmbedder({ space: 'empty', dimensions: 3, embed: () => Promise.resolve([]) });
  await t.rejects(questions.embed(BOT, 'anything'), { message: 'the empty embedder returned no vector' });
});

t.test('what it keeps is bounded in bytes: the least recently asked question is let go', async (t) => {
  const inner = recordingEmbedder();
  // Room for two of these questions, not three.
  const questions = new QueryEmbedder(inner, 2 * entryBytes('one'));
  for (const text of ['one', 'two', 'one', 'six', 'one', 'two']) await questions.embed(BOT, text);
  t.same(inner.calls, [['one'], ['two'], ['six'], ['two']], '"two" was the least recently asked when "six" came');
});

t.test('a question pushed out of the cache while it is being embedded is still answered', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slow: Embedder = {
    space: local.space,
    dimensions: local.dimensions,
    async embed(texts) {
      if (texts[0] === 'slow one') await gate;
      return local.embed(texts);
    },
  };
  // Room for one question: the two quick ones push the slow one's entry out while it waits.
  const questions = new QueryEmbedder(slow, entryBytes('quicker'));
  const pending = questions.embed(BOT, 'slow one');
  await questions.embed(BOT, 'quick');
  await questions.embed(BOT, 'quicker');
  release();
  t.same(Array.from(await pending), Array.from(local.embedOne('slow one')));
});
