import { SpanKind, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { Clock } from '../clock.ts';
import type { Channel } from '../conversations/session.ts';
import type { Provider } from '../chatbots/chatbot.ts';
import type { GatewayMetrics, TurnOutcomeLabel } from './gateway-metrics.ts';
import { failSpan, startSpan, traced } from './traced.ts';
import type { TurnMetrics } from './turn-metrics.ts';

/** A part of a turn that gets its own span (`store` is also a metric stage: no other record times it). */
export type TurnStep = 'record' | 'announce' | 'retrieve' | 'store';

const STEP_SPANS: Record<TurnStep, string> = {
  record: 'turn.record',
  announce: 'turn.announce',
  retrieve: 'retrieval',
  store: 'turn.store',
};

/** The OpenTelemetry GenAI name of each provider (`gen_ai.provider.name`). */
const GEN_AI_PROVIDERS: Record<Provider, string> = { chatgpt: 'openai', gemini: 'gcp.gemini', ollama: 'ollama' };

/** What observing turns records into: metrics when they are on, spans always (a no-op tracer when off). */
export interface TurnObserverDeps {
  metrics: GatewayMetrics | undefined;
  tracer: Tracer;
  clock: Pick<Clock, 'nowMicros'>;
}

/** Starts the observation of each visitor message the conversation router takes. */
export class TurnObserver {
  private readonly deps: TurnObserverDeps;

  constructor(deps: TurnObserverDeps) {
    this.deps = deps;
  }

  /** A visitor message reached the router (the one entry of every channel). */
  begin(message: { chatbotId: string; channel: Channel }): TurnObservation {
    return new TurnObservation(this.deps, message.chatbotId, message.channel);
  }
}

/**
 * One visitor message's way through the gateway, as metrics and one trace: a root span for the
 * channel's message (`message <channel>`), under it the `turn` span from the actor taking the
 * message up, and under that the record, announce, retrieval, LLM call (`chat <model>`) and store
 * spans. No message text and no session id is recorded; the chatbot id is a span attribute only.
 */
export class TurnObservation {
  private readonly deps: TurnObserverDeps;
  private readonly channel: Channel;
  private readonly root: Span;
  private readonly startedMicros: number;
  private turn: Span | undefined;
  private call: Span | undefined;
  private admittedOnce = false;
  private answeredOnce = false;

  constructor(deps: TurnObserverDeps, chatbotId: string, channel: Channel) {
    this.deps = deps;
    this.channel = channel;
    this.startedMicros = deps.clock.nowMicros();
    this.root = startSpan(deps.tracer, `message ${channel}`, undefined, {
      kind: SpanKind.SERVER,
      attributes: { 'switchboard.channel': channel, 'switchboard.chatbot_id': chatbotId },
    });
  }

  /** The actor took the message up (called again for each lease retry: the first call counts). */
  began(): void {
    this.turn ??= startSpan(this.deps.tracer, 'turn', this.root);
  }

  /** The visitor message is stored under the conversation's lease: the `admit` stage ends here. */
  admitted(): void {
    if (this.admittedOnce) return;
    this.admittedOnce = true;
    this.deps.metrics?.stage('admit', this.channel, this.secondsSince(this.startedMicros));
  }

  /** Runs one step of the turn in its span (and times `store` as a stage). */
  async during<T>(step: TurnStep, work: () => Promise<T>, describe?: (result: T) => Attributes): Promise<T> {
    const started = this.deps.clock.nowMicros();
    try {
      return await traced(this.deps.tracer, STEP_SPANS[step], this.turn ?? this.root, work, { describe });
    } finally {
      if (step === 'store') this.deps.metrics?.stage('store', this.channel, this.secondsSince(started));
    }
  }

  /** The answer's LLM call starts (its span ends in `generated`). */
  calling(provider: Provider, model: string): void {
    this.call = startSpan(this.deps.tracer, `chat ${model}`, this.turn ?? this.root, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': GEN_AI_PROVIDERS[provider],
        'gen_ai.request.model': model,
      },
    });
  }

  /** The turn's metrics record (retrieval and the LLM call, made or skipped); `error` when the call failed. */
  generated(record: TurnMetrics, error?: unknown): void {
    const { metrics } = this.deps;
    const { channel } = this;
    if (metrics) {
      metrics.stage('retrieve', channel, record.retrieve_ms / 1000);
      const { rewrite, llm, provider } = record;
      if (rewrite) {
        metrics.stage('rewrite', channel, rewrite.ms / 1000);
        const failed = rewrite.status === 'failed' || rewrite.status === 'timeout';
        metrics.llmCall(provider, 'rewrite', failed, { input: rewrite.input_tokens, output: rewrite.output_tokens });
      }
      if (llm.status !== 'skipped') {
        metrics.stage('llm_total', channel, llm.ms / 1000);
        if (llm.first_text_ms !== undefined) metrics.stage('llm_first_token', channel, llm.first_text_ms / 1000);
        metrics.llmCall(provider, 'answer', llm.status === 'failed', {
          input: llm.input_tokens,
          output: llm.output_tokens,
        });
      }
    }
    this.endCall(record, error);
  }

  /** The requester was told how the turn ended (once; a takeover may tell it before the turn is done). */
  answered(outcome: TurnOutcomeLabel, error?: Error): void {
    if (this.answeredOnce) return;
    this.answeredOnce = true;
    this.deps.metrics?.turns.inc({ channel: this.channel, outcome });
    this.deps.metrics?.turnDuration.observe({ channel: this.channel, outcome }, this.secondsSince(this.startedMicros));
    this.root.setAttribute('switchboard.outcome', outcome);
    if (error) failSpan(this.root, error);
  }

  /** The turn has fully ended: its spans end. */
  done(): void {
    this.call?.end();
    this.turn?.end();
    this.root.end();
  }

  private endCall(record: TurnMetrics, error: unknown): void {
    const call = this.call;
    if (!call) return;
    this.call = undefined;
    const { llm } = record;
    if (llm.input_tokens !== null) call.setAttribute('gen_ai.usage.input_tokens', llm.input_tokens);
    if (llm.output_tokens !== null) call.setAttribute('gen_ai.usage.output_tokens', llm.output_tokens);
    if (llm.first_text_ms !== undefined) call.setAttribute('switchboard.llm.first_token_ms', llm.first_text_ms);
    if (llm.status === 'failed') failSpan(call, error ?? new Error('LLM call failed'));
    call.end();
  }

  private secondsSince(startMicros: number): number {
    return Math.max(0, this.deps.clock.nowMicros() - startMicros) / 1_000_000;
  }
}
