/**
 * The retrieval benchmark: the in-process engine's hybrid query (BM25 + HNSW, fused by RRF) at 10k
 * and 100k chunks of one chatbot, with 384-dimension `local` embeddings of a synthetic corpus that
 * reads like text to the tokenizer and the embedder (English words of the embedder's word table drawn
 * by their frequency rank, Zipf-like, among English function words, a topic per source), generated
 * from a fixed seed so every run indexes the same chunks and asks the same questions. Reports ingestion throughput (local embedding + indexing), index build time
 * and retained memory, hybrid query latency, and the recall@10 of the HNSW leg against exact
 * search, for the local embeddings and for embedding-like vectors (low intrinsic dimension).
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ChunkRecord } from '../src/rag/chunk.ts';
import { InProcessSearchEngine } from '../src/rag/in-process-search-engine.ts';
import { LocalEmbedder } from '../src/rag/local-embedder.ts';
import { exactNearest, VectorIndex } from '../src/rag/vector-index.ts';
import { wordVectors } from '../src/rag/word-vectors.ts';
import { describeMachine } from './bench-support.ts';

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
const CHATBOT_ID = 'bench-chatbot';
const SEED = 0x5eed;
const VOCABULARY_SIZE = 30_000;
/** Content words start below the function words in Zipf's ranking. */
const ZIPF_OFFSET = 30;
const CHUNKS_PER_SOURCE = 20;
const TOPIC_WORDS = 40;
const TOPIC_MIN_RANK = 200;
/** Of the content words, the share drawn from the source's topic. */
const TOPIC_SHARE = 0.4;
const FUNCTION_WORD_SHARE = 0.35;
const FUNCTION_WORDS =
  'the of and to in is for that with on as by at from this be are or an it was which we can you'.split(' ');
/** Embedding-like vectors: points around 200 centres in a 32-dimension latent space, projected to 384. */
const LATENT_DIMENSIONS = 32;
const LATENT_CENTRES = 200;
const LATENT_VECTORS = 10_000;

/** One scale's figures. */
interface ScaleResult {
  chunks: number;
  p99TargetMs: number;
  /** Local embedding of the scale's chunks. */
  embedMs: number;
  /** Indexing them (BM25 + HNSW). */
  buildMs: number;
  heapDeltaMb: number;
  offHeapDeltaMb: number;
  rssDeltaMb: number;
  p50Ms: number;
  p99Ms: number;
  queryEmbedP50Ms: number;
  recall: number;
}

export async function run(): Promise<number> {
  const machine = await describeMachine();
  const gc = exposeGc();
  console.log(
    `retrieval benchmark: in-process hybrid search (BM25 top 50 + HNSW top 50, RRF k=60, top ${K}), ` +
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
  printReport(results, embeddingLikeRecall, machine);
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
  const engine = new InProcessSearchEngine({ dimensions: DIMENSIONS });
  const started = performance.now();
  await engine.upsert(chunks);
  const buildMs = performance.now() - started;
  gc();
  const after = process.memoryUsage();
  const latency = await measureQueries(engine, corpus, chunks.length);
  const recall = await measureRecall(engine, corpus, chunks);
  return {
    chunks: chunks.length,
    p99TargetMs,
    embedMs,
    buildMs,
    heapDeltaMb: mb(after.heapUsed - before.heapUsed),
    offHeapDeltaMb: mb(after.external + after.arrayBuffers - before.external - before.arrayBuffers),
    rssDeltaMb: mb(after.rss - before.rss),
    ...latency,
    recall,
  };
}

/** Hybrid query latency; each query's embedding is computed first and timed apart. */
async function measureQueries(engine: InProcessSearchEngine, corpus: SyntheticCorpus, chunks: number) {
  const embedder = new LocalEmbedder();
  const latencies: number[] = [];
  const embedLatencies: number[] = [];
  for (let i = 0; i < WARMUP_QUERIES + QUERIES; i++) {
    const text = corpus.query(i, chunks);
    let started = performance.now();
    const embedding = embedder.embedOne(text);
    const embedMs = performance.now() - started;
    started = performance.now();
    const hits = await engine.search({ chatbotId: CHATBOT_ID, text, embedding, k: K });
    const searchMs = performance.now() - started;
    if (hits.length !== K) throw new Error(`query "${text}" returned ${hits.length} hits, expected ${K}`);
    if (i < WARMUP_QUERIES) continue;
    latencies.push(searchMs);
    embedLatencies.push(embedMs);
  }
  return {
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    queryEmbedP50Ms: percentile(embedLatencies, 0.5),
  };
}

/**
 * The share of the exact top 10 (brute force over every embedding) that the engine's vector leg
 * finds. A query without text leaves BM25 empty, so the fused order is the HNSW order.
 */
async function measureRecall(engine: InProcessSearchEngine, corpus: SyntheticCorpus, chunks: ChunkRecord[]) {
  const embedder = new LocalEmbedder();
  const vectors = chunks.map((chunk): [string, Float32Array] => [chunk.id, chunk.embedding]);
  const found: number[] = [];
  for (let i = 0; i < RECALL_QUERIES; i++) {
    const embedding = embedder.embedOne(corpus.query(WARMUP_QUERIES + QUERIES + i, chunks.length));
    const hits = await engine.search({ chatbotId: CHATBOT_ID, text: '', embedding, k: K });
    found.push(
      overlap(
        hits.map((hit) => hit.chunk.id),
        exactNearest(vectors, embedding, K),
      ),
    );
  }
  return found.reduce((sum, n) => sum + n, 0) / (RECALL_QUERIES * K);
}

/**
 * The HNSW index's recall@10 on vectors shaped like a neural model's embeddings: clustered, of
 * low intrinsic dimension (Gaussian clusters in a latent space, randomly projected to 384
 * dimensions, plus noise), with the engine's default index parameters.
 */
function measureEmbeddingLikeRecall(): number {
  const sample = embeddingLikeSampler(mulberry32(SEED));
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

function embeddingLikeSampler(random: () => number): () => Float32Array {
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const projection = Array.from({ length: LATENT_DIMENSIONS }, () => Float32Array.from({ length: DIMENSIONS }, gauss));
  const centres = Array.from({ length: LATENT_CENTRES }, () => Array.from({ length: LATENT_DIMENSIONS }, gauss));
  return () => {
    const centre = centres[Math.floor(random() * LATENT_CENTRES)]!;
    const vector = Float32Array.from({ length: DIMENSIONS }, () => 0.5 * gauss());
    centre.forEach((value, j) => {
      const z = value + 0.5 * gauss();
      for (let i = 0; i < DIMENSIONS; i++) vector[i]! += z * projection[j]![i]!;
    });
    const norm = Math.hypot(...vector);
    return vector.map((value) => value / norm);
  };
}

function overlap(ids: string[], exact: Array<{ id: string }>): number {
  const found = new Set(ids);
  return exact.filter((hit) => found.has(hit.id)).length;
}

function printReport(results: ScaleResult[], embeddingLikeRecall: number, machine: string): void {
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
  const embedP50 = results.map((r) => `${r.queryEmbedP50Ms.toFixed(3)} ms`).join(', ');
  console.log(
    `HNSW recall@${K} on embedding-like vectors (${LATENT_VECTORS} clustered, ${LATENT_DIMENSIONS}-dim latent → ` +
      `${DIMENSIONS}): ${embeddingLikeRecall.toFixed(3)} ${verdict(embeddingLikeRecall)} (target ≥ ${RECALL_TARGET})`,
  );
  console.log(
    'ingest/s: local embedding + indexing; build: indexing alone; memory: retained by the index after a full GC ' +
      `(chunk records and embeddings excluded; offheap: typed arrays; rss: includes the HNSW graph); ` +
      `recall@${K}: HNSW leg vs exact search for question-like queries (target ≥ ${RECALL_TARGET}); ` +
      `query embedding p50 (not in p50/p99): ${embedP50}`,
  );
  console.log('');
  console.log(
    'README rows (| benchmark | chunks | ingest chunks/s | build s | p50 ms | p99 ms | recall@10 | machine |):',
  );
  for (const r of results) {
    const cells = [
      'in-process hybrid retrieval, local-v2-384',
      String(r.chunks),
      ingestPerSecond(r).toFixed(0),
      (r.buildMs / 1000).toFixed(1),
      r.p50Ms.toFixed(3),
      r.p99Ms.toFixed(3),
      r.recall.toFixed(3),
      machine,
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
}

function ingestPerSecond(r: ScaleResult): number {
  return r.chunks / ((r.embedMs + r.buildMs) / 1000);
}

function verdict(recall: number): string {
  return recall >= RECALL_TARGET ? 'met' : 'MISSED';
}

/**
 * Deterministic text-like chunks and queries. Content words, the VOCABULARY_SIZE most frequent words
 * of the local embedder's table, follow Zipf's law below the function words (word i of the
 * vocabulary is drawn with probability ∝ 1/(i + 30), the function words taking the top ranks), and every source has a topic, a few dozen words its chunks keep coming back to,
 * so chunks of one source resemble each other as they do in real documents.
 */
export class SyntheticCorpus {
  readonly #vocabulary: string[];
  readonly #cdf: Float64Array;
  readonly #seed: number;

  constructor(seed: number) {
    this.#seed = seed;
    this.#vocabulary = wordVectors().words.slice(0, VOCABULARY_SIZE);
    this.#cdf = new Float64Array(VOCABULARY_SIZE);
    let total = 0;
    for (let i = 0; i < VOCABULARY_SIZE; i++) this.#cdf[i] = total += 1 / (i + ZIPF_OFFSET);
    for (let i = 0; i < VOCABULARY_SIZE; i++) this.#cdf[i]! /= total;
  }

  /** Chunk i: a title of 3–6 words and 6–10 sentences of 8–20 words, in its source's topic. */
  chunk(i: number): Omit<ChunkRecord, 'embedding'> {
    const source = Math.floor(i / CHUNKS_PER_SOURCE);
    const topic = this.#topic(source);
    const random = mulberry32(this.#seed ^ Math.imul(i + 1, 0x9e3779b1));
    const title = this.#words(random, topic, 3 + Math.floor(random() * 4), 0).join(' ');
    const sentences: string[] = [];
    const count = 6 + Math.floor(random() * 5);
    for (let s = 0; s < count; s++) {
      const words = this.#words(random, topic, 8 + Math.floor(random() * 13), FUNCTION_WORD_SHARE);
      sentences.push(`${words.join(' ')}.`);
    }
    const sourceId = `source-${source}`;
    const position = i % CHUNKS_PER_SOURCE;
    const url = `https://example.com/${sourceId}`;
    return {
      id: `${sourceId}:${position}`,
      chatbotId: CHATBOT_ID,
      sourceId,
      position,
      title,
      url,
      content: sentences.join(' '),
    };
  }

  /** Query q: 2–5 content words of one of the first `chunks` chunks, as a visitor might ask. */
  query(q: number, chunks: number): string {
    const random = mulberry32(~this.#seed ^ Math.imul(q + 1, 0x85ebca6b));
    const source = this.chunk(Math.floor(random() * chunks));
    const words = source.content
      .replace(/\./g, '')
      .split(' ')
      .filter((word) => !FUNCTION_WORDS.includes(word));
    const picked = Array.from(
      { length: 2 + Math.floor(random() * 4) },
      () => words[Math.floor(random() * words.length)]!,
    );
    return `how ${picked.join(' ')}?`;
  }

  /** A source's topic: TOPIC_WORDS words of the vocabulary's middle ranks, fixed by the source. */
  #topic(source: number): string[] {
    const random = mulberry32(this.#seed ^ Math.imul(source + 1, 0xc2b2ae35));
    const span = VOCABULARY_SIZE - TOPIC_MIN_RANK;
    return Array.from({ length: TOPIC_WORDS }, () => this.#vocabulary[TOPIC_MIN_RANK + Math.floor(random() * span)]!);
  }

  #words(random: () => number, topic: string[], count: number, functionShare: number): string[] {
    return Array.from({ length: count }, () => {
      if (random() < functionShare) return FUNCTION_WORDS[Math.floor(random() * FUNCTION_WORDS.length)]!;
      if (random() < TOPIC_SHARE) return topic[Math.floor(random() * topic.length)]!;
      return this.#vocabulary[this.#zipfRank(random())]!;
    });
  }

  #zipfRank(u: number): number {
    let low = 0;
    let high = VOCABULARY_SIZE - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.#cdf[mid]! < u) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/** A small, fast, seedable PRNG (mulberry32) returning floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
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
