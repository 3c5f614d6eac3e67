/** The LLM providers as the dashboard shows them. Part of the contract (see README.md beside this file). */

/**
 * The setting each provider needs on the gateways (Ollama needs none: its host has a default), as
 * `doctor`, the CLI's warnings and the dashboard name it.
 */
export const PROVIDER_SETTING: Record<ProviderStatus['provider'], string> = {
  chatgpt: 'OPENAI_API_KEY',
  gemini: 'GEMINI_API_KEY',
  ollama: 'OLLAMA_HOST',
};

/** `GET /dashboard/api/providers`: one provider as the answering gateway can call it. */
export interface ProviderStatus {
  provider: 'gemini' | 'chatgpt' | 'ollama';
  /** The gateway has its key (Ollama: always, its host has a default). Never the key itself. */
  configured: boolean;
  /** The model a chatbot gets when it names none. */
  default_model: string;
}

/** `POST /dashboard/api/providers/test`: one tiny completion's outcome. */
export interface ProviderTest {
  provider: ProviderStatus['provider'];
  model: string;
  ok: boolean;
  latency_ms: number;
  /** What the model answered (when `ok`). */
  reply?: string;
  /** Why the call failed, as the provider said it (when not `ok`). */
  detail?: string;
}

/** The body of a test: the provider, and the model to try (the provider's default when left out). */
export interface ProviderTestBody {
  provider: ProviderStatus['provider'];
  model?: string;
}
