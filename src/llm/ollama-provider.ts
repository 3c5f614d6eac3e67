import { Ollama } from 'ollama';
import {
  LlmError,
  type ChatPrompt,
  type GenerateOptions,
  type LlmCallOptions,
  type LlmProvider,
  type LlmReply,
} from './llm-provider.ts';

/** The `ollama` provider: /api/chat through the ollama SDK, non-streaming. */
export class OllamaProvider implements LlmProvider {
  private readonly host: string;
  private readonly options: LlmCallOptions;

  constructor(settings: { host: string | undefined }, options: LlmCallOptions) {
    this.options = options;
    this.host = settings.host ?? 'http://127.0.0.1:11434';
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
        if (attempt >= this.options.maxRetries || options.signal?.aborted) {
          throw new LlmError('ollama', error instanceof Error ? error.message : String(error), { cause: error });
        }
      }
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
