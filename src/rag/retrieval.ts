import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { ChunkStore } from '../store/chunk-store.ts';
import type { RedisClient } from '../store/redis-client.ts';
import type { RedisKeys } from '../store/redis-keys.ts';
import type { SignalBus } from '../store/signal-bus.ts';
import type { Embedder } from './embedder.ts';
import { HybridRetriever } from './hybrid-retriever.ts';
import { InProcessSearchEngine } from './in-process-search-engine.ts';
import { LocalEmbedder } from './local-embedder.ts';
import { GeminiEmbedder, OllamaEmbedder, OpenAiEmbedder } from './provider-embedders.ts';
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

/**
 * Chooses the engine: SEARCH_ENGINE=redis or in-process as told; `auto` probes the server and uses
 * its query engine when it has one (FT.HYBRID from Redis 8.4).
 */
export async function openRetrieval(
  redis: RedisClient,
  keys: RedisKeys,
  config: Config,
  signals: SignalBus,
  logger: Logger,
): Promise<Retrieval> {
  const embedder = createEmbedder(config);
  const chunks = new ChunkStore(redis, keys, embedder.space);
  const probe = config.SEARCH_ENGINE === 'in-process' ? undefined : await probeQueryEngine(redis);
  if (config.SEARCH_ENGINE === 'redis' && !probe) {
    throw new SearchEngineUnavailableError('SEARCH_ENGINE=redis, but this Redis has no query engine (FT._LIST failed)');
  }
  let engine: SearchEngine;
  if (probe) {
    engine = new RedisSearchEngine(redis, chunks, keys.searchIndex(embedder.space), { hybrid: probe.hybrid });
  } else {
    engine = new InProcessSearchEngine({
      dimensions: await dimensionsOf(embedder),
      vectorIndex: { method: embedder.vectorSearch },
    });
  }
  logger.info({ engine: engine.name, embeddings: embedder.space }, 'retrieval ready');
  const index = new RetrievalIndex(engine, chunks, signals, logger);
  return { embedder, engine, chunks, index, retriever: new HybridRetriever(embedder, engine) };
}

/** A gateway configured with another embedding space than the one the stored chunks are in. */
export class EmbeddingSpaceChangedError extends Error {
  override name = 'EmbeddingSpaceChangedError';
}

/**
 * Records the embedding space a gateway stores chunks in (the CLI follows it, never its own
 * EMBEDDINGS). Chunks stored in another space are never silently left out of retrieval: until
 * re-embedding them is built, a gateway with another space refuses to start while they exist.
 */
export async function recordEmbeddingSpace(redis: RedisClient, keys: RedisKeys, space: string): Promise<void> {
  const recorded = await recordedEmbeddingSpace(redis, keys);
  if (recorded !== undefined && recorded !== space && (await new ChunkStore(redis, keys, recorded).any())) {
    throw new EmbeddingSpaceChangedError(
      `EMBEDDINGS gives the embedding space ${space}, but the stored chunks are in ${recorded}; ` +
        `re-embedding them is not supported yet, so start with the EMBEDDINGS of ${recorded}`,
    );
  }
  await redis.set(keys.embeddingSpace(), space);
}

/** The embedding space the gateways store chunks in, if one has started. */
export async function recordedEmbeddingSpace(redis: RedisClient, keys: RedisKeys): Promise<string | undefined> {
  return (await redis.get(keys.embeddingSpace())) ?? undefined;
}

/** Whether the server has the query engine, and whether it has FT.HYBRID (Redis ≥ 8.4). */
export async function probeQueryEngine(redis: RedisClient): Promise<{ hybrid: boolean } | undefined> {
  try {
    await redis.sendCommand(['FT._LIST']);
  } catch {
    return undefined;
  }
  const info = await redis.info('server');
  const [major = 0, minor = 0] = (/redis_version:(\d+)\.(\d+)/.exec(info) ?? []).slice(1).map(Number);
  return { hybrid: major > 8 || (major === 8 && minor >= 4) };
}

async function dimensionsOf(embedder: Embedder): Promise<number> {
  if (embedder.dimensions > 0) return embedder.dimensions;
  const model = embedder.space.slice(embedder.space.indexOf('-') + 1).split(':')[0]!;
  const known = KNOWN_DIMENSIONS[model];
  if (known) return known;
  const [probe] = await embedder.embed(['dimension probe']);
  return probe!.length;
}
