import type { Clock } from '../clock.ts';
import type { LlmProviders } from '../llm/llm-providers.ts';
import type { Logger } from '../logger.ts';
import { callMetrics, elapsedMs, reportTurnMetrics, type TurnMetrics } from '../metrics/turn-metrics.ts';
import { buildPrompt, randomFenceNonce } from './prompt-builder.ts';
import type { TurnRetrieval } from '../rag/turn-retrieval.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import type { StoredMessage } from '../store/conversation-store.ts';
import type { Channel } from './session.ts';

/** What generating a turn's reply works with. */
export interface TurnGenerationDeps {
  retrieval: TurnRetrieval;
  providers: LlmProviders;
  clock: Clock;
  logger: Logger;
  /** A new nonce for each prompt's reference fence (tests make it predictable); random by default. */
  fenceNonce?: () => string;
}

/** How generating a reply ended: the LLM's text, the LLM's failure, or a failure before the call. */
export type Generation =
  | { kind: 'reply'; text: string; metrics: TurnMetrics }
  | { kind: 'llm-failed'; error: unknown; metrics: TurnMetrics }
  | { kind: 'failed'; error: unknown };

/**
 * Retrieval, prompt and the LLM call of one turn. Never rejects. A turn that reached its LLM call
 * reports its metrics record (one `turn metrics` info line).
 */
export async function generateTurnReply(
  deps: TurnGenerationDeps,
  turn: { chatbot: Chatbot; channel: Channel; history: StoredMessage[]; message: string; signal?: AbortSignal },
): Promise<Generation> {
  const { chatbot, history, message } = turn;
  let retrieved;
  let prompt;
  try {
    retrieved = await deps.retrieval.retrieve({ chatbot, history, message });
    prompt = buildPrompt({
      chatbotName: chatbot.name,
      systemPrompt: chatbot.system_prompt,
      context: retrieved.context,
      history,
      message,
      fenceNonce: (deps.fenceNonce ?? randomFenceNonce)(),
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
  const started = deps.clock.nowMicros();
  let generation: Generation;
  try {
    const reply = await deps.providers[chatbot.provider].generate(chatbot.model, prompt, { signal: turn.signal });
    const llm = { status: 'ok' as const, ...callMetrics(elapsedMs(deps.clock, started), reply.usage) };
    generation = { kind: 'reply', text: reply.text, metrics: { ...base, llm } };
  } catch (error) {
    const llm = { status: 'failed' as const, ...callMetrics(elapsedMs(deps.clock, started), undefined) };
    generation = { kind: 'llm-failed', error, metrics: { ...base, llm } };
  }
  reportTurnMetrics(deps.logger, generation.metrics);
  return generation;
}
