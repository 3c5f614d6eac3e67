/**
 * Nearest-neighbour search over L2-normalised vectors by cosine similarity (the inner product of unit
 * vectors): exact for small indexes, approximate above `exactBelow` vectors by one of two methods,
 * chosen for the embedding space:
 *
 * - `hnsw`, an HNSW graph (hnsw-graph.ts), for dense model embeddings (recall@10 1.000 at 10k on
 *   embedding-like vectors in bench/retrieval-benchmark.ts);
 * - `scan`, a partial column scan with exact re-ranking (column-scan.ts), for vectors whose queries
 *   weigh on few dimensions, the local embedder's: recall@10 0.997 at 10k and 0.996 at 100k there,
 *   where the graph reached 0.95 and 0.59, and the index builds in about 1 s instead of 2 minutes.
 */

import { ColumnScan } from './column-scan.ts';
import { exactNearest, type VectorHit } from './exact-nearest.ts';
import { HnswGraph } from './hnsw-graph.ts';

/** How a vector index searches approximately. */
export type VectorSearchMethod = 'hnsw' | 'scan';

/** Parameters; every field but `dimensions` has a default. */
export interface VectorIndexOptions {
  dimensions: number;
  /** The approximate method (default `hnsw`). */
  method?: VectorSearchMethod;
  /** Below this many vectors `search` is exact: brute force is then as fast and never misses. */
  exactBelow?: number;
  /** hnsw: graph degree (hnswlib `M`). */
  m?: number;
  /** hnsw: candidate list size while inserting. */
  efConstruction?: number;
  /** hnsw: candidate list size while searching; raised to k when k is larger. */
  efSearch?: number;
  /** hnsw: slots allocated up front; the graph doubles its capacity when full. */
  initialCapacity?: number;
  /** hnsw: seed of the graph's level generator, so that builds are reproducible. */
  seed?: number;
  /** scan: dimensions scored for every vector. */
  scanDimensions?: number;
  /** scan: vectors (at least; k when k is larger) whose exact scores decide the result. */
  scanCandidates?: number;
}

/** How vectors are searched when the embedder does not say (model embeddings: HNSW keeps their recall). */
export const DEFAULT_VECTOR_SEARCH: VectorSearchMethod = 'hnsw';

/**
 * hnsw: M and efConstruction are pgvector's defaults, graph quality close to larger settings at a
 * fraction of the build time (about 1 ms per insert at 100k × 384 here); efSearch 200.
 * scan: 40 dimensions and 100 candidates: recall@10 0.996 at 100k local embeddings in about 1.3 ms
 * (24 and 300: 0.987; 48 and 100: 0.999 but slower); see docs/decisions.md.
 */
const DEFAULTS = {
  method: DEFAULT_VECTOR_SEARCH,
  exactBelow: 1000,
  m: 16,
  efConstruction: 64,
  efSearch: 200,
  initialCapacity: 1024,
  seed: 100,
  scanDimensions: 40,
  scanCandidates: 100,
};

/**
 * The vectors of one chatbot. `add` keeps a reference to the vector (it is not copied), so callers
 * must not change a vector after adding it. Not thread-safe; all methods are synchronous.
 */
export class VectorIndex {
  readonly dimensions: number;
  readonly method: VectorSearchMethod;
  readonly #exactBelow: number;
  readonly #createApproximate: () => HnswGraph | ColumnScan;
  /**
   * Built when the index first reaches `exactBelow` vectors (or is searched approximately) and
   * dropped when it shrinks below half that, so that a chatbot with a few chunks holds no graph or
   * columns (an HNSW graph allocates 1,024 slots, a column scan 2,048 rows, at once).
   */
  #approximate: HnswGraph | ColumnScan | undefined;
  #vectors = new Map<string, Float32Array>();

  constructor(options: VectorIndexOptions) {
    const settings = { ...DEFAULTS, ...withoutUndefined(options) };
    const { dimensions, method, exactBelow } = settings;
    requireInteger('dimensions', dimensions, 1);
    requireInteger('exactBelow', exactBelow, 0);
    if (method !== 'hnsw' && method !== 'scan') {
      throw new RangeError(`method must be hnsw or scan, got ${String(method)}`);
    }
    this.dimensions = dimensions;
    this.method = method;
    this.#exactBelow = exactBelow;
    if (method === 'hnsw') {
      requireInteger('m', settings.m, 2);
      requireInteger('efConstruction', settings.efConstruction, 1);
      requireInteger('efSearch', settings.efSearch, 1);
      requireInteger('initialCapacity', settings.initialCapacity, 1);
      requireInteger('seed', settings.seed, 0);
      this.#createApproximate = () => new HnswGraph(settings);
    } else {
      requireInteger('scanDimensions', settings.scanDimensions, 1);
      requireInteger('scanCandidates', settings.scanCandidates, 1);
      const { scanDimensions, scanCandidates: candidates } = settings;
      this.#createApproximate = () => new ColumnScan({ dimensions, scanDimensions, candidates });
    }
    if (exactBelow === 0) this.#approximateIndex();
  }

  /** How many vectors are indexed. */
  get size(): number {
    return this.#vectors.size;
  }

  /** Indexes a vector under an id, replacing the vector of that id if there was one. */
  add(id: string, vector: Float32Array): void {
    this.#requireDimensions(vector);
    this.remove(id);
    this.#approximate?.add(id, vector);
    this.#vectors.set(id, vector);
    if (this.#approximate === undefined && this.size >= this.#exactBelow) this.#approximateIndex();
  }

  /** Removes an id's vector; false when there was none. */
  remove(id: string): boolean {
    if (!this.#vectors.delete(id)) return false;
    this.#approximate?.remove(id);
    if (this.size < this.#exactBelow / 2) this.#approximate = undefined;
    return true;
  }

  /** The k most similar vectors, best first: exact below `exactBelow` vectors, approximate above. */
  search(query: Float32Array, k: number): VectorHit[] {
    return this.size < this.#exactBelow ? this.searchExact(query, k) : this.searchApproximate(query, k);
  }

  /** The k most similar vectors by the index's approximate method. */
  searchApproximate(query: Float32Array, k: number): VectorHit[] {
    this.#requireDimensions(query);
    requireInteger('k', k, 1);
    return this.size === 0 ? [] : this.#approximateIndex().search(query, k);
  }

  /** The k most similar vectors by comparing the query with every vector. */
  searchExact(query: Float32Array, k: number): VectorHit[] {
    this.#requireDimensions(query);
    requireInteger('k', k, 1);
    return exactNearest(this.#vectors, query, k);
  }

  /** The approximate index, built from every vector if there is none. */
  #approximateIndex(): HnswGraph | ColumnScan {
    if (this.#approximate === undefined) {
      const approximate = this.#createApproximate();
      for (const [id, vector] of this.#vectors) approximate.add(id, vector);
      this.#approximate = approximate;
    }
    return this.#approximate;
  }

  #requireDimensions(vector: Float32Array): void {
    if (vector.length !== this.dimensions) {
      throw new RangeError(`expected a vector of ${this.dimensions} dimensions, got ${vector.length}`);
    }
  }
}

/** The options that are set, so that an explicit undefined keeps the default. */
function withoutUndefined(options: VectorIndexOptions): VectorIndexOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as VectorIndexOptions;
}

function requireInteger(name: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer ≥ ${min}, got ${value}`);
}
