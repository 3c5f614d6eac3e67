import type { Span, Tracer } from '@opentelemetry/api';
import type { Clock } from '../clock.ts';
import type { GatewayMetrics, IngestionOutcome } from './gateway-metrics.ts';
import { failSpan, startSpan, traced } from './traced.ts';

/** What observing jobs records into: metrics when they are on, spans always (a no-op tracer when off). */
interface JobDeps {
  metrics: GatewayMetrics | undefined;
  tracer: Tracer;
  clock: Pick<Clock, 'nowMicros'>;
}

/** A step of an ingestion job that gets its own span. */
export type IngestionStep = 'read' | 'embed' | 'index';

/** Observes the ingestion worker's jobs: metrics when they are on, one trace per job. */
export class IngestionObserver {
  private readonly deps: JobDeps;

  constructor(deps: JobDeps) {
    this.deps = deps;
  }

  /** A claim of a source starts its job. */
  job(claim: { chatbotId: string; sourceId: string; interrupted: number }): JobObservation {
    return new JobObservation(this.deps, claim);
  }
}

/**
 * One ingestion job as its own trace: `ingestion job` (the claim to its end), with `ingestion.read`
 * (fetching, crawling, parsing), `ingestion.embed` (chunking and embedding what changed) and
 * `ingestion.index` (writing the chunks) under it.
 */
export class JobObservation {
  private readonly deps: JobDeps;
  private readonly root: Span;
  private readonly startedMicros: number;
  private outcome: IngestionOutcome = 'error';

  constructor(deps: JobDeps, claim: { chatbotId: string; sourceId: string; interrupted: number }) {
    this.deps = deps;
    this.startedMicros = deps.clock.nowMicros();
    this.root = startSpan(deps.tracer, 'ingestion job', undefined, {
      attributes: {
        'switchboard.chatbot_id': claim.chatbotId,
        'switchboard.source_id': claim.sourceId,
        'switchboard.ingestion.interrupted': claim.interrupted,
      },
    });
  }

  /** Runs a step of the job in its span. */
  during<T>(step: IngestionStep, work: () => Promise<T>): Promise<T> {
    return traced(this.deps.tracer, `ingestion.${step}`, this.root, work);
  }

  /** How the job ended (the last call counts). */
  ended(outcome: IngestionOutcome, reason?: string): void {
    this.outcome = outcome;
    if (reason !== undefined) failSpan(this.root, new Error(reason));
  }

  /** The job is over: its metrics are recorded and its trace ends. */
  done(): void {
    const seconds = Math.max(0, this.deps.clock.nowMicros() - this.startedMicros) / 1_000_000;
    this.deps.metrics?.ingestionJobs.inc({ outcome: this.outcome });
    this.deps.metrics?.ingestionDuration.observe({ outcome: this.outcome }, seconds);
    this.root.setAttribute('switchboard.ingestion.outcome', this.outcome);
    this.root.end();
  }
}
