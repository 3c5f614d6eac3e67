/**
 * Nearest-neighbour search over L2-normalised vectors by cosine similarity (the inner product of unit
 * vectors): an HNSW graph (hnswlib, through the Node-API addon `hnswlib-node`) for approximate
 * search, and brute force for small indexes and for verifying the graph.
 */

import { createRequire } from 'node:module';
import type * as Hnswlib from 'hnswlib-node';

/** A vector's id and its cosine similarity to the query (1 is identical). */
export interface VectorHit {
  id: string;
  score: number;
}

/** HNSW and sizing parameters; every field but `dimensions` has a default. */
export interface VectorIndexOptions {
  dimensions: number;
  /** Graph degree (hnswlib `M`). */
  m?: number;
  /** Candidate list size while inserting. */
  efConstruction?: number;
  /** Candidate list size while searching; raised to k when k is larger. */
  efSearch?: number;
  /** Slots allocated up front; the graph doubles its capacity when full. */
  initialCapacity?: number;
  /** Below this many vectors `search` is exact: brute force is then as fast and never misses. */
  exactBelow?: number;
  /** Seed of the graph's level generator, so that builds are reproducible. */
  seed?: number;
}

/**
 * M and efConstruction are pgvector's defaults: graph quality close to larger settings at a fraction
 * of the build time (about 1 ms per insert at 100k × 384 here). efSearch 200 keeps recall@10 near
 * 0.9 at 10k even for the local embedder's hashed vectors, the hardest case for a graph index; see
 * bench/retrieval-benchmark.ts.
 */
const DEFAULTS = { m: 16, efConstruction: 64, efSearch: 200, initialCapacity: 1024, exactBelow: 1000, seed: 100 };

/**
 * hnswlib-node, loaded when the first index is built: a process that never builds one (the Redis
 * engine's) does not need the native addon, and one that does gets a clear error when it is missing.
 */
let hnswlib: typeof Hnswlib | undefined;

function loadHnswlib(): typeof Hnswlib {
  try {
    hnswlib ??= createRequire(import.meta.url)('hnswlib-node') as typeof Hnswlib;
  } catch (cause) {
    throw new Error('hnswlib-node is not built: run `npm rebuild hnswlib-node` (needs python3, make and g++)', {
      cause,
    });
  }
  return hnswlib;
}

/** One indexed vector: the graph's numeric label for it and the vector itself. */
interface Entry {
  label: number;
  vector: Float32Array;
}

/**
 * The vectors of one chatbot. `add` keeps a reference to the vector (it is not copied), so callers
 * must not change a vector after adding it. Not thread-safe; all methods are synchronous.
 */
export class VectorIndex {
  readonly dimensions: number;
  readonly #options: Required<Omit<VectorIndexOptions, 'dimensions'>>;
  readonly #graph: Hnswlib.HierarchicalNSW;
  #entries = new Map<string, Entry>();
  #idOfLabel = new Map<number, string>();
  #nextLabel = 0;
  /** Deleted graph slots, which the next additions reuse before the graph grows. */
  #deletedSlots = 0;

  constructor(options: VectorIndexOptions) {
    const {
      dimensions,
      m = DEFAULTS.m,
      efConstruction = DEFAULTS.efConstruction,
      efSearch = DEFAULTS.efSearch,
      initialCapacity = DEFAULTS.initialCapacity,
      exactBelow = DEFAULTS.exactBelow,
      seed = DEFAULTS.seed,
    } = options;
    requireInteger('dimensions', dimensions, 1);
    requireInteger('m', m, 2);
    requireInteger('efConstruction', efConstruction, 1);
    requireInteger('efSearch', efSearch, 1);
    requireInteger('initialCapacity', initialCapacity, 1);
    requireInteger('exactBelow', exactBelow, 0);
    requireInteger('seed', seed, 0);
    this.dimensions = dimensions;
    this.#options = { m, efConstruction, efSearch, initialCapacity, exactBelow, seed };
    this.#graph = new (loadHnswlib().HierarchicalNSW)('ip', dimensions);
    this.#graph.initIndex({
      maxElements: initialCapacity,
      m,
      efConstruction,
      randomSeed: seed,
      allowReplaceDeleted: true,
    });
    this.#graph.setEf(efSearch);
  }

  /** How many vectors are indexed. */
  get size(): number {
    return this.#entries.size;
  }

  /** Indexes a vector under an id, replacing the vector of that id if there was one. */
  add(id: string, vector: Float32Array): void {
    this.#requireDimensions(vector);
    this.remove(id);
    const label = this.#nextLabel++;
    if (this.#deletedSlots > 0) {
      this.#deletedSlots -= 1;
    } else if (this.#graph.getCurrentCount() >= this.#graph.getMaxElements()) {
      this.#graph.resizeIndex(this.#graph.getMaxElements() * 2);
    }
    this.#graph.addPoint(Array.from(vector), label, true);
    this.#entries.set(id, { label, vector });
    this.#idOfLabel.set(label, id);
  }

  /** Removes an id's vector; false when there was none. */
  remove(id: string): boolean {
    const entry = this.#entries.get(id);
    if (entry === undefined) return false;
    this.#graph.markDelete(entry.label);
    this.#deletedSlots += 1;
    this.#entries.delete(id);
    this.#idOfLabel.delete(entry.label);
    return true;
  }

  /** The k most similar vectors, best first: exact below `exactBelow` vectors, approximate above. */
  search(query: Float32Array, k: number): VectorHit[] {
    return this.size < this.#options.exactBelow ? this.searchExact(query, k) : this.searchApproximate(query, k);
  }

  /** The k most similar vectors by walking the HNSW graph (ef = max(efSearch, k)). */
  searchApproximate(query: Float32Array, k: number): VectorHit[] {
    this.#requireDimensions(query);
    requireInteger('k', k, 1);
    const wanted = Math.min(k, this.size);
    if (wanted === 0) return [];
    this.#graph.setEf(Math.max(this.#options.efSearch, wanted));
    const { neighbors, distances } = this.#graph.searchKnn(Array.from(query), wanted);
    // hnswlib's inner-product distance is 1 − a·b.
    return neighbors.map((label, i) => ({ id: this.#idOfLabel.get(label)!, score: 1 - distances[i]! }));
  }

  /** The k most similar vectors by comparing the query with every vector. */
  searchExact(query: Float32Array, k: number): VectorHit[] {
    this.#requireDimensions(query);
    requireInteger('k', k, 1);
    return exactNearest(this.#vectors(), query, k);
  }

  *#vectors(): Iterable<[string, Float32Array]> {
    for (const [id, entry] of this.#entries) yield [id, entry.vector];
  }

  #requireDimensions(vector: Float32Array): void {
    if (vector.length !== this.dimensions) {
      throw new RangeError(`expected a vector of ${this.dimensions} dimensions, got ${vector.length}`);
    }
  }
}

/**
 * Brute-force k nearest neighbours by inner product (cosine similarity for unit vectors), best
 * first; equal scores are ordered by id.
 */
export function exactNearest(vectors: Iterable<[string, Float32Array]>, query: Float32Array, k: number): VectorHit[] {
  const best: VectorHit[] = [];
  for (const [id, vector] of vectors) {
    const score = dot(vector, query);
    if (best.length === k && !outranks(score, id, best[k - 1]!)) continue;
    let i = best.length === k ? k - 1 : best.length;
    while (i > 0 && outranks(score, id, best[i - 1]!)) {
      best[i] = best[i - 1]!;
      i -= 1;
    }
    best[i] = { id, score };
  }
  return best;
}

function outranks(score: number, id: string, hit: VectorHit): boolean {
  return score > hit.score || (score === hit.score && id < hit.id);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function requireInteger(name: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer ≥ ${min}, got ${value}`);
}
