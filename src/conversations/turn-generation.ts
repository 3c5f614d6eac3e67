import type { Clock } from '../clock.ts';
import type { LlmProviders } from '../llm/llm-providers.ts';
import type { Logger } from '../logger.ts';
import { callMetrics, elapsedMs, reportTurnMetrics, type TurnMetrics } from '../metrics/turn-metrics.ts';
import { buildPrompt, randomFenceNonce } from './prompt-builder.ts';
import { CitationFilter, citationsOf, type CitationMode } from './citations.ts';
import type { Citation } from '../contract/conversation.ts';
import type { TurnRetrieval } from '../rag/turn-retrieval.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import type { StoredMessage } from '../store/conversation-store.ts';
import type { Channel } from './session.ts';
import type { TurnObservation } from '../metrics/turn-observer.ts';

/** What generating a turn's reply works with. */
export interface TurnGenerationDeps {
  retrieval: TurnRetrieval;
  providers: LlmProviders;
  clock: Clock;
  logger: Logger;
  /** A new nonce for each prompt's reference fence (tests make it predictable); random by default. */
  fenceNonce?: () => string;
  /** The relevance below which the served embedding space's passages do not answer a question. */
  relevanceFloor: () => number;
}

/**
 * How generating a reply ended: the reply (its citation markers renumbered or stripped, and the
 * sources they cite), the LLM's failure (with the text it had already streamed), or a failure before
 * the call.
 */
export type Generation =
  /** `grounded`: a retrieved passage was above the relevance floor. */
  | { kind: 'reply'; text: string; citations: Citation[]; grounded: boolean; metrics: TurnMetrics }
  /** Nothing above the floor, and the chatbot answers only from its sources: the LLM was not asked. */
  | { kind: 'ungrounded'; metrics: TurnMetrics }
  | { kind: 'llm-failed'; error: unknown; partial: string; metrics: TurnMetrics }
  | { kind: 'failed'; error: unknown };

/** A turn as its generation needs it. */
export interface GenerationInput {
  chatbot: Chatbot;
  channel: Channel;
  history: StoredMessage[];
  message: string;
  signal?: AbortSignal;
  /** Given, the reply streams: each piece of it as visitors will read it (markers already renumbered). */
  onText?: (text: string) => void;
  /** The turn's metrics and trace, when either is on. */
  observation?: TurnObservation;
}

/**
 * Retrieval, prompt and the LLM call of one turn. Never rejects. A turn that reached its LLM call
 * reports its metrics record (one `turn metrics` info line).
 */
export async function generateTurnReply(deps: TurnGenerationDeps, turn: GenerationInput): Promise<Generation> {
  const { chatbot, history, message } = turn;
  const mode = citationMode(chatbot, turn.channel);
  let retrieved;
  let prompt;
  try {
    const retrieve = () => deps.retrieval.retrieve({ chatbot, history, message });
    retrieved = turn.observation
      ? await turn.observation.during('retrieve', retrieve, (found) => ({
          'switchboard.retrieval.passages': found.context.length,
          'switchboard.retrieval.best_relevance': found.metrics.best_relevance,
          ...(found.metrics.rewrite ? { 'switchboard.retrieval.rewrite': found.metrics.rewrite.status } : {}),
        }))
      : await retrieve();
    prompt = buildPrompt({
      chatbotName: chatbot.name,
      systemPrompt: chatbot.system_prompt,
      context: retrieved.context,
      history,
      message,
      fenceNonce: (deps.fenceNonce ?? randomFenceNonce)(),
      cite: mode === 'renumber',
    });
  } catch (error) {
    return { kind: 'failed', error };
  }
  const base = {
    chatbot_id: chatbot.id,
    channel: turn.channel,
    provider: chatbot.provider,
    model: chatbot.model,
    ...retrieved.metrics,
  };
  const grounded = retrieved.context.length > 0 && retrieved.bestRelevance >= deps.relevanceFloor();
  if (!grounded && chatbot.settings.answers.sources_only) {
    const metrics: TurnMetrics = { ...base, llm: { status: 'skipped', ...callMetrics(0, undefined) } };
    reportTurnMetrics(deps.logger, metrics);
    turn.observation?.generated(metrics);
    return { kind: 'ungrounded', metrics };
  }
  const filter = new CitationFilter(retrieved.context.length, mode);
  let shown = '';
  let firstText: number | undefined;
  const show = (text: string) => {
    if (!text) return;
    shown += text;
    turn.onText?.(text);
  };
  const onText = (piece: string) => {
    firstText ??= elapsedMs(deps.clock, started);
    show(filter.push(piece));
  };
  turn.observation?.calling(chatbot.provider, chatbot.model);
  const started = deps.clock.nowMicros();
  let generation: Generation;
  try {
    const reply = await deps.providers[chatbot.provider].generate(chatbot.model, prompt, {
      signal: turn.signal,
      ...(turn.onText ? { onText } : {}),
    });
    const llm = {
      status: 'ok' as const,
      ...callMetrics(elapsedMs(deps.clock, started), reply.usage),
      ...(firstText === undefined ? {} : { first_text_ms: firstText }),
    };
    // A provider that did not stream hands over the whole text here.
    if (!turn.onText) show(filter.push(reply.text));
    show(filter.end());
    const citations = citationsOf(retrieved.context, filter.cited());
    generation = { kind: 'reply', text: shown, citations, grounded, metrics: { ...base, llm } };
  } catch (error) {
    const llm = { status: 'failed' as const, ...callMetrics(elapsedMs(deps.clock, started), undefined) };
    generation = { kind: 'llm-failed', error, partial: shown, metrics: { ...base, llm } };
  }
  reportTurnMetrics(deps.logger, generation.metrics);
  turn.observation?.generated(generation.metrics, generation.kind === 'llm-failed' ? generation.error : undefined);
  return generation;
}

/**
 * Markers stay (renumbered) where the reply's reader sees its sources: in chat channels when the
 * chatbot cites, in the REST API when the owner asked for citations there too.
 */
function citationMode(chatbot: Chatbot, channel: Channel): CitationMode {
  const { citations, api_citations } = chatbot.settings.answers;
  return (channel === 'api' ? api_citations : citations) ? 'renumber' : 'strip';
}
