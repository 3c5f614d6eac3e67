import { ProxyTracerProvider, type Tracer } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { Logger } from '../logger.ts';

/** The instrumentation scope of every span the gateway makes. */
export const TRACER_NAME = 'switchboard';

/** How long a stopping gateway waits for its last spans to be exported. */
const STOP_GRACE_MS = 5000;

/** Where traces go and what the gateway calls itself there. */
export interface TracingSettings {
  /** The collector's base URL (OTEL_EXPORTER_OTLP_ENDPOINT); spans are posted to `<it>/v1/traces`. */
  endpoint: string;
  headers: Record<string, string>;
  serviceName: string;
  /** This gateway's id, as `service.instance.id`. */
  instanceId: string;
  /** How long spans wait to be exported in a batch (tests shorten it). */
  scheduledDelayMs?: number;
}

/** A running trace pipeline: a tracer for the gateway's spans, and the exporter behind it. */
export interface Tracing {
  readonly tracer: Tracer;
  /** Exports the spans that ended and wait in the batch. */
  flush(): Promise<void>;
  /** Exports what is left and stops. */
  stop(): Promise<void>;
}

/**
 * A tracer that records nothing, for when traces are off: OpenTelemetry's API alone (never its SDK),
 * and not its process-wide global, so every gateway of a process holds its own.
 */
export const noTracer: Tracer = new ProxyTracerProvider().getTracer(TRACER_NAME);

/**
 * Starts the OpenTelemetry trace SDK: a tracer provider (not registered as the process's global:
 * spans get their parents explicitly) whose batch processor exports OTLP/HTTP JSON. The SDK is
 * imported here only, so a gateway without an endpoint never loads it.
 */
export async function startTracing(settings: TracingSettings, logger: Logger): Promise<Tracing> {
  const [
    { TracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { ExportResultCode },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
  ]);
  const exporter = new OTLPTraceExporter({
    url: `${settings.endpoint.replace(/\/+$/, '')}/v1/traces`,
    headers: settings.headers,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.instance.id': settings.instanceId,
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new ReportingExporter(exporter, ExportResultCode.SUCCESS, logger),
        ...(settings.scheduledDelayMs === undefined ? {} : { scheduledDelayMillis: settings.scheduledDelayMs }),
      }),
    ],
  });
  logger.info({ endpoint: settings.endpoint }, 'exporting traces');
  return {
    tracer: provider.getTracer(TRACER_NAME),
    flush: () => provider.forceFlush(),
    stop: async () => {
      // A collector that does not answer must not hold the gateway's stop: the last spans are given
      // up after a while (with a warning), as a full batch queue gives them up while running.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_GRACE_MS)));
      const shutdown = provider.shutdown().then(
        () => 'ended' as const,
        (error: unknown) => {
          logger.warn({ err: error }, 'the trace exporter did not stop cleanly');
          return 'ended' as const;
        },
      );
      const ended = await Promise.race([shutdown, late]);
      clearTimeout(timer);
      if (ended === 'late') logger.warn({ grace_ms: STOP_GRACE_MS }, 'traces not all exported before the stop');
    },
  };
}

/**
 * Logs every export that failed (the collector unreachable, or refusing): the SDK itself reports
 * them only to OpenTelemetry's diagnostic logger, which is silent unless set process-wide.
 */
class ReportingExporter implements SpanExporter {
  private readonly inner: SpanExporter;
  private readonly success: ExportResult['code'];
  private readonly logger: Logger;

  constructor(inner: SpanExporter, success: ExportResult['code'], logger: Logger) {
    this.inner = inner;
    this.success = success;
    this.logger = logger;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== this.success) {
        this.logger.warn({ err: result.error, spans: spans.length }, 'traces not exported; these spans are lost');
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
