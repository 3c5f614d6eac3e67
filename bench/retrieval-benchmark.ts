/**
 * The retrieval benchmark: the in-process engine's hybrid query (BM25 + vector search, fused by RRF)
 * at 10k and 100k chunks of one chatbot, with 384-dimension `local` embeddings of a synthetic corpus
 * (synthetic-corpus.ts), indexed as the gateway indexes that space (a column scan, vector-index.ts).
 * Reports ingestion throughput (local embedding + indexing), index build time and retained memory,
 * hybrid query latency, the vector leg's latency and recall@10 against exact search (whose latency
 * is the same-run baseline), and the HNSW graph's recall@10 on embedding-like vectors (low intrinsic
 * dimension), the method used for model embeddings.
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ChunkRecord } from '../src/rag/chunk.ts';
import { InProcessSearchEngine } from '../src/rag/in-process-search-engine.ts';
import { LocalEmbedder } from '../src/rag/local-embedder.ts';
import { exactNearest } from '../src/rag/exact-nearest.ts';
import { VectorIndex, type VectorIndexOptions } from '../src/rag/vector-index.ts';
import { describeMachine } from './bench-support.ts';
import {
  CHATBOT_ID,
  embeddingLikeSampler,
  LATENT_DIMENSIONS,
  mulberry32,
  SyntheticCorpus,
} from './synthetic-corpus.ts';

const SCALES = [
  { chunks: 10_000, p99TargetMs: 2 },
  { chunks: 100_000, p99TargetMs: 5 },
];
const QUERIES = 1_000;
const WARMUP_QUERIES = 100;
const RECALL_QUERIES = 200;
const RECALL_TARGET = 0.95;
const K = 10;
const DIMENSIONS = 384;
const SEED = 0x5eed;
const LATENT_VECTORS = 10_000;

/** One scale's figures. */
interface ScaleResult {
  chunks: number;
  p99TargetMs: number;
  /** Local embedding of the scale's chunks. */
  embedMs: number;
  /** Indexing them (BM25 + vector index), and of that the vector index alone (built again apart). */
  buildMs: number;
  vectorBuildMs: number;
  heapDeltaMb: number;
  offHeapDeltaMb: number;
  rssDeltaMb: number;
  p50Ms: number;
  p99Ms: number;
  queryEmbedP50Ms: number;
  recall: number;
  /** The vector leg alone (a query without text) and brute force over every embedding. */
  vectorP50Ms: number;
  vectorP99Ms: number;
  exactP50Ms: number;
}

export async function run(): Promise<number> {
  const machine = await describeMachine();
  const gc = exposeGc();
  console.log(
    `retrieval benchmark: in-process hybrid search (BM25 top 50 + vector top 50, RRF k=60, top ${K}), ` +
      `one chatbot, ${DIMENSIONS}-dim local embeddings of a synthetic text corpus, ${QUERIES} queries per ` +
      `scale after ${WARMUP_QUERIES} warm-up, recall@${K} over ${RECALL_QUERIES} queries`,
  );
  console.log(`machine: ${machine}`);
  const corpus = new SyntheticCorpus(SEED);
  const results: ScaleResult[] = [];
  for (const scale of SCALES) {
    const { chunks, embedMs } = await embedCorpus(corpus, scale.chunks);
    results.push(await measureScale(corpus, chunks, embedMs, scale.p99TargetMs, gc));
  }
  const embeddingLikeRecall = measureEmbeddingLikeRecall();
  printReport(results, embeddingLikeRecall);
  return 0;
}

/**
 * Generates and embeds a scale's chunks. Each scale starts from nothing, so that the smaller one is
 * measured in a process holding only its own chunks, as a process serving that many would.
 */
async function embedCorpus(
  corpus: SyntheticCorpus,
  count: number,
): Promise<{ chunks: ChunkRecord[]; embedMs: number }> {
  const embedder = new LocalEmbedder();
  const texts = Array.from({ length: count }, (_, i) => corpus.chunk(i));
  const started = performance.now();
  const embeddings = await embedder.embed(texts.map((text) => `${text.title}\n${text.content}`));
  const embedMs = performance.now() - started;
  return { chunks: texts.map((text, i): ChunkRecord => ({ ...text, embedding: embeddings[i]! })), embedMs };
}

/** Indexes the chunks in a new engine and measures memory, latency and recall. */
async function measureScale(
  corpus: SyntheticCorpus,
  chunks: ChunkRecord[],
  embedMs: number,
  p99TargetMs: number,
  gc: () => void,
): Promise<ScaleResult> {
  gc();
  const before = process.memoryUsage();
  const vectorIndex = { method: new LocalEmbedder().vectorSearch };
  const engine = new InProcessSearchEngine({ dimensions: DIMENSIONS, vectorIndex });
  const started = performance.now();
  await engine.upsert(chunks);
  const buildMs = performance.now() - started;
  gc();
  const after = process.memoryUsage();
  const vectorBuildMs = timeVectorIndexBuild(chunks, vectorIndex);
  gc(); // the index built just to time it must not be collected during the timed searches
  const latency = await measureQueries(engine, corpus, chunks.length);
  const recall = await measureRecall(engine, corpus, chunks);
  return {
    chunks: chunks.length,
    p99TargetMs,
    embedMs,
    buildMs,
    vectorBuildMs,
    heapDeltaMb: mb(after.heapUsed - before.heapUsed),
    offHeapDeltaMb: mb(after.external + after.arrayBuffers - before.external - before.arrayBuffers),
    rssDeltaMb: mb(after.rss - before.rss),
    ...latency,
    ...recall,
  };
}

/** How long the engine's vector index takes to build from the chunks' embeddings on its own. */
function timeVectorIndexBuild(chunks: ChunkRecord[], options: Omit<VectorIndexOptions, 'dimensions'>): number {
  const started = performance.now();
  const index = new VectorIndex({ ...options, dimensions: DIMENSIONS });
  for (const chunk of chunks) index.add(chunk.id, chunk.embedding);
  return performance.now() - started;
}

/** Hybrid query latency; each query's embedding is computed first and timed apart. */
async function measureQueries(engine: InProcessSearchEngine, corpus: SyntheticCorpus, chunks: number) {
  const embedder = new LocalEmbedder();
  const embedLatencies: number[] = [];
  // Questions and their embeddings are made before the searches, so that the garbage of making
  // them (a synthetic chunk per question) is not collected in the middle of a timed search.
  const queries = Array.from({ length: WARMUP_QUERIES + QUERIES }, (_, i) => {
    const text = corpus.query(i, chunks);
    const started = performance.now();
    const embedding = embedder.embedOne(text);
    if (i >= WARMUP_QUERIES) embedLatencies.push(performance.now() - started);
    return { text, embedding };
  });
  const latencies: number[] = [];
  for (const [i, { text, embedding }] of queries.entries()) {
    const started = performance.now();
    const hits = await engine.search({ chatbotId: CHATBOT_ID, text, embedding, k: K });
    const searchMs = performance.now() - started;
    if (hits.length !== K) throw new Error(`query "${text}" returned ${hits.length} hits, expected ${K}`);
    if (i >= WARMUP_QUERIES) latencies.push(searchMs);
  }
  return {
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    queryEmbedP50Ms: percentile(embedLatencies, 0.5),
  };
}

/**
 * The share of the exact top 10 (brute force over every embedding) that the engine's vector leg
 * finds, with both timed. A query without text leaves BM25 empty, so the fused order is the vector
 * leg's order.
 */
async function measureRecall(engine: InProcessSearchEngine, corpus: SyntheticCorpus, chunks: ChunkRecord[]) {
  const embedder = new LocalEmbedder();
  const vectors = chunks.map((chunk): [string, Float32Array] => [chunk.id, chunk.embedding]);
  const found: number[] = [];
  const vectorLatencies: number[] = [];
  const exactLatencies: number[] = [];
  const embeddings = Array.from({ length: RECALL_QUERIES }, (_, i) =>
    embedder.embedOne(corpus.query(WARMUP_QUERIES + QUERIES + i, chunks.length)),
  );
  for (const embedding of embeddings) {
    let started = performance.now();
    const hits = await engine.search({ chatbotId: CHATBOT_ID, text: '', embedding, k: K });
    vectorLatencies.push(performance.now() - started);
    started = performance.now();
    const exact = exactNearest(vectors, embedding, K);
    exactLatencies.push(performance.now() - started);
    found.push(
      overlap(
        hits.map((hit) => hit.chunk.id),
        exact,
      ),
    );
  }
  return {
    recall: found.reduce((sum, n) => sum + n, 0) / (RECALL_QUERIES * K),
    vectorP50Ms: percentile(vectorLatencies, 0.5),
    vectorP99Ms: percentile(vectorLatencies, 0.99),
    exactP50Ms: percentile(exactLatencies, 0.5),
  };
}

/** The HNSW index's recall@10 on embedding-like vectors, with the default index parameters. */
function measureEmbeddingLikeRecall(): number {
  const sample = embeddingLikeSampler(mulberry32(SEED), DIMENSIONS);
  const index = new VectorIndex({ dimensions: DIMENSIONS, exactBelow: 0 });
  const vectors = Array.from({ length: LATENT_VECTORS }, (_, i): [string, Float32Array] => [`v${i}`, sample()]);
  for (const [id, vector] of vectors) index.add(id, vector);
  let found = 0;
  for (let i = 0; i < RECALL_QUERIES; i++) {
    const query = sample();
    found += overlap(
      index
        .search(query, 50)
        .slice(0, K)
        .map((hit) => hit.id),
      exactNearest(vectors, query, K),
    );
  }
  return found / (RECALL_QUERIES * K);
}

function overlap(ids: string[], exact: Array<{ id: string }>): number {
  const found = new Set(ids);
  return exact.filter((hit) => found.has(hit.id)).length;
}

function printReport(results: ScaleResult[], embeddingLikeRecall: number): void {
  console.log('');
  console.log(
    row(
      'chunks',
      'ingest/s',
      'embed s',
      'build s',
      'heap MB',
      'offheap MB',
      'rss MB',
      'p50 ms',
      'p99 ms',
      'p99 target',
      `recall@${K}`,
    ),
  );
  for (const r of results) {
    console.log(
      row(
        String(r.chunks),
        ingestPerSecond(r).toFixed(0),
        (r.embedMs / 1000).toFixed(1),
        (r.buildMs / 1000).toFixed(1),
        r.heapDeltaMb.toFixed(0),
        r.offHeapDeltaMb.toFixed(0),
        r.rssDeltaMb.toFixed(0),
        r.p50Ms.toFixed(3),
        r.p99Ms.toFixed(3),
        `≤${r.p99TargetMs} ${r.p99Ms <= r.p99TargetMs ? 'met' : 'MISSED'}`,
        `${r.recall.toFixed(3)} ${verdict(r.recall)}`,
      ),
    );
  }
  console.log('');
  console.log(row('chunks', 'vector build s', 'vector p50', 'vector p99', 'exact p50', 'speed-up'));
  for (const r of results) {
    console.log(
      row(
        String(r.chunks),
        (r.vectorBuildMs / 1000).toFixed(1),
        r.vectorP50Ms.toFixed(3),
        r.vectorP99Ms.toFixed(3),
        r.exactP50Ms.toFixed(3),
        `${(r.exactP50Ms / r.vectorP50Ms).toFixed(1)}x`,
      ),
    );
  }
  const embedP50 = results.map((r) => `${r.queryEmbedP50Ms.toFixed(3)} ms`).join(', ');
  console.log(
    `HNSW recall@${K} on embedding-like vectors (${LATENT_VECTORS} clustered, ${LATENT_DIMENSIONS}-dim latent → ` +
      `${DIMENSIONS}): ${embeddingLikeRecall.toFixed(3)} ${verdict(embeddingLikeRecall)} (target ≥ ${RECALL_TARGET})`,
  );
  console.log(
    'ingest/s: local embedding + indexing; build: indexing alone; memory: retained by the index after a full GC ' +
      "(chunk records and embeddings excluded; offheap: typed arrays, the column scan's columns among them; " +
      `rss: includes native memory); p50/p99: hybrid query; recall@${K}: vector leg vs exact search for ` +
      `question-like queries (target ≥ ${RECALL_TARGET}); vector: the vector leg alone (query without text), ` +
      `exact: brute force over every embedding (the baseline); vector build: the vector index alone; query embedding p50 (not in p50/p99): ${embedP50}`,
  );
}

function ingestPerSecond(r: ScaleResult): number {
  return r.chunks / ((r.embedMs + r.buildMs) / 1000);
}

function verdict(recall: number): string {
  return recall >= RECALL_TARGET ? 'met' : 'MISSED';
}

/**
 * A full garbage collection before each memory reading, so deltas are retained memory: `gc` is
 * exposed at run time because `npm run bench` starts Node without `--expose-gc`.
 */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  return typeof gc === 'function' ? () => void gc() : () => undefined;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

function mb(bytes: number): number {
  return bytes / (1024 * 1024);
}

function row(...cells: string[]): string {
  const [label = '', ...rest] = cells;
  return label.padEnd(8) + rest.map((cell) => cell.padStart(12)).join(' ');
}
