import { GoogleGenAI } from '@google/genai';
import {
  LlmError,
  type ChatPrompt,
  type GenerateOptions,
  type LlmCallOptions,
  type LlmProvider,
  type LlmReply,
} from './llm-provider.ts';

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
    try {
      const response = await this.client.models.generateContent({
        model,
        contents: prompt.turns.map((turn) => ({
          role: turn.role === 'assistant' ? 'model' : 'user',
          parts: [{ text: turn.content }],
        })),
        config: { systemInstruction: prompt.system, abortSignal: options.signal },
      });
      const usage = response.usageMetadata;
      // A thinking model's thoughts are billed as output but counted apart from the candidates.
      const output =
        usage?.candidatesTokenCount === undefined && usage?.thoughtsTokenCount === undefined
          ? undefined
          : (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0);
      return { text: response.text ?? '', usage: { input_tokens: usage?.promptTokenCount, output_tokens: output } };
    } catch (error) {
      throw new LlmError('gemini', error instanceof Error ? error.message : String(error), { cause: error });
    }
  }
}
