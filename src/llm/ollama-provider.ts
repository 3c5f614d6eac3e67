import { Ollama } from 'ollama';
import { waitUnlessAborted } from '../wait-unless-aborted.ts';
import {
  LlmError,
  type ChatPrompt,
  type GenerateOptions,
  type LlmCallOptions,
  type LlmProvider,
  type LlmReply,
} from './llm-provider.ts';

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

/** The `ollama` provider: /api/chat through the ollama SDK, non-streaming. */
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
    const client = this.client(options.signal);
    const messages = [{ role: 'system', content: prompt.system }, ...prompt.turns];
    for (let attempt = 0; ; attempt += 1) {
      try {
        const response = await client.chat({ model, messages, stream: false });
        return {
          text: response.message.content,
          // Older servers leave prompt_eval_count out when the prompt was cached: reported as unknown.
          usage: { input_tokens: response.prompt_eval_count, output_tokens: response.eval_count },
        };
      } catch (error) {
        if (attempt >= this.options.maxRetries || options.signal?.aborted || !retryable(error)) {
          throw new LlmError('ollama', error instanceof Error ? error.message : String(error), { cause: error });
        }
      }
      // As the OpenAI SDK does: exponential from RETRY_BASE_MS, capped, with jitter, so that a busy
      // server is not hammered by every waiting turn at once.
      const delay = Math.min(this.retryBaseMs * 2 ** attempt, RETRY_MAX_MS) * (1 - Math.random() * 0.25);
      await waitUnlessAborted(delay, options.signal ?? new AbortController().signal);
    }
  }

  /**
   * The SDK has neither a per-request timeout nor a per-request signal for a non-streaming call: a
   * fetch with a deadline (and the caller's signal) gives it both. The client holds nothing else.
   */
  private client(signal: AbortSignal | undefined): Ollama {
    const { timeoutMs } = this.options;
    const fetchWithTimeout: typeof fetch = (input, init) => {
      const deadline = AbortSignal.timeout(timeoutMs);
      return fetch(input, { ...init, signal: signal ? AbortSignal.any([deadline, signal]) : deadline });
    };
    return new Ollama({ host: this.host, fetch: fetchWithTimeout });
  }
}
