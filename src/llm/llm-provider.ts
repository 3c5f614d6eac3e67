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

/** The tokens a call was billed for, as the provider reported them (absent when it did not). */
export interface TokenUsage {
  input_tokens?: number;
  output_tokens?: number;
}

/** What a call produced: the text ('' when the model produced nothing) and its reported usage. */
export interface LlmReply {
  text: string;
  usage?: TokenUsage;
}

/** Per-call options. */
export interface GenerateOptions {
  /**
   * Abandons the call (and its retries) when aborted; the call then rejects with an LlmError. A stream
   * stops at once: its HTTP request is aborted and `onText` is not called again.
   */
  signal?: AbortSignal;
  /**
   * Streams the reply: called with each non-empty piece of text as it arrives, in order. The call still
   * resolves with the whole reply (`text` is the pieces joined). A failure after the first piece rejects
   * with `emitted: true` and is never retried, since a retry would repeat text the caller already has.
   */
  onText?: (delta: string) => void;
}

/** A chat LLM behind one interface; each adapter maps the prompt to its native message format. */
export interface LlmProvider {
  /** The reply and its token usage. Throws LlmError on any failure. */
  generate(model: string, prompt: ChatPrompt, options?: GenerateOptions): Promise<LlmReply>;
}

/** The provider failed, timed out or is not configured. `detail` stays generic; `cause` is logged. */
export class LlmError extends Error {
  override name = 'LlmError';
  readonly provider: string;
  /**
   * Whether some of the reply had already gone to `onText` when the call failed: the caller holds part
   * of a reply and must not start it over. Always false for a call without `onText`.
   */
  readonly emitted: boolean;

  constructor(provider: string, message: string, options?: ErrorOptions & { emitted?: boolean }) {
    super(`${provider}: ${message}`, options);
    this.provider = provider;
    this.emitted = options?.emitted ?? false;
  }
}

/** Timeout and retry bounds shared by every provider. */
export interface LlmCallOptions {
  timeoutMs: number;
  maxRetries: number;
}
