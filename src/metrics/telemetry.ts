import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { DeliveryObserver } from './delivery-observer.ts';
import { GatewayMetrics } from './gateway-metrics.ts';
import { IngestionObserver } from './ingestion-observer.ts';
import { RedisCommandTiming } from './redis-command-timing.ts';
import { noTracer, startTracing, type Tracing } from './tracing.ts';
import { TurnObserver } from './turn-observer.ts';

/**
 * What a gateway observes itself with: Prometheus metrics (when METRICS_PORT or METRICS_TOKEN is
 * set), OpenTelemetry traces (when OTEL_EXPORTER_OTLP_ENDPOINT is set), and the observers its turns,
 * webhook attempts and ingestion jobs report to. Both off, there are no observers at all and the
 * gateway's parts skip every hook.
 */
export interface Telemetry {
  readonly metrics: GatewayMetrics | undefined;
  readonly tracing: Tracing | undefined;
  readonly turns: TurnObserver | undefined;
  readonly deliveries: DeliveryObserver | undefined;
  readonly ingestion: IngestionObserver | undefined;
  /** Stops timing Redis commands and exports the last spans. */
  stop(): Promise<void>;
}

/** Whether the configuration asks for metrics. */
export function metricsEnabled(config: Pick<Config, 'METRICS_PORT' | 'METRICS_TOKEN'>): boolean {
  return config.METRICS_PORT !== undefined || config.METRICS_TOKEN !== undefined;
}

/** Starts what the configuration turns on. `instanceId` names the gateway in its traces. */
export async function startTelemetry(
  config: Config,
  deps: { clock: Clock; logger: Logger; instanceId: string; traceDelayMs?: number },
): Promise<Telemetry> {
  const metrics = metricsEnabled(config) ? new GatewayMetrics() : undefined;
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracing = endpoint
    ? await startTracing(
        {
          endpoint,
          headers: config.OTEL_EXPORTER_OTLP_HEADERS ?? {},
          serviceName: config.OTEL_SERVICE_NAME,
          instanceId: deps.instanceId,
          scheduledDelayMs: deps.traceDelayMs,
        },
        deps.logger,
      )
    : undefined;
  const redis = metrics
    ? new RedisCommandTiming({ durations: metrics.redisCommands, errors: metrics.redisErrors })
    : undefined;
  redis?.start();
  const on = metrics !== undefined || tracing !== undefined;
  const observing = { metrics, tracer: tracing?.tracer ?? noTracer, clock: deps.clock };
  return {
    metrics,
    tracing,
    turns: on ? new TurnObserver(observing) : undefined,
    deliveries: on ? new DeliveryObserver(observing) : undefined,
    ingestion: on ? new IngestionObserver(observing) : undefined,
    stop: async () => {
      redis?.stop();
      await tracing?.stop();
    },
  };
}
