import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { ChunkStore } from '../store/chunk-store.ts';
import { isCluster, sendRawCommand, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import type { SignalBus } from '../redis/signal-bus.ts';
import type { EmbeddingSpaceStore, SpaceSetting } from '../store/embedding-space-store.ts';
import type { ChatbotLoadsOptions } from './chatbot-loads.ts';
import type { Embedder } from './embedder.ts';
import { HybridRetriever } from './hybrid-retriever.ts';
import { InProcessSearchEngine } from './in-process-search-engine.ts';
import { LocalEmbedder } from './local-embedder.ts';
import { GeminiEmbedder, OllamaEmbedder, OpenAiEmbedder } from './provider-embedders.ts';
import { QueryEmbedder } from './query-embedder.ts';
import { RedisSearchEngine } from './redis-search-engine.ts';
import { RetrievalIndex } from './retrieval-index.ts';
import type { SearchEngine } from './search-engine.ts';

/** `SEARCH_ENGINE=redis` on a server without the query engine. */
export class SearchEngineUnavailableError extends Error {
  override name = 'SearchEngineUnavailableError';
}

/** A process's retrieval: the embedder, the chosen engine, its index keeper and the retriever. */
export interface Retrieval {
  embedder: Embedder;
  /** The embedder of questions (`embedder`, remembering what it embedded); retrieval and the unanswered inbox use it. */
  queries: QueryEmbedder;
  engine: SearchEngine;
  chunks: ChunkStore;
  index: RetrievalIndex;
  retriever: HybridRetriever;
}

/** Dimensions of well-known embedding models, so no startup call is needed to learn them. */
const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'text-embedding-004': 768,
  'gemini-embedding-001': 3072,
  'nomic-embed-text': 768,
  'mxbai-embed-large': 1024,
  'all-minilm': 384,
};

/** The embedder named by `EMBEDDINGS`. */
export function createEmbedder(config: Config): Embedder {
  const [kind, ...rest] = config.EMBEDDINGS.split(':');
  const model = rest.join(':');
  const timeoutMs = config.LLM_TIMEOUT_MS;
  if (kind === 'openai') {
    return new OpenAiEmbedder(model, {
      apiKey: config.OPENAI_API_KEY ?? '',
      baseUrl: config.OPENAI_BASE_URL,
      timeoutMs,
    });
  }
  if (kind === 'gemini') {
    return new GeminiEmbedder(model, {
      apiKey: config.GEMINI_API_KEY ?? '',
      baseUrl: config.GEMINI_BASE_URL,
      timeoutMs,
    });
  }
  if (kind === 'ollama') return new OllamaEmbedder(model, { host: config.OLLAMA_HOST });
  return new LocalEmbedder();
}

/** Whether the server's query engine can serve retrieval, and why not. */
export type QueryEngineProbe = { usable: true } | { usable: false; reason: string };

/**
 * Chooses the engine: SEARCH_ENGINE=redis or in-process as told; `auto` probes the server and uses
 * its query engine when it has one that can serve (Redis 7.4 or later). On a Redis Cluster `auto`
 * is the in-process engine: each shard's query engine indexes only its own keys, and only a
 * coordinator that spreads a query over the shards (Redis Software, Redis Cloud) answers from all of
 * them, which an operator who runs one says with SEARCH_ENGINE=redis.
 */
export async function openRetrieval(
  redis: RedisClient,
  keys: RedisKeys,
  config: Config,
  signals: SignalBus,
  logger: Logger,
  loading: ChatbotLoadsOptions = {},
): Promise<Retrieval> {
  const embedder = createEmbedder(config);
  const chunks = new ChunkStore(redis, keys, embedder.space);
  const inProcess = config.SEARCH_ENGINE === 'in-process' || (config.SEARCH_ENGINE === 'auto' && isCluster(redis));
  const probe = inProcess ? undefined : await probeQueryEngine(redis);
  if (config.SEARCH_ENGINE === 'redis' && !probe?.usable) {
    throw new SearchEngineUnavailableError(`SEARCH_ENGINE=redis, but ${probe?.reason}`);
  }
  let engine: SearchEngine;
  if (probe?.usable) {
    engine = new RedisSearchEngine(redis, chunks, keys.searchIndex(embedder.space));
  } else {
    engine = new InProcessSearchEngine({
      dimensions: await dimensionsOf(embedder),
      vectorIndex: { method: embedder.vectorSearch },
    });
  }
  logger.info({ engine: engine.name, embeddings: embedder.space }, 'retrieval ready');
  const index = new RetrievalIndex(engine, chunks, signals, logger, loading);
  const queries = new QueryEmbedder(embedder);
  return { embedder, queries, engine, chunks, index, retriever: new HybridRetriever(queries, index) };
}

/** The stored chunks are in a space this version cannot embed queries into (so cannot serve). */
export class UnservableEmbeddingSpaceError extends Error {
  override name = 'UnservableEmbeddingSpaceError';
}

/**
 * The space a starting gateway serves: the recorded one (recording its own when none is), so that
 * every gateway answers from the same chunks. When the gateway's own `EMBEDDINGS` makes another space,
 * it keeps serving the recorded one and re-embeds into its own in the background (SpaceMigration).
 */
export async function settleEmbeddingSpace(
  store: EmbeddingSpaceStore,
  config: Config,
  wanted: SpaceSetting,
): Promise<SpaceSetting> {
  const active = await store.active();
  if (active === undefined || active.space === wanted.space) {
    if (active?.embeddings !== wanted.embeddings) await store.record(wanted);
    return wanted;
  }
  await store.record(active); // (the same setting; a legacy record moves to where it is kept now)
  const served = createEmbedder({ ...config, EMBEDDINGS: active.embeddings }).space;
  if (served !== active.space) {
    throw new UnservableEmbeddingSpaceError(
      `the stored chunks are in the embedding space ${active.space}, which this version cannot embed questions into ` +
        `(EMBEDDINGS=${active.embeddings} makes ${served}); start a gateway of the version that stored them to re-embed them`,
    );
  }
  return active;
}

/** Whether the server has a query engine retrieval can use: FT._LIST answers, and Redis is 7.4 or later. */
export async function probeQueryEngine(redis: RedisClient): Promise<QueryEngineProbe> {
  try {
    await sendRawCommand(redis, ['FT._LIST']);
  } catch {
    return { usable: false, reason: 'this Redis has no query engine (FT._LIST failed)' };
  }
  return queryEngineOfServer(await redis.info('server'));
}

/** The verdict on a server with the query engine, from its `INFO server`. */
export function queryEngineOfServer(info: string): QueryEngineProbe {
  const version = /redis_version:(\d+)\.(\d+)/.exec(info);
  const [major = 0, minor = 0] = (version ?? []).slice(1).map(Number);
  // The text half's FT.AGGREGATE … ADDSCORES (redis-search-engine.ts) needs the query engine of 7.4.
  if (major < 7 || (major === 7 && minor < 4)) {
    const which = version ? `Redis ${major}.${minor}` : 'a Redis of unknown version';
    return { usable: false, reason: `this is ${which}, whose query engine has no ADDSCORES (7.4 or later needed)` };
  }
  return { usable: true };
}

/** The length of the embedder's vectors (known for well-known models, else asked of it once). */
export async function dimensionsOf(embedder: Embedder): Promise<number> {
  if (embedder.dimensions > 0) return embedder.dimensions;
  const model = embedder.space.slice(embedder.space.indexOf('-') + 1).split(':')[0]!;
  const known = KNOWN_DIMENSIONS[model];
  if (known) return known;
  const [probe] = await embedder.embed(['dimension probe']);
  return probe!.length;
}
