import {
  FinishReason,
  GoogleGenAI,
  type GenerateContentResponse,
  type GenerateContentResponseUsageMetadata,
} from '@google/genai';
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

/** API version, set explicitly: the SDK's default differs between releases. */
export const GEMINI_API_VERSION = 'v1';

/** The `gemini` provider: generateContent through @google/genai. */
export class GeminiProvider implements LlmProvider {
  private readonly client: GoogleGenAI | undefined;

  constructor(settings: { apiKey: string | undefined; baseUrl: string | undefined }, options: LlmCallOptions) {
    this.client = settings.apiKey
      ? new GoogleGenAI({
          apiKey: settings.apiKey,
          apiVersion: GEMINI_API_VERSION,
          httpOptions: {
            ...(settings.baseUrl ? { baseUrl: settings.baseUrl } : {}),
            apiVersion: GEMINI_API_VERSION,
            timeout: options.timeoutMs,
            retryOptions: { attempts: options.maxRetries + 1 },
          },
        })
      : undefined;
  }

  async generate(model: string, prompt: ChatPrompt, options: GenerateOptions = {}): Promise<LlmReply> {
    if (!this.client) throw new LlmError('gemini', 'GEMINI_API_KEY is not set');
    const client = this.client;
    const contents = prompt.turns.map((turn) => ({
      role: turn.role === 'assistant' ? 'model' : 'user',
      parts: [{ text: turn.content }],
    }));
    const { onText, signal } = options;
    if (onText) {
      // The SDK's automatic continuation also reconnects a dropped stream from its last checkpoint,
      // which would send again the text that followed it: a streamed call turns it off, and a reply
      // that stops at a checkpoint fails rather than ending short. Retries (retryOptions) happen only
      // until the response arrives, so never once text has come.
      const open = (stream: AbortSignal) =>
        client.models.generateContentStream({
          model,
          contents,
          config: { systemInstruction: prompt.system, abortSignal: stream, automaticContinuation: false },
        });
      return streamReply('gemini', { onText, signal }, open, (chunk: GenerateContentResponse) => {
        if (chunk.candidates?.[0]?.finishReason === FinishReason.CONTINUATION) {
          throw new Error('the reply stopped at a continuation checkpoint, which a stream does not resume');
        }
        // Every chunk carries usageMetadata; the last one holds the call's totals.
        return { text: chunk.text ?? '', usage: chunk.usageMetadata && usageOf(chunk.usageMetadata) };
      });
    }
    try {
      const response = await client.models.generateContent({
        model,
        contents,
        config: { systemInstruction: prompt.system, abortSignal: signal },
      });
      return { text: response.text ?? '', usage: usageOf(response.usageMetadata) };
    } catch (error) {
      throw new LlmError('gemini', error instanceof Error ? error.message : String(error), { cause: error });
    }
  }
}

/** A thinking model's thoughts are billed as output but counted apart from the candidates. */
function usageOf(usage: GenerateContentResponseUsageMetadata | undefined): TokenUsage {
  const output =
    usage?.candidatesTokenCount === undefined && usage?.thoughtsTokenCount === undefined
      ? undefined
      : (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0);
  return { input_tokens: usage?.promptTokenCount, output_tokens: output };
}
