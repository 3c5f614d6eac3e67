import { SpanKind, type Span, type Tracer } from '@opentelemetry/api';
import type { AttemptOutcome, ClaimedDelivery } from '../webhooks/delivery.ts';
import type { AttemptResult } from '../webhooks/webhook-sender.ts';
import type { GatewayMetrics, WebhookOutcome } from './gateway-metrics.ts';
import { failSpan, startSpan } from './traced.ts';

/** The store's verdict on a recorded attempt, as the metric names it. */
const OUTCOMES: Record<AttemptOutcome, WebhookOutcome> = {
  delivered: 'delivered',
  retry: 'failed_attempt',
  failed: 'permanently_failed',
  stale: 'stale',
};

/** Observes the webhook dispatcher's attempts: metrics when they are on, one trace per attempt. */
export class DeliveryObserver {
  private readonly metrics: GatewayMetrics | undefined;
  private readonly tracer: Tracer;

  constructor(deps: { metrics: GatewayMetrics | undefined; tracer: Tracer }) {
    this.metrics = deps.metrics;
    this.tracer = deps.tracer;
  }

  /** An attempt of `delivery` to the receiver at `url` starts. */
  attempt(delivery: ClaimedDelivery, url: URL): AttemptObservation {
    return new AttemptObservation(this.metrics, this.tracer, delivery, url);
  }

  /** A delivery failed for good without an attempt: its webhook was deleted or deactivated. */
  gaveUp(delivery: ClaimedDelivery, reason: string): void {
    this.metrics?.webhookAttempts.inc({ outcome: 'permanently_failed' });
    const span = startSpan(this.tracer, 'webhook delivery', undefined, { attributes: attributesOf(delivery) });
    span.setAttribute('switchboard.webhook.outcome', 'permanently_failed');
    failSpan(span, new Error(reason));
    span.end();
  }
}

/**
 * One attempt as its own trace: `webhook delivery` (from the claim to the attempt being recorded),
 * with the receiver's `POST` and the recording (`webhook.record`) under it. Attributes name the event,
 * the delivery, the attempt and the receiver's host and port; never the body, path or query.
 */
export class AttemptObservation {
  private readonly metrics: GatewayMetrics | undefined;
  private readonly tracer: Tracer;
  private readonly root: Span;
  private readonly post: Span;
  private record: Span | undefined;
  private result: AttemptResult | undefined;

  constructor(metrics: GatewayMetrics | undefined, tracer: Tracer, delivery: ClaimedDelivery, url: URL) {
    this.metrics = metrics;
    this.tracer = tracer;
    this.root = startSpan(tracer, 'webhook delivery', undefined, { attributes: attributesOf(delivery) });
    this.post = startSpan(tracer, 'POST', this.root, {
      kind: SpanKind.CLIENT,
      // The receiver's host and port only: a webhook URL's path or query may carry a credential.
      attributes: {
        'http.request.method': 'POST',
        'server.address': url.hostname,
        'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      },
    });
  }

  /** The receiver answered, or the attempt failed on the way. */
  sent(result: AttemptResult): void {
    this.result = result;
    if (result.statusCode !== null) this.post.setAttribute('http.response.status_code', result.statusCode);
    const ok = !result.error && result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    if (!ok) failSpan(this.post, new Error(failure(result)));
    this.post.end();
  }

  /** The attempt is being recorded (with the others of its round). */
  recording(): void {
    this.record = startSpan(this.tracer, 'webhook.record', this.root);
  }

  /** The attempt was recorded with the store's verdict; `error` when recording it failed. */
  recorded(outcome: AttemptOutcome | undefined, error?: unknown): void {
    if (outcome !== undefined) {
      const label = OUTCOMES[outcome];
      this.metrics?.webhookAttempts.inc({ outcome: label });
      if (this.result) this.metrics?.webhookDuration.observe({ outcome: label }, this.result.durationMs / 1000);
      this.root.setAttribute('switchboard.webhook.outcome', label);
      if (label !== 'delivered') failSpan(this.root, new Error(failure(this.result)));
    }
    if (error !== undefined) {
      if (this.record) failSpan(this.record, error);
      failSpan(this.root, error);
    }
    this.record?.end();
    this.root.end();
  }
}

/** Why an attempt did not deliver, in the delivery log's words. */
function failure(result: AttemptResult | undefined): string {
  if (!result) return 'webhook attempt failed';
  return result.error ?? `receiver answered ${result.statusCode}`;
}

function attributesOf(delivery: ClaimedDelivery) {
  return {
    'switchboard.chatbot_id': delivery.chatbotId,
    'switchboard.webhook.event': delivery.event,
    'switchboard.webhook.delivery_id': delivery.id,
    'switchboard.webhook.attempt': delivery.attempt,
  };
}
