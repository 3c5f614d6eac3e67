/** One turn of the conversation as the LLM sees it. Agent replies are assistant turns. */
export interface PromptTurn {
  role: 'user' | 'assistant';
  content: string;
}

/** A provider-neutral prompt: system text, then turns ending with the new user message. */
export interface ChatPrompt {
  system: string;
  turns: PromptTurn[];
}

/** A chat LLM behind one interface; each adapter maps the prompt to its native message format. */
export interface LlmProvider {
  /** The reply text ('' when the model produced nothing). Throws LlmError on any failure. */
  generate(model: string, prompt: ChatPrompt): Promise<string>;
}

/** The provider failed, timed out or is not configured. `detail` stays generic; `cause` is logged. */
export class LlmError extends Error {
  override name = 'LlmError';
  readonly provider: string;

  constructor(provider: string, message: string, options?: ErrorOptions) {
    super(`${provider}: ${message}`, options);
    this.provider = provider;
  }
}

/** Timeout and retry bounds shared by every provider. */
export interface LlmCallOptions {
  timeoutMs: number;
  maxRetries: number;
}
