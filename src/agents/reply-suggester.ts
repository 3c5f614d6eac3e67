import type { SuggestionGate } from '../admission/suggestion-gate.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import type { Clock } from '../clock.ts';
import { withoutMarkers } from '../conversations/citations.ts';
import { MAX_MESSAGE_CHARS } from '../conversations/message-text.ts';
import { HISTORY_SIZE, randomFenceNonce } from '../conversations/prompt-builder.ts';
import { ConflictError, ProviderError, ValidationError } from '../errors.ts';
import { LlmError, type LlmReply } from '../llm/llm-provider.ts';
import type { LlmProviders } from '../llm/llm-providers.ts';
import type { Logger } from '../logger.ts';
import { callMetrics, elapsedMs } from '../metrics/turn-metrics.ts';
import type { TurnRetrieval } from '../rag/turn-retrieval.ts';
import type { ConversationStore, StoredMessage } from '../store/conversation-store.ts';
import type { Agent } from './agent.ts';
import { suggestionPrompt } from './suggestion-prompt.ts';

/** What writing a reply suggestion works with. */
export interface ReplySuggesterDeps {
  conversations: ConversationStore;
  /** The turns' own retrieval (query rewrite included when the chatbot has it on). */
  retrieval: TurnRetrieval;
  providers: LlmProviders;
  gate: SuggestionGate;
  clock: Clock;
  logger: Logger;
  /** The provider call's deadline, retries included. */
  timeoutMs: number;
  /** A new nonce for each prompt's reference fence (tests make it predictable); random by default. */
  fenceNonce?: () => string;
}

/** A suggestion admitted by every rule, to be written. */
export interface PendingSuggestion {
  /** The draft; rejects with a DomainError whose detail the agent reads. Ends the agent's hold either way. */
  write(): Promise<string>;
}

/** Messages read to find the latest visitor message; the prompt quotes the last HISTORY_SIZE. */
const SCANNED = 50;

export const SUGGESTION_FAILED = "The chatbot's provider could not write a suggestion. Try again.";
export const SUGGESTION_TIMED_OUT = "The chatbot's provider took too long to write a suggestion. Try again.";
export const SUGGESTION_EMPTY = "The chatbot's provider wrote an empty suggestion. Try again.";

/**
 * Reply suggestions for human agents: the chatbot's own provider and model drafts the next message of
 * a conversation the agent holds, from the chatbot's system prompt, the passages retrieved for the
 * latest visitor message and the last turns. Nothing is stored or sent: the agent edits and sends.
 */
export class ReplySuggester {
  private readonly deps: ReplySuggesterDeps;

  constructor(deps: ReplySuggesterDeps) {
    if (!(deps.timeoutMs > 0)) throw new RangeError('timeoutMs must be a positive number');
    this.deps = deps;
  }

  /**
   * Checks that `agent` holds the conversation and that it has a visitor message, then takes the
   * agent's turn at the suggestion gate (one at a time, so many a minute); any refusal throws.
   */
  async admit(agent: Agent, chatbot: Chatbot, sessionId: string): Promise<PendingSuggestion> {
    const { conversations, gate, logger } = this.deps;
    const holder = (await conversations.get(chatbot.id, sessionId)).taken_over_by;
    if (holder !== agent.name) {
      throw new ConflictError(
        holder
          ? `Conversation is already taken over by ${holder}.`
          : 'Take over the conversation before asking for a suggestion.',
      );
    }
    const messages = await conversations.recentMessages(chatbot.id, sessionId, SCANNED);
    const latest = messages.findLastIndex((message) => message.role === 'user');
    if (latest < 0) throw new ValidationError('The conversation has no visitor message to reply to.');
    const release = await gate.admit(agent);
    const end = () => release().catch((error: unknown) => logger.warn({ err: error }, 'suggestion hold not released'));
    return { write: () => this.write(chatbot, messages, latest).finally(end) };
  }

  private async write(chatbot: Chatbot, messages: StoredMessage[], latest: number): Promise<string> {
    const { clock, logger } = this.deps;
    const retrieved = await this.deps.retrieval.retrieve({
      chatbot,
      history: messages.slice(Math.max(0, latest - HISTORY_SIZE), latest),
      message: messages[latest]!.content,
    });
    const prompt = suggestionPrompt({
      chatbotName: chatbot.name,
      systemPrompt: chatbot.system_prompt,
      context: retrieved.context,
      messages,
      fenceNonce: (this.deps.fenceNonce ?? randomFenceNonce)(),
    });
    const started = clock.nowMicros();
    const metrics = { chatbot_id: chatbot.id, provider: chatbot.provider, model: chatbot.model, ...retrieved.metrics };
    // The clock's timer rather than AbortSignal.timeout: the deadline runs on the injected clock.
    const deadline = new AbortController();
    const timer = clock.setTimeout(
      () => deadline.abort(new LlmError(chatbot.provider, 'suggestion timed out')),
      this.deps.timeoutMs,
    );
    let reply: LlmReply;
    try {
      reply = await this.deps.providers[chatbot.provider].generate(chatbot.model, prompt, { signal: deadline.signal });
    } catch (error) {
      const timedOut = deadline.signal.aborted;
      const llm = { status: timedOut ? 'timeout' : 'failed', ...callMetrics(elapsedMs(clock, started), undefined) };
      logger.warn({ ...metrics, llm, err: error }, 'suggestion failed');
      throw new ProviderError(timedOut ? SUGGESTION_TIMED_OUT : SUGGESTION_FAILED, { cause: error });
    } finally {
      clock.clearTimer(timer);
    }
    logger.info(
      { ...metrics, llm: { status: 'ok', ...callMetrics(elapsedMs(clock, started), reply.usage) } },
      'suggestion metrics',
    );
    // Markers would name references the visitor never sees; an agent sends at most a message's length.
    const text = [...withoutMarkers(reply.text).trim()].slice(0, MAX_MESSAGE_CHARS).join('').trim();
    if (!text) throw new ProviderError(SUGGESTION_EMPTY);
    return text;
  }
}
