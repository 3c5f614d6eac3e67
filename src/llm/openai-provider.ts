import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { fetchWithDeadline } from './fetch-with-deadline.ts';
import {
  LlmError,
  type ChatPrompt,
  type GenerateOptions,
  type LlmCallOptions,
  type LlmProvider,
  type LlmReply,
  type TokenUsage,
} from './llm-provider.ts';
import { streamReply } from './stream-reply.ts';

/** The `chatgpt` provider: OpenAI chat completions through the official SDK. */
export class OpenAiProvider implements LlmProvider {
  private readonly client: OpenAI | undefined;
  /** The same client for streamed calls, with a deadline that also covers the streamed body. */
  private readonly streamingClient: OpenAI | undefined;

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
    // The SDK's timeout ends when the response headers arrive: a stream that stalls after them would
    // hold its turn until undici's five-minute body timeout. Each attempt gets timeoutMs in all, as a
    // non-streamed call does.
    this.streamingClient = this.client?.withOptions({ fetch: fetchWithDeadline(options.timeoutMs) });
  }

  async generate(model: string, prompt: ChatPrompt, options: GenerateOptions = {}): Promise<LlmReply> {
    if (!this.client || !this.streamingClient) throw new LlmError('openai', 'OPENAI_API_KEY is not set');
    const messages: ChatCompletionMessageParam[] = [{ role: 'system', content: prompt.system }, ...prompt.turns];
    const { onText, signal } = options;
    if (onText) {
      const client = this.streamingClient;
      // The SDK retries (maxRetries) only until the response arrives, so never once text has come.
      const open = (stream: AbortSignal) =>
        client.chat.completions.create(
          { model, messages, stream: true, stream_options: { include_usage: true } },
          { signal: stream },
        );
      return streamReply('openai', { onText, signal }, open, (chunk: ChatCompletionChunk) => ({
        text: chunk.choices[0]?.delta.content ?? '',
        // Only the last chunk, with no choices, carries usage (include_usage); the others have null.
        usage: chunk.usage ? usageOf(chunk.usage) : undefined,
      }));
    }
    try {
      const completion = await this.client.chat.completions.create({ model, messages }, { signal });
      return { text: completion.choices[0]?.message.content ?? '', usage: usageOf(completion.usage) };
    } catch (error) {
      throw new LlmError('openai', error instanceof Error ? error.message : String(error), { cause: error });
    }
  }
}

/** completion_tokens already counts a reasoning model's reasoning tokens. */
function usageOf(usage: OpenAI.CompletionUsage | undefined): TokenUsage {
  return { input_tokens: usage?.prompt_tokens, output_tokens: usage?.completion_tokens };
}
