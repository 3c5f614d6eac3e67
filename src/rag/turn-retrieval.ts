import type { Clock } from '../clock.ts';
import { LlmError } from '../llm/llm-provider.ts';
import type { LlmProviders } from '../llm/llm-providers.ts';
import type { Logger } from '../logger.ts';
import {
  callMetrics,
  elapsedMs,
  type LlmCallMetrics,
  type RetrievalMetrics,
  type RewriteStatus,
} from '../metrics/turn-metrics.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import type { StoredMessage } from '../store/conversation-store.ts';
import { CONTEXT_CHUNKS } from './hybrid-retriever.ts';
import { parseRewrite, queryVariants, rewritePrompt, type QueryRewrite } from './query-rewrite.ts';
import { reciprocalRankFusion } from './reciprocal-rank-fusion.ts';
import { bestRelevance } from './relevance-floor.ts';
import type { RetrievedChunk, Retriever } from './retriever.ts';

/** What a turn's retrieval works with. */
export interface TurnRetrievalDeps {
  retriever: Retriever;
  providers: LlmProviders;
  clock: Clock;
  logger: Logger;
  /** The rewrite's deadline, retries included (the provider timeout): a rewrite never delays a turn longer. */
  rewriteTimeoutMs: number;
}

/** A turn's passages for the prompt, how relevant the best of them is, and what finding them cost. */
export interface TurnContext {
  context: RetrievedChunk[];
  /**
   * The highest relevance among the passages (0 when none was found): a turn compares it with
   * `relevanceFloor(space)` to tell whether its sources answer the message at all.
   */
  bestRelevance: number;
  metrics: RetrievalMetrics;
}

/**
 * The retrieval step of a turn. With the chatbot's `retrieval.query_rewrite` on, its own provider
 * first rewrites the message (with the last turns) into a standalone question and search terms; the
 * message, the question and the terms are retrieved for, and their rankings fused by RRF. A rewrite
 * that fails, times out or cannot be read leaves the message alone, with a warning: it never fails
 * a turn. Off, the message alone is retrieved for, with no LLM call.
 */
export class TurnRetrieval {
  private readonly deps: TurnRetrievalDeps;

  constructor(deps: TurnRetrievalDeps) {
    if (!(deps.rewriteTimeoutMs > 0)) throw new RangeError('rewriteTimeoutMs must be a positive number');
    this.deps = deps;
  }

  async retrieve(input: { chatbot: Chatbot; history: StoredMessage[]; message: string }): Promise<TurnContext> {
    const { chatbot, message } = input;
    const rewrite = chatbot.settings.retrieval.query_rewrite ? await this.rewrite(input) : undefined;
    const queries = queryVariants(message, rewrite?.result);
    const started = this.deps.clock.nowMicros();
    const rankings = await Promise.all(queries.map((query) => this.deps.retriever.retrieve(chatbot.id, query)));
    const context = rankings.length === 1 ? rankings[0]! : fuseRankings(rankings);
    const retrieve_ms = elapsedMs(this.deps.clock, started);
    const best = bestRelevance(context);
    const metrics: RetrievalMetrics = { retrieve_ms, best_relevance: relevanceMetric(best) };
    if (rewrite) metrics.rewrite = { status: rewrite.status, ...rewrite.call, variants: queries.length };
    return { context, bestRelevance: best, metrics };
  }

  /** One call to the chatbot's own provider and model; never throws. */
  private async rewrite(input: { chatbot: Chatbot; history: StoredMessage[]; message: string }): Promise<{
    result: QueryRewrite | undefined;
    status: RewriteStatus;
    call: LlmCallMetrics;
  }> {
    const { chatbot } = input;
    const started = this.deps.clock.nowMicros();
    // The clock's timer rather than AbortSignal.timeout: the deadline runs on the turn's time (simulated in tests).
    const deadline = new AbortController();
    const { signal } = deadline;
    const timer = this.deps.clock.setTimeout(
      () => deadline.abort(new LlmError(chatbot.provider, 'query rewrite timed out')),
      this.deps.rewriteTimeoutMs,
    );
    const prompt = rewritePrompt(input.history, input.message);
    try {
      const reply = await untilAborted(
        this.deps.providers[chatbot.provider].generate(chatbot.model, prompt, { signal }),
        signal,
      );
      const result = parseRewrite(reply.text);
      if (!result) this.warn(chatbot, 'unparsable', undefined);
      const call = callMetrics(elapsedMs(this.deps.clock, started), reply.usage);
      return { result, status: result ? 'ok' : 'unparsable', call };
    } catch (error) {
      const status = signal.aborted ? 'timeout' : 'failed';
      this.warn(chatbot, status, error);
      return { result: undefined, status, call: callMetrics(elapsedMs(this.deps.clock, started), undefined) };
    } finally {
      this.deps.clock.clearTimer(timer);
    }
  }

  /** No message text: neither the visitor's nor the model's. */
  private warn(chatbot: Chatbot, status: RewriteStatus, error: unknown): void {
    this.deps.logger.warn(
      { chatbot_id: chatbot.id, status, ...(error === undefined ? {} : { err: error }) },
      'query rewrite unusable: retrieving for the message alone',
    );
  }
}

/**
 * Fuses the rankings of several queries by chunk id with Reciprocal Rank Fusion and keeps the
 * CONTEXT_CHUNKS best; each passage's score becomes its fused score, and its relevance the best any
 * query gave it (the passage is as relevant as the variant that matched it best).
 */
export function fuseRankings(rankings: RetrievedChunk[][], k: number = CONTEXT_CHUNKS): RetrievedChunk[] {
  const byId = new Map<string, RetrievedChunk>();
  for (const chunk of rankings.flat()) {
    const seen = byId.get(chunk.id);
    if (!seen) byId.set(chunk.id, chunk);
    else if (chunk.relevance > seen.relevance) byId.set(chunk.id, { ...seen, relevance: chunk.relevance });
  }
  return reciprocalRankFusion(rankings.map((ranking) => ranking.map((chunk) => chunk.id)))
    .slice(0, k)
    .map((entry) => ({ ...byId.get(entry.id)!, score: entry.score }));
}

/** A relevance as the metrics record it: to a thousandth. */
function relevanceMetric(relevance: number): number {
  return Math.round(relevance * 1000) / 1000;
}

/** `work`, or a rejection when `signal` aborts first (for a provider that does not stop on it). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
