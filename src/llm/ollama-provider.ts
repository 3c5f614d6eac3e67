import { Ollama, type ChatResponse, type Message } from 'ollama';
import { waitUnlessAborted } from '../wait-unless-aborted.ts';
import {
  LlmError,
  type ChatPrompt,
  type GenerateOptions,
  type LlmCallOptions,
  type LlmProvider,
  type LlmReply,
  type TokenUsage,
} from './llm-provider.ts';
import { fetchWithDeadline } from './fetch-with-deadline.ts';
import { streamReply } from './stream-reply.ts';

/** The first retry's delay, doubled for each later one, up to RETRY_MAX_MS. */
export const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 8000;

/**
 * Worth another try: no answer at all (connection refused or reset, a timeout), or 408, 409, 429 or
 * 5xx. The SDK's ResponseError (not exported) carries the HTTP status as `status_code`.
 */
function retryable(error: unknown): boolean {
  const status = (error as { status_code?: unknown } | null)?.status_code;
  if (typeof status !== 'number') return true;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The `ollama` provider: /api/chat through the ollama SDK, streamed when the caller takes pieces. */
export class OllamaProvider implements LlmProvider {
  private readonly host: string;
  private readonly options: LlmCallOptions;
  private readonly retryBaseMs: number;

  constructor(settings: { host: string | undefined }, options: LlmCallOptions, retryBaseMs = RETRY_BASE_MS) {
    this.options = options;
    this.host = settings.host ?? 'http://127.0.0.1:11434';
    this.retryBaseMs = retryBaseMs;
  }

  async generate(model: string, prompt: ChatPrompt, options: GenerateOptions = {}): Promise<LlmReply> {
    const messages = [{ role: 'system', content: prompt.system }, ...prompt.turns];
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.attempt(model, messages, options);
      } catch (error) {
        const failure =
          error instanceof LlmError
            ? error
            : new LlmError('ollama', error instanceof Error ? error.message : String(error), { cause: error });
        // Once text has gone to onText, another try would send it again.
        if (failure.emitted || attempt >= this.options.maxRetries || options.signal?.aborted) throw failure;
        if (!retryable(failure.cause)) throw failure;
      }
      // As the OpenAI SDK does: exponential from RETRY_BASE_MS, capped, with jitter, so that a busy
      // server is not hammered by every waiting turn at once.
      const delay = Math.min(this.retryBaseMs * 2 ** attempt, RETRY_MAX_MS) * (1 - Math.random() * 0.25);
      await waitUnlessAborted(delay, options.signal ?? new AbortController().signal);
    }
  }

  /** One request: the whole reply at once, or streamed to `onText`. */
  private async attempt(model: string, messages: Message[], options: GenerateOptions): Promise<LlmReply> {
    const { onText, signal } = options;
    if (!onText) {
      const response = await this.client(signal).chat({ model, messages, stream: false });
      return { text: response.message.content, usage: usageOf(response) };
    }
    const open = (stream: AbortSignal) => this.client(stream).chat({ model, messages, stream: true });
    return streamReply('ollama', { onText, signal }, open, (part: ChatResponse) => ({
      text: part.message.content,
      // The counts come with the last message only (`done: true`).
      usage: part.done ? usageOf(part) : undefined,
    }));
  }

  /**
   * The SDK has neither a per-request timeout nor a per-request signal for a non-streaming call: a
   * fetch with a deadline (and the caller's signal) gives it both; the deadline covers a streamed body
   * too. The client holds nothing else, so one is made per request.
   */
  private client(signal: AbortSignal | undefined): Ollama {
    return new Ollama({ host: this.host, fetch: fetchWithDeadline(this.options.timeoutMs, signal) });
  }
}

/** Older servers leave prompt_eval_count out when the prompt was cached: reported as unknown. */
function usageOf(response: ChatResponse): TokenUsage {
  return { input_tokens: response.prompt_eval_count, output_tokens: response.eval_count };
}
