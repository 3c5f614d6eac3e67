import { Ollama } from 'ollama';
import { LlmError, type ChatPrompt, type LlmCallOptions, type LlmProvider } from './llm-provider.ts';

/** The `ollama` provider: /api/chat through the ollama SDK, non-streaming. */
export class OllamaProvider implements LlmProvider {
  private readonly client: Ollama;
  private readonly options: LlmCallOptions;

  constructor(settings: { host: string | undefined }, options: LlmCallOptions) {
    this.options = options;
    // The SDK has no per-request timeout: a fetch with a deadline gives it one.
    const fetchWithTimeout: typeof fetch = (input, init) =>
      fetch(input, { ...init, signal: AbortSignal.timeout(options.timeoutMs) });
    this.client = new Ollama({ host: settings.host ?? 'http://127.0.0.1:11434', fetch: fetchWithTimeout });
  }

  async generate(model: string, prompt: ChatPrompt): Promise<string> {
    const messages = [{ role: 'system', content: prompt.system }, ...prompt.turns];
    for (let attempt = 0; ; attempt += 1) {
      try {
        const response = await this.client.chat({ model, messages, stream: false });
        return response.message.content;
      } catch (error) {
        if (attempt >= this.options.maxRetries) {
          throw new LlmError('ollama', error instanceof Error ? error.message : String(error), { cause: error });
        }
      }
    }
  }
}
