import type { GoogleGenAI } from '@google/genai';
import type { Ollama } from 'ollama';
import type OpenAI from 'openai';
import type { Embedder } from './embedder.ts';

/** Texts per embedding request. */
const BATCH = 96;

/** Scales a vector to unit length (cosine similarity becomes a dot product). */
export function normalise(values: ArrayLike<number>): Float32Array {
  const vector = Float32Array.from(values);
  let norm = 0;
  for (const v of vector) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < vector.length; i += 1) vector[i]! /= norm;
  return vector;
}

/**
 * The SDK's client, made on first use: a process that never embeds through a provider (the CLI, a
 * gateway on local embeddings) never loads its SDK, which is most of a CLI command's start-up.
 */
function onFirstUse<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/** Embeds in batches of BATCH with `call`, keeping the order of the texts. */
async function inBatches(texts: string[], call: (batch: string[]) => Promise<number[][]>): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += BATCH) {
    const vectors = await call(texts.slice(i, i + BATCH));
    out.push(...vectors.map(normalise));
  }
  return out;
}

/** `openai:<model>` through the openai SDK's embeddings endpoint. */
export class OpenAiEmbedder implements Embedder {
  readonly space: string;
  readonly dimensions = 0;
  private readonly client: () => Promise<OpenAI>;
  private readonly model: string;

  constructor(model: string, settings: { apiKey: string; baseUrl: string | undefined; timeoutMs: number }) {
    this.model = model;
    this.space = `openai-${model}`;
    this.client = onFirstUse(async () => {
      const { default: OpenAI } = await import('openai');
      return new OpenAI({
        apiKey: settings.apiKey,
        baseURL: settings.baseUrl ?? 'https://api.openai.com/v1',
        timeout: settings.timeoutMs,
        maxRetries: 2,
      });
    });
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return inBatches(texts, async (input) => {
      const response = await (await this.client()).embeddings.create({ model: this.model, input });
      return [...response.data].sort((a, b) => a.index - b.index).map((item) => item.embedding);
    });
  }
}

/** `gemini:<model>` through @google/genai's embedContent. */
export class GeminiEmbedder implements Embedder {
  readonly space: string;
  readonly dimensions = 0;
  private readonly client: () => Promise<GoogleGenAI>;
  private readonly model: string;

  constructor(model: string, settings: { apiKey: string; baseUrl: string | undefined; timeoutMs: number }) {
    this.model = model;
    this.space = `gemini-${model}`;
    this.client = onFirstUse(async () => {
      const [{ GoogleGenAI }, { GEMINI_API_VERSION }] = await Promise.all([
        import('@google/genai'),
        import('../llm/gemini-provider.ts'),
      ]);
      return new GoogleGenAI({
        apiKey: settings.apiKey,
        apiVersion: GEMINI_API_VERSION,
        httpOptions: {
          ...(settings.baseUrl ? { baseUrl: settings.baseUrl } : {}),
          apiVersion: GEMINI_API_VERSION,
          timeout: settings.timeoutMs,
          retryOptions: { attempts: 3 },
        },
      });
    });
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return inBatches(texts, async (contents) => {
      const response = await (await this.client()).models.embedContent({ model: this.model, contents });
      return (response.embeddings ?? []).map((item) => item.values ?? []);
    });
  }
}

/** `ollama:<model>` through the ollama SDK's /api/embed. */
export class OllamaEmbedder implements Embedder {
  readonly space: string;
  readonly dimensions = 0;
  private readonly client: () => Promise<Ollama>;
  private readonly model: string;

  constructor(model: string, settings: { host: string | undefined }) {
    this.model = model;
    this.space = `ollama-${model}`;
    this.client = onFirstUse(async () => {
      const { Ollama } = await import('ollama');
      return new Ollama({ host: settings.host ?? 'http://127.0.0.1:11434' });
    });
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return inBatches(
      texts,
      async (input) => (await (await this.client()).embed({ model: this.model, input })).embeddings,
    );
  }
}
