import type { Config } from '../config.ts';
import type { Provider } from '../chatbots/chatbot.ts';
import { GeminiProvider } from './gemini-provider.ts';
import type { LlmProvider } from './llm-provider.ts';
import { OllamaProvider } from './ollama-provider.ts';
import { OpenAiProvider } from './openai-provider.ts';

/** The provider behind each chatbot `provider` value. */
export type LlmProviders = Record<Provider, LlmProvider>;

/** Builds the three providers from configuration (keys and base URLs). */
export function createLlmProviders(config: Config): LlmProviders {
  const options = { timeoutMs: config.LLM_TIMEOUT_MS, maxRetries: config.LLM_MAX_RETRIES };
  return {
    chatgpt: new OpenAiProvider({ apiKey: config.OPENAI_API_KEY, baseUrl: config.OPENAI_BASE_URL }, options),
    gemini: new GeminiProvider({ apiKey: config.GEMINI_API_KEY, baseUrl: config.GEMINI_BASE_URL }, options),
    ollama: new OllamaProvider({ host: config.OLLAMA_HOST }, options),
  };
}
