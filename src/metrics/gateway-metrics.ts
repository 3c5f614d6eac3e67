import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Channel } from '../conversations/session.ts';
import { PROVIDERS, type Provider } from '../chatbots/chatbot.ts';

/** Seconds: from a quick API read to a slow LLM reply. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds: a Redis round trip, usually well under a millisecond. */
const REDIS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** A stage of a chat turn whose duration is observed. */
export type TurnStage = 'admit' | 'rewrite' | 'retrieve' | 'llm_first_token' | 'llm_total' | 'store';

/** How a turn ended for the channel that asked. */
export type TurnOutcomeLabel = 'reply' | 'silent' | 'failed';

/** Which LLM call of a turn: the answer, or the optional query rewrite before retrieval. */
export type LlmCall = 'answer' | 'rewrite';
const LLM_CALLS: LlmCall[] = ['answer', 'rewrite'];

/**
 * What became of one webhook attempt: delivered; failed and to be retried (`failed_attempt`); failed
 * for good, the last attempt or a webhook deleted or deactivated (`permanently_failed`); or attempted
 * by a process whose claim lapsed meanwhile, its result not recorded (`stale`).
 */
export type WebhookOutcome = 'delivered' | 'failed_attempt' | 'permanently_failed' | 'stale';
const WEBHOOK_OUTCOMES: WebhookOutcome[] = ['delivered', 'failed_attempt', 'permanently_failed', 'stale'];

/** How an ingestion job (one claim of a source) ended. */
export type IngestionOutcome = 'done' | 'failed' | 'cancelled' | 'lease_lost' | 'error';
const INGESTION_OUTCOMES: IngestionOutcome[] = ['done', 'failed', 'cancelled', 'lease_lost', 'error'];

/** A socket kind, by the route that accepted it. */
export type SocketKind = 'widget' | 'agent';

/**
 * The gateway's Prometheus metrics: one registry per gateway (never prom-client's global one, so
 * several gateways in one test process keep their own), Node's default process metrics, and the
 * instruments the gateway's parts record into. Labels are bounded sets (routes, channels,
 * providers, outcomes, command names): never a chatbot, session or delivery id.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly registers = [this.registry];

  readonly httpRequests = new Counter({
    name: 'switchboard_http_requests_total',
    help: 'HTTP requests answered, by method, route (the route pattern) and status class.',
    labelNames: ['method', 'route', 'status_class'] as const,
    registers: this.registers,
  });

  readonly httpDuration = new Histogram({
    name: 'switchboard_http_request_duration_seconds',
    help: 'Time from a request arriving to its response being written, by method and route.',
    labelNames: ['method', 'route'] as const,
    buckets: REQUEST_BUCKETS,
    registers: this.registers,
  });

  readonly turns = new Counter({
    name: 'switchboard_chat_turns_total',
    help: 'Visitor messages answered, by channel and outcome (reply, silent: a human holds it, failed).',
    labelNames: ['channel', 'outcome'] as const,
    registers: this.registers,
  });

  readonly turnDuration = new Histogram({
    name: 'switchboard_chat_turn_duration_seconds',
    help: 'Time from a visitor message reaching the gateway to its channel being answered.',
    labelNames: ['channel', 'outcome'] as const,
    buckets: REQUEST_BUCKETS,
    registers: this.registers,
  });

  readonly turnStages = new Histogram({
    name: 'switchboard_chat_turn_stage_duration_seconds',
    help: 'Duration of each stage of a chat turn (admit, rewrite, retrieve, llm_first_token, llm_total, store).',
    labelNames: ['stage', 'channel'] as const,
    buckets: REQUEST_BUCKETS,
    registers: this.registers,
  });

  readonly llmCalls = new Counter({
    name: 'switchboard_llm_calls_total',
    help: 'LLM calls made for chat turns, by provider and call (answer, rewrite).',
    labelNames: ['provider', 'call'] as const,
    registers: this.registers,
  });

  readonly llmErrors = new Counter({
    name: 'switchboard_llm_errors_total',
    help: 'LLM calls of chat turns that failed (an error, a timeout, an abort), by provider and call.',
    labelNames: ['provider', 'call'] as const,
    registers: this.registers,
  });

  readonly llmTokens = new Counter({
    name: 'switchboard_llm_tokens_total',
    help: 'Tokens the providers reported for chat turns, by provider and direction (input, output).',
    labelNames: ['provider', 'direction'] as const,
    registers: this.registers,
  });

  readonly webhookAttempts = new Counter({
    name: 'switchboard_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts, by outcome (delivered, failed_attempt, permanently_failed, stale).',
    labelNames: ['outcome'] as const,
    registers: this.registers,
  });

  readonly webhookDuration = new Histogram({
    name: 'switchboard_webhook_delivery_attempt_duration_seconds',
    help: "Time a webhook attempt's POST took until the receiver answered (or the attempt failed), by outcome.",
    labelNames: ['outcome'] as const,
    buckets: REQUEST_BUCKETS,
    registers: this.registers,
  });

  readonly ingestionJobs = new Counter({
    name: 'switchboard_ingestion_jobs_total',
    help: 'Ingestion jobs (a claim of a source) this gateway ran, by outcome.',
    labelNames: ['outcome'] as const,
    registers: this.registers,
  });

  readonly ingestionDuration = new Histogram({
    name: 'switchboard_ingestion_job_duration_seconds',
    help: 'Time an ingestion job ran, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: this.registers,
  });

  readonly redisCommands = new Histogram({
    name: 'switchboard_redis_command_duration_seconds',
    help: "Round trip of the process's Redis commands, by command (MULTI and PIPELINE for a batch).",
    labelNames: ['command'] as const,
    buckets: REDIS_BUCKETS,
    registers: this.registers,
  });

  readonly redisErrors = new Counter({
    name: 'switchboard_redis_command_errors_total',
    help: "The process's Redis commands that failed (an error reply, a timeout, the connection down), by command.",
    labelNames: ['command'] as const,
    registers: this.registers,
  });

  readonly scrapeReadFailures = new Counter({
    name: 'switchboard_metrics_redis_read_failures_total',
    help: 'Reads of Redis for a scrape that failed or timed out (their gauges read NaN).',
    registers: this.registers,
  });

  constructor() {
    // Node's standard metrics under their standard names (process_*, nodejs_*, with the event
    // loop's delay), so the usual Node.js dashboards and alerts apply unchanged.
    collectDefaultMetrics({ register: this.registry });
    // Every bounded series exists from the start at 0, so a rate over the first failure is not lost.
    for (const outcome of WEBHOOK_OUTCOMES) this.webhookAttempts.inc({ outcome }, 0);
    for (const outcome of INGESTION_OUTCOMES) this.ingestionJobs.inc({ outcome }, 0);
    for (const provider of PROVIDERS) {
      for (const call of LLM_CALLS) {
        this.llmCalls.inc({ provider, call }, 0);
        this.llmErrors.inc({ provider, call }, 0);
      }
      for (const direction of ['input', 'output']) this.llmTokens.inc({ provider, direction }, 0);
    }
  }

  /** A gauge whose value is read when scraped; `read` returning NaN says it could not be read. */
  gauge(name: string, help: string, read: () => number | Promise<number>): void {
    new Gauge({
      name,
      help,
      registers: this.registers,
      async collect() {
        this.set(await read());
      },
    });
  }

  /** A gauge with one label whose values are all read when scraped. */
  labelledGauge<L extends string>(
    name: string,
    help: string,
    label: L,
    read: () => Record<string, number> | Promise<Record<string, number>>,
  ): void {
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers: this.registers,
      async collect() {
        for (const [value, count] of Object.entries(await read()))
          this.set({ [label]: value } as Partial<Record<L, string>>, count);
      },
    });
  }

  /** The exposition text of every metric, and its content type. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** A chat turn's stage took `seconds`. */
  stage(stage: TurnStage, channel: Channel, seconds: number): void {
    this.turnStages.observe({ stage, channel }, seconds);
  }

  /** An LLM call of a turn, whether it failed, and the tokens its provider reported. */
  llmCall(provider: Provider, call: LlmCall, failed: boolean, tokens: { input: number | null; output: number | null }) {
    this.llmCalls.inc({ provider, call });
    if (failed) this.llmErrors.inc({ provider, call });
    if (tokens.input) this.llmTokens.inc({ provider, direction: 'input' }, tokens.input);
    if (tokens.output) this.llmTokens.inc({ provider, direction: 'output' }, tokens.output);
  }
}
