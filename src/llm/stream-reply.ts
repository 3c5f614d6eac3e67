import { LlmError, type LlmReply, type TokenUsage } from './llm-provider.ts';

/** What the gateway reads from one chunk of a provider's stream. */
export interface ReplyChunk {
  /** The chunk's new text; '' when it carries none. */
  text: string;
  /** The usage the chunk reports, if any: the last one reported is the call's. */
  usage?: TokenUsage;
}

/**
 * Reads a provider's streamed reply: each non-empty piece goes to `onText` as it arrives, and the call
 * resolves with the pieces joined and the last usage a chunk reported. `open` sends the request with
 * `signal`, which aborts when the caller's does and whenever reading stops before the end (a failure,
 * an abort, a throwing `onText`), so that no request runs on unread; an SDK's own retries happen in
 * `open`, before any text. `read` turns one SDK chunk into a ReplyChunk and may throw to fail the
 * stream. Any failure rejects with an LlmError whose `emitted` says whether `onText` had been called.
 * An aborted caller's signal fails the call even where an SDK ends its stream quietly on abort, and no
 * piece reaches `onText` once it has aborted.
 */
export async function streamReply<Chunk>(
  provider: string,
  options: { onText: (delta: string) => void; signal?: AbortSignal | undefined },
  open: (signal: AbortSignal) => Promise<AsyncIterable<Chunk>>,
  read: (chunk: Chunk) => ReplyChunk,
): Promise<LlmReply> {
  const { onText, signal } = options;
  let text = '';
  let usage: TokenUsage | undefined;
  const reading = new AbortController();
  try {
    for await (const chunk of await open(signal ? AbortSignal.any([signal, reading.signal]) : reading.signal)) {
      if (signal?.aborted) break;
      const piece = read(chunk);
      if (piece.usage) usage = piece.usage;
      if (!piece.text) continue;
      text += piece.text;
      onText(piece.text);
    }
    signal?.throwIfAborted();
  } catch (error) {
    throw new LlmError(provider, error instanceof Error ? error.message : String(error), {
      cause: error,
      emitted: text !== '',
    });
  } finally {
    // Some SDKs leave the response body open when their iterator is left early; after the end, a no-op.
    reading.abort();
  }
  return { text, usage };
}
