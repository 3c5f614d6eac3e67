/**
 * Approximate nearest neighbours by inner product for vectors whose queries put their weight on few
 * dimensions, as the local embedder's do (a short question sets a few dozen of its 284 hashed
 * word-feature dimensions), and which an HNSW graph serves poorly: such a query's neighbours share
 * a word or two with it and are otherwise unrelated, so a graph of neighbours of stored vectors
 * leads a query astray (recall@10 0.59 at 100k with M 16, efSearch 200).
 *
 * A search scores every stored vector on the `scanDimensions` dimensions where the query expects
 * its scores to differ most (the largest |q_d| · σ_d, σ_d the spread of dimension d over the stored
 * vectors), keeps about `candidates` of the best and re-ranks them by their exact inner product.
 * Vectors are kept column by column, in blocks, so that scoring one dimension of every vector reads
 * one contiguous array, in the linear memory of a WebAssembly SIMD kernel (column-kernel.ts) that
 * does the scoring; nothing is trained, so adding and removing cost O(dimensions).
 *
 * Memory layout (byte addresses): the kernel's arguments at ARGS; block b at FIRST_BLOCK + b · the
 * block size, holding BLOCK_ROWS partial scores (f32) and then, per dimension, a column of
 * BLOCK_ROWS values as 16-bit integers (v · SCALE, rounded: a step of 3e-5, nothing next to the
 * differences that decide the candidates, and the re-ranking is exact anyway). A WebAssembly
 * memory never shrinks; blocks freed by removals are reused by later additions. A memory holds at
 * most 4 GiB: about 5 million vectors of 384 dimensions per index.
 */

import { type ColumnKernel, createColumnKernel } from './column-kernel.ts';
import { exactNearest, type VectorHit } from './exact-nearest.ts';

/** Column scan parameters, validated by the caller. */
export interface ColumnScanOptions {
  dimensions: number;
  /** Dimensions scored for every vector. */
  scanDimensions: number;
  /** Vectors (at least; k when k is larger) whose exact scores decide the result. */
  candidates: number;
}

/** Vectors per block; a block of 384 dimensions takes 1.5 MiB. */
const BLOCK_SHIFT = 11;
const BLOCK_ROWS = 1 << BLOCK_SHIFT;
/** Dimensions scored by one kernel call. */
const LANES = 8;
/** Where the kernel's arguments go, and where the first block starts (16-byte aligned). */
const ARGS = 0;
const FIRST_BLOCK = 1024;
const PAGE_BYTES = 65536;
/** A stored value v is the integer v · SCALE, clamped: unit vectors' values are within ±1. */
const SCALE = 32767;
/** Scores sampled to find the candidates' threshold. */
const SAMPLE_SIZE = 2048;
/** The threshold is aimed at this many times the candidates wanted, so that it rarely falls short. */
const OVERSHOOT = 1.25;

/** Vectors stored column by column, searched by a partial scan and an exact re-ranking. */
export class ColumnScan {
  readonly #dimensions: number;
  readonly #scanDimensions: number;
  readonly #candidates: number;
  readonly #kernel: ColumnKernel;
  /** Bytes per block: BLOCK_ROWS f32 scores, then one i16 column of BLOCK_ROWS values per dimension. */
  readonly #blockBytes: number;
  /** Blocks in use; the memory may hold more, left by removals. */
  #blocks = 0;
  /** Views of the kernel's memory, renewed when it grows. */
  #floats: Float32Array;
  #ints: Int32Array;
  #shorts: Int16Array;
  /** Per slot: its id and vector; slots 0 … size − 1 are all taken. */
  #ids: string[] = [];
  #vectors: Float32Array[] = [];
  #slotOf = new Map<string, number>();
  /** Per dimension: the sum and the sum of squares of the stored values, for σ. */
  readonly #sums: Float64Array;
  readonly #squares: Float64Array;
  /** The slots a search picked. */
  #picked = new Int32Array(0);

  constructor(options: ColumnScanOptions) {
    this.#dimensions = options.dimensions;
    this.#scanDimensions = options.scanDimensions;
    this.#candidates = options.candidates;
    this.#sums = new Float64Array(options.dimensions);
    this.#squares = new Float64Array(options.dimensions);
    this.#blockBytes = (4 + 2 * options.dimensions) * BLOCK_ROWS;
    this.#kernel = createColumnKernel();
    this.#floats = new Float32Array(this.#kernel.memory.buffer);
    this.#ints = new Int32Array(this.#kernel.memory.buffer);
    this.#shorts = new Int16Array(this.#kernel.memory.buffer);
  }

  /** How many vectors are stored. */
  get size(): number {
    return this.#ids.length;
  }

  /** Stores a vector under an id that is not stored. */
  add(id: string, vector: Float32Array): void {
    const slot = this.#ids.length;
    if (slot >> BLOCK_SHIFT === this.#blocks) this.#addBlock();
    this.#write(slot, vector);
    this.#count(vector, 1);
    this.#ids.push(id);
    this.#vectors.push(vector);
    this.#slotOf.set(id, slot);
  }

  /** Removes an id's vector, if stored; the last slot's vector moves into its place. */
  remove(id: string): void {
    const slot = this.#slotOf.get(id);
    if (slot === undefined) return;
    this.#count(this.#vectors[slot]!, -1);
    const last = this.#ids.length - 1;
    if (slot !== last) {
      const movedId = this.#ids[last]!;
      const moved = this.#vectors[last]!;
      this.#write(slot, moved);
      this.#ids[slot] = movedId;
      this.#vectors[slot] = moved;
      this.#slotOf.set(movedId, slot);
    }
    this.#ids.pop();
    this.#vectors.pop();
    this.#slotOf.delete(id);
    if (last % BLOCK_ROWS === 0) this.#blocks -= 1;
  }

  /** The k most similar vectors among the candidates of a partial scan, best first. */
  search(query: Float32Array, k: number): VectorHit[] {
    const wanted = Math.max(this.#candidates, k);
    if (this.size <= wanted)
      return exactNearest(
        this.#entries(this.size, (i) => i),
        query,
        k,
      );
    const { dimensions, weights } = this.#scanPlan(query);
    for (let block = 0; block < this.#blocks; block++) this.#scoreBlock(block, dimensions, weights);
    const count = this.#pickBest(wanted);
    return exactNearest(
      this.#entries(count, (i) => this.#picked[i]!),
      query,
      k,
    );
  }

  /**
   * The dimensions to score and the query's weights on them, in groups of LANES (padded with
   * weight 0): those where |q_d| · σ_d, how much the query's score can differ between vectors
   * because of dimension d, is largest.
   */
  #scanPlan(query: Float32Array): { dimensions: Int32Array; weights: Float64Array } {
    const spread = new Float64Array(this.#dimensions);
    const order: number[] = [];
    for (let d = 0; d < this.#dimensions; d++) {
      const mean = this.#sums[d]! / this.size;
      spread[d] = Math.abs(query[d]!) * Math.sqrt(Math.max(0, this.#squares[d]! / this.size - mean * mean));
      if (spread[d]! > 0) order.push(d);
    }
    order.sort((a, b) => spread[b]! - spread[a]! || a - b);
    const chosen = order.slice(0, this.#scanDimensions);
    const length = Math.max(LANES, Math.ceil(chosen.length / LANES) * LANES);
    const dimensions = new Int32Array(length);
    const weights = new Float64Array(length);
    chosen.forEach((d, i) => {
      dimensions[i] = d;
      weights[i] = query[d]!;
    });
    return { dimensions, weights };
  }

  /**
   * Puts the slots of about OVERSHOOT × wanted best partial scores, and never fewer than wanted,
   * into `#picked`; returns how many. The threshold comes from a sample of the scores.
   */
  #pickBest(wanted: number): number {
    const scores = this.#floats;
    const size = this.size;
    const step = Math.max(1, Math.floor(size / SAMPLE_SIZE));
    const sample = new Float32Array(Math.ceil(size / step));
    for (let slot = 0, j = 0; slot < size; slot += step, j++) sample[j] = scores[this.#scoreIndex(slot)]!;
    for (let rank = Math.ceil((wanted * OVERSHOOT) / step); ; rank *= 2) {
      const threshold = rank < sample.length ? nthLargest(sample, rank) : -Infinity;
      let count = 0;
      for (let block = 0; block < this.#blocks; block++) {
        const first = block << BLOCK_SHIFT;
        const base = this.#scoreIndex(first);
        const rows = Math.min(BLOCK_ROWS, size - first);
        for (let row = 0; row < rows; row++) if (scores[base + row]! >= threshold) this.#picked[count++] = first + row;
      }
      if (count >= wanted || threshold === -Infinity) return count;
    }
  }

  /** Adds the block's partial scores to its score column, LANES dimensions per kernel call. */
  #scoreBlock(block: number, dimensions: Int32Array, weights: Float64Array): void {
    const rows = Math.min(BLOCK_ROWS, this.size - (block << BLOCK_SHIFT));
    const base = FIRST_BLOCK + block * this.#blockBytes;
    for (let g = 0; g < dimensions.length; g += LANES) {
      for (let j = 0; j < LANES; j++) {
        this.#ints[ARGS / 4 + j] = base + (4 + 2 * dimensions[g + j]!) * BLOCK_ROWS;
        this.#floats[ARGS / 4 + LANES + j] = weights[g + j]! / SCALE;
      }
      // Rows are rounded up to whole SIMD vectors; the scores past the last row are never read.
      this.#kernel.accumulate(base, ARGS, (rows + 7) & ~7, g === 0 ? 1 : 0);
    }
  }

  /** Where a slot's partial score is, as an index into the float view. */
  #scoreIndex(slot: number): number {
    return (FIRST_BLOCK + (slot >> BLOCK_SHIFT) * this.#blockBytes) / 4 + (slot & (BLOCK_ROWS - 1));
  }

  *#entries(count: number, slot: (i: number) => number): Iterable<[string, Float32Array]> {
    for (let i = 0; i < count; i++) yield [this.#ids[slot(i)]!, this.#vectors[slot(i)]!];
  }

  #write(slot: number, vector: Float32Array): void {
    const base = FIRST_BLOCK + (slot >> BLOCK_SHIFT) * this.#blockBytes + 4 * BLOCK_ROWS;
    const first = base / 2 + (slot & (BLOCK_ROWS - 1));
    for (let d = 0; d < this.#dimensions; d++) {
      this.#shorts[first + d * BLOCK_ROWS] = Math.max(-SCALE, Math.min(SCALE, Math.round(vector[d]! * SCALE)));
    }
  }

  #count(vector: Float32Array, sign: 1 | -1): void {
    for (let d = 0; d < this.#dimensions; d++) {
      this.#sums[d]! += sign * vector[d]!;
      this.#squares[d]! += sign * vector[d]! * vector[d]!;
    }
  }

  /** Takes one more block, growing the memory when it has no room left. */
  #addBlock(): void {
    // Grown first: past 4 GiB `grow` throws, and the scan must stay as it was.
    const needed = FIRST_BLOCK + (this.#blocks + 1) * this.#blockBytes;
    const { memory } = this.#kernel;
    if (memory.buffer.byteLength < needed) {
      memory.grow(Math.ceil((needed - memory.buffer.byteLength) / PAGE_BYTES));
      this.#floats = new Float32Array(memory.buffer);
      this.#ints = new Int32Array(memory.buffer);
      this.#shorts = new Int16Array(memory.buffer);
    }
    this.#blocks += 1;
    if (this.#picked.length < this.#blocks * BLOCK_ROWS) this.#picked = new Int32Array(this.#blocks * BLOCK_ROWS);
  }
}

/**
 * The value of rank n (0 = the largest) in `values`, by quickselect (Hoare's partition around the
 * middle element); reorders `values`. Linear on average, where sorting the sample was the search's
 * third largest cost.
 */
function nthLargest(values: Float32Array, n: number): number {
  let low = 0;
  let high = values.length - 1;
  while (low < high) {
    const pivot = values[(low + high) >> 1]!;
    let i = low;
    let j = high;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const swap = values[i]!;
        values[i++] = values[j]!;
        values[j--] = swap;
      }
    }
    if (n <= j) high = j;
    else if (n >= i) low = i;
    else return values[n]!;
  }
  return values[n]!;
}
