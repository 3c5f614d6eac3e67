import OpenAI from 'openai';
import {
  LlmError,
  type ChatPrompt,
  type GenerateOptions,
  type LlmCallOptions,
  type LlmProvider,
  type LlmReply,
} from './llm-provider.ts';

/** The `chatgpt` provider: OpenAI chat completions through the official SDK. */
export class OpenAiProvider implements LlmProvider {
  private readonly client: OpenAI | undefined;

  constructor(settings: { apiKey: string | undefined; baseUrl: string | undefined }, options: LlmCallOptions) {
    // Everything is passed explicitly so the SDK never falls back to reading the environment.
    this.client = settings.apiKey
      ? new OpenAI({
          apiKey: settings.apiKey,
          baseURL: settings.baseUrl ?? 'https://api.openai.com/v1',
          timeout: options.timeoutMs,
          maxRetries: options.maxRetries,
        })
      : undefined;
  }

  async generate(model: string, prompt: ChatPrompt, options: GenerateOptions = {}): Promise<LlmReply> {
    if (!this.client) throw new LlmError('openai', 'OPENAI_API_KEY is not set');
    try {
      const completion = await this.client.chat.completions.create(
        { model, messages: [{ role: 'system', content: prompt.system }, ...prompt.turns] },
        { signal: options.signal },
      );
      // completion_tokens already counts a reasoning model's reasoning tokens.
      return {
        text: completion.choices[0]?.message.content ?? '',
        usage: { input_tokens: completion.usage?.prompt_tokens, output_tokens: completion.usage?.completion_tokens },
      };
    } catch (error) {
      throw new LlmError('openai', error instanceof Error ? error.message : String(error), { cause: error });
    }
  }
}
