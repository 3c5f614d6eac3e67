import t from 'tap';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';

function cosine(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function norm(vector: Float32Array): number {
  return Math.sqrt(cosine(vector, vector));
}

t.test('names the local-v2-384 space', async (t) => {
  const embedder = new LocalEmbedder();
  t.equal(embedder.space, 'local-v2-384');
  t.equal(embedder.dimensions, 384);
});

t.test('is deterministic across calls and instances, one vector per text in order', async (t) => {
  const texts = ['Reset your password from the account page.', 'Shipping takes five business days.'];
  const first = await new LocalEmbedder().embed(texts);
  const second = await new LocalEmbedder().embed([...texts].reverse());
  t.equal(first.length, 2);
  t.same(Array.from(first[0]!), Array.from(second[1]!));
  t.same(Array.from(first[1]!), Array.from(second[0]!));
  t.same(Array.from(first[0]!), Array.from(new LocalEmbedder().embedOne(texts[0]!)));
  t.notSame(Array.from(first[0]!), Array.from(first[1]!));
  t.same(await new LocalEmbedder().embed([]), []);
});

t.test('every vector has 384 dimensions and unit length, empty texts included', async (t) => {
  const embedder = new LocalEmbedder();
  for (const text of [
    'hello',
    'The cat sat on the mat. '.repeat(200),
    '',
    '   ',
    'the of and',
    '!!!',
    '北京',
    'zzqx',
  ]) {
    const vector = embedder.embedOne(text);
    t.equal(vector.length, 384);
    t.ok(Math.abs(norm(vector) - 1) < 1e-6, `unit length for ${JSON.stringify(text.slice(0, 20))}`);
  }
  t.same(Array.from(embedder.embedOne('')), Array.from(embedder.embedOne('the of')), 'stopwords only = empty');
});

t.test('texts that share stems are closer than texts that share nothing', async (t) => {
  const embedder = new LocalEmbedder();
  const query = embedder.embedOne('How do I reset my password?');
  const related = embedder.embedOne('Password resets: resetting a forgotten password');
  const unrelated = embedder.embedOne('Shipping takes five business days');
  t.ok(cosine(query, related) > 0.5, `related ${cosine(query, related)}`);
  // The semantic half of two English texts is never quite orthogonal.
  t.ok(Math.abs(cosine(query, unrelated)) < 0.15, `unrelated ${cosine(query, unrelated)}`);
  const inflected = cosine(embedder.embedOne('running shoes'), embedder.embedOne('The runner runs in his shoe'));
  t.ok(inflected > 0.5, `inflections share stems: ${inflected}`);
  const accents = cosine(embedder.embedOne('Crème brûlée'), embedder.embedOne('creme brulee'));
  t.ok(Math.abs(accents - 1) < 1e-6, 'diacritics and case do not matter');
});

t.test('words unknown to the word table still get a unit vector, all in the lexical block', async (t) => {
  const vector = new LocalEmbedder().embedOne('zzqx kwrtyp');
  t.same(Array.from(vector.subarray(284)), new Array(100).fill(0));
  t.ok(Math.abs(norm(vector) - 1) < 1e-6);
});

t.test('identifiers meet the words they are made of', async (t) => {
  const embedder = new LocalEmbedder();
  const query = embedder.embedOne('create a read stream');
  const identifier = cosine(query, embedder.embedOne('Use createReadStream()'));
  const other = cosine(query, embedder.embedOne('Use mkdirSync()'));
  t.ok(identifier > 0.7, `createReadStream ${identifier}`);
  t.ok(identifier > other + 0.5, `mkdirSync ${other}`);
});

t.test('texts in other words about the same thing are closer than texts about something else', async (t) => {
  const embedder = new LocalEmbedder();
  const query = embedder.embedOne('remove a folder');
  const synonyms = cosine(query, embedder.embedOne('delete a directory'));
  const unrelated = cosine(query, embedder.embedOne('bake a chocolate cake'));
  t.ok(synonyms > unrelated + 0.05, `synonyms ${synonyms}, unrelated ${unrelated}`);
});
