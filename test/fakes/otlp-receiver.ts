import { createServer, type Server } from 'node:http';

/** An OTLP attribute value as the JSON encoding writes it. */
type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };

/** A span as received: ids in hex, attributes decoded to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** 2 is ERROR. */
  status: { code?: number; message?: string };
  startNanos: bigint;
  /** The resource's attributes (service.name, …). */
  resource: Record<string, string | number | boolean>;
}

/** A span and the spans under it. */
export interface SpanTree {
  name: string;
  children: SpanTree[];
}

/**
 * A loopback OTLP/HTTP collector: accepts `POST /v1/traces` with the JSON encoding, as a real
 * collector does, and keeps every span it decodes. Requests it cannot decode are answered 400 and
 * kept in `rejected`.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly rejected: string[] = [];
  readonly contentTypes: string[] = [];
  private readonly server: Server;
  url = '';

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        this.contentTypes.push(String(req.headers['content-type']));
        try {
          if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`${req.method} ${req.url}`);
          this.decode(JSON.parse(body));
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
        } catch (error) {
          this.rejected.push(String(error));
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end('{}');
        }
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A span's tree: its name and its children's trees, in the order they started. */
  tree(root: ReceivedSpan): SpanTree {
    const children = this.spans
      .filter((span) => span.traceId === root.traceId && span.parentSpanId === root.spanId)
      .sort((a, b) => (a.startNanos < b.startNanos ? -1 : a.startNanos > b.startNanos ? 1 : 0));
    return { name: root.name, children: children.map((child) => this.tree(child)) };
  }

  /** Root spans (no parent) named `name`. */
  roots(name: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.name === name && !span.parentSpanId);
  }

  /** Every span of a trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  private decode(request: any): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const resource = attributes(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributes(span.attributes),
            status: span.status ?? {},
            startNanos: BigInt(span.startTimeUnixNano),
            resource,
          });
        }
      }
    }
  }
}

function attributes(list: Array<{ key: string; value: AnyValue }> | undefined) {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}
