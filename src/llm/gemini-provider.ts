import { GoogleGenAI } from '@google/genai';
import { LlmError, type ChatPrompt, type LlmCallOptions, type LlmProvider } from './llm-provider.ts';

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

  async generate(model: string, prompt: ChatPrompt): Promise<string> {
    if (!this.client) throw new LlmError('gemini', 'GEMINI_API_KEY is not set');
    try {
      const response = await this.client.models.generateContent({
        model,
        contents: prompt.turns.map((turn) => ({
          role: turn.role === 'assistant' ? 'model' : 'user',
          parts: [{ text: turn.content }],
        })),
        config: { systemInstruction: prompt.system },
      });
      return response.text ?? '';
    } catch (error) {
      throw new LlmError('gemini', error instanceof Error ? error.message : String(error), { cause: error });
    }
  }
}
