/**
 * Approximate nearest neighbours by inner product over an HNSW graph (hnswlib, through the
 * Node-API addon `hnswlib-node`): the vector index's method for dense model embeddings.
 */

import { createRequire } from 'node:module';
import type * as Hnswlib from 'hnswlib-node';
import type { VectorHit } from './exact-nearest.ts';

/** Graph parameters, validated by the caller. */
export interface HnswGraphOptions {
  dimensions: number;
  /** Graph degree (hnswlib `M`). */
  m: number;
  /** Candidate list size while inserting. */
  efConstruction: number;
  /** Candidate list size while searching; raised to k when k is larger. */
  efSearch: number;
  /** Slots allocated up front; the graph doubles its capacity when full. */
  initialCapacity: number;
  /** Seed of the graph's level generator, so that builds are reproducible. */
  seed: number;
}

/**
 * hnswlib-node, loaded when the first graph is built: a process that never builds one (the Redis
 * engine's, or one serving only the local embedder's space) does not need the native addon, and one
 * that does gets a clear error when it is missing.
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

/** An HNSW graph over vectors known by id. Synchronous; the caller validates ids and vectors. */
export class HnswGraph {
  readonly #efSearch: number;
  readonly #graph: Hnswlib.HierarchicalNSW;
  #labelOf = new Map<string, number>();
  #idOfLabel = new Map<number, string>();
  #nextLabel = 0;
  /** Deleted graph slots, which the next additions reuse before the graph grows. */
  #deletedSlots = 0;

  constructor(options: HnswGraphOptions) {
    const { dimensions, m, efConstruction, efSearch, initialCapacity, seed } = options;
    this.#efSearch = efSearch;
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

  /** How many vectors the graph holds. */
  get size(): number {
    return this.#labelOf.size;
  }

  /** Inserts a vector under an id that the graph does not hold. */
  add(id: string, vector: Float32Array): void {
    const label = this.#nextLabel++;
    if (this.#deletedSlots > 0) {
      this.#deletedSlots -= 1;
    } else if (this.#graph.getCurrentCount() >= this.#graph.getMaxElements()) {
      this.#graph.resizeIndex(this.#graph.getMaxElements() * 2);
    }
    this.#graph.addPoint(Array.from(vector), label, true);
    this.#labelOf.set(id, label);
    this.#idOfLabel.set(label, id);
  }

  /** Removes an id's vector, if the graph holds it. */
  remove(id: string): void {
    const label = this.#labelOf.get(id);
    if (label === undefined) return;
    this.#graph.markDelete(label);
    this.#deletedSlots += 1;
    this.#labelOf.delete(id);
    this.#idOfLabel.delete(label);
  }

  /** The k most similar vectors found by walking the graph (ef = max(efSearch, k)), best first. */
  search(query: Float32Array, k: number): VectorHit[] {
    const wanted = Math.min(k, this.size);
    if (wanted === 0) return [];
    this.#graph.setEf(Math.max(this.#efSearch, wanted));
    const { neighbors, distances } = this.#graph.searchKnn(Array.from(query), wanted);
    // hnswlib's inner-product distance is 1 − a·b.
    return neighbors.map((label, i) => ({ id: this.#idOfLabel.get(label)!, score: 1 - distances[i]! }));
  }
}
