import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';

/** How a span is started: its kind and first attributes. */
export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
}

/**
 * Starts a span under `parent` (a span, or none for the root of a new trace). Parents are given
 * explicitly, never read from a context manager: a turn crosses actor mailboxes and timers, where no
 * ambient context would follow it.
 */
export function startSpan(tracer: Tracer, name: string, parent: Span | undefined, options: SpanOptions = {}): Span {
  const context = parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
  return tracer.startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, context);
}

/** Marks a span failed with the error (its class and message only; no stack of request data). */
export function failSpan(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.setAttribute('error.type', error instanceof Error ? error.name : 'Error');
}

/**
 * Runs `work` inside a child span of `parent`: the span ends when the work settles, failed with its
 * error if it rejects (the rejection goes on to the caller), and `describe` adds attributes of a result.
 */
export async function traced<T>(
  tracer: Tracer,
  name: string,
  parent: Span | undefined,
  work: () => Promise<T>,
  options: SpanOptions & { describe?: (result: T) => Attributes } = {},
): Promise<T> {
  const span = startSpan(tracer, name, parent, options);
  try {
    const result = await work();
    if (options.describe) span.setAttributes(options.describe(result));
    return result;
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}
