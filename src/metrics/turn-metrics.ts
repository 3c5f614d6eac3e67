import type { Clock } from '../clock.ts';
import type { Channel } from '../conversations/session.ts';
import type { TokenUsage } from '../llm/llm-provider.ts';
import type { Logger } from '../logger.ts';
import type { Provider } from '../chatbots/chatbot.ts';

/** How a query rewrite went: `ok` (its queries were retrieved), or why the message alone was. */
export type RewriteStatus = 'ok' | 'failed' | 'timeout' | 'unparsable';

/** An LLM call's latency and the tokens the provider billed (null when it did not say). */
export interface LlmCallMetrics {
  ms: number;
  input_tokens: number | null;
  output_tokens: number | null;
}

/** The query rewrite of a turn (only when the chatbot has it on). */
export interface RewriteMetrics extends LlmCallMetrics {
  status: RewriteStatus;
  /** Queries retrieved for: the message, the standalone question, the terms (fewer when alike or failed). */
  variants: number;
}

/** What a turn's retrieval step measured. */
export interface RetrievalMetrics {
  /** Retrieving for every query and fusing the rankings; the rewrite call is measured apart. */
  retrieve_ms: number;
  /**
   * The highest relevance among the passages given to the prompt, to a thousandth (0 when none was
   * found); compared with the embedding space's relevance floor (src/rag/relevance-floor.ts).
   */
  best_relevance: number;
  rewrite?: RewriteMetrics;
}

/**
 * One record per turn that reached its LLM call (made or skipped): no message text, no session id. It is logged as one info
 * line (`turn metrics`); a metrics exporter reads the same record.
 */
export interface TurnMetrics extends RetrievalMetrics {
  chatbot_id: string;
  /** The channel the visitor message came in on. */
  channel: Channel;
  provider: Provider;
  model: string;
  /**
   * `first_text_ms`: when the first piece of a streamed reply arrived, from the call's start.
   * `skipped`: the chatbot answers only from its sources and none was relevant enough (no call).
   */
  llm: LlmCallMetrics & { status: 'ok' | 'failed' | 'skipped'; first_text_ms?: number };
}

/** The log line's message. */
export const TURN_METRICS_MESSAGE = 'turn metrics';

/** Reports a turn's record. */
export function reportTurnMetrics(logger: Logger, metrics: TurnMetrics): void {
  logger.info(metrics, TURN_METRICS_MESSAGE);
}

/** Milliseconds since `startMicros` on `clock`, to a tenth. */
export function elapsedMs(clock: Pick<Clock, 'nowMicros'>, startMicros: number): number {
  return Math.round((clock.nowMicros() - startMicros) / 100) / 10;
}

/** A call's latency and usage as recorded. */
export function callMetrics(ms: number, usage: TokenUsage | undefined): LlmCallMetrics {
  return { ms, input_tokens: usage?.input_tokens ?? null, output_tokens: usage?.output_tokens ?? null };
}
