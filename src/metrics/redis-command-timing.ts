import diagnosticsChannel from 'node:diagnostics_channel';
import type { Counter, Histogram } from 'prom-client';

/** What node-redis publishes on its tracing channels (the fields read here). */
interface CommandContext {
  command?: string;
  error?: unknown;
  /** Set on a command sent inside a pipeline (the batch is timed as one) and on the batch itself. */
  batchMode?: string;
}

// node-redis (5.x and later) traces every command it sends, and every MULTI or pipeline, through
// these diagnostics_channel TracingChannels; with no subscriber it does not even build the context.
const COMMAND_CHANNEL = 'node-redis:command';
const BATCH_CHANNEL = 'node-redis:batch';

/**
 * Times the process's Redis commands from node-redis's tracing channels: from the command being
 * queued to its reply (or failure), which is the round trip the caller waits for. A batch (MULTI
 * or pipeline) is one observation named by its mode; the commands inside a pipeline, which node-redis
 * traces too, are not timed again. Reads answered by the client-side cache send nothing and are not
 * timed. It sees every node-redis client of the process, which in a gateway are the gateway's own.
 */
export class RedisCommandTiming {
  private readonly started = new WeakMap<object, number>();
  private readonly durations: Histogram<'command'>;
  private readonly errors: Counter<'command'>;
  private readonly command: diagnosticsChannel.TracingChannel<unknown, object>;
  private readonly batch: diagnosticsChannel.TracingChannel<unknown, object>;

  private readonly handlers = {
    start: (context: object) => {
      if (!(context as CommandContext).batchMode) this.started.set(context, performance.now());
    },
    end: ignore,
    asyncStart: ignore,
    asyncEnd: (context: object) => this.ended(context, (context as CommandContext).command),
    error: (context: object) => this.failed(context, (context as CommandContext).command),
  };

  private readonly batchHandlers = {
    start: (context: object) => void this.started.set(context, performance.now()),
    end: ignore,
    asyncStart: ignore,
    asyncEnd: (context: object) => this.ended(context, (context as CommandContext).batchMode),
    error: (context: object) => this.failed(context, (context as CommandContext).batchMode),
  };

  constructor(metrics: { durations: Histogram<'command'>; errors: Counter<'command'> }) {
    this.durations = metrics.durations;
    this.errors = metrics.errors;
    this.command = diagnosticsChannel.tracingChannel(COMMAND_CHANNEL);
    this.batch = diagnosticsChannel.tracingChannel(BATCH_CHANNEL);
  }

  start(): void {
    this.command.subscribe(this.handlers);
    this.batch.subscribe(this.batchHandlers);
  }

  stop(): void {
    this.command.unsubscribe(this.handlers);
    this.batch.unsubscribe(this.batchHandlers);
  }

  private ended(context: object, name: string | undefined): void {
    const at = this.started.get(context);
    if (at === undefined) return;
    this.started.delete(context);
    this.durations.observe({ command: commandLabel(name) }, (performance.now() - at) / 1000);
  }

  private failed(context: object, name: string | undefined): void {
    if (!this.started.has(context) || isNoScript((context as CommandContext).error)) return;
    this.errors.inc({ command: commandLabel(name) });
  }
}

/**
 * NOSCRIPT is the protocol's way of asking for a script the server has not cached yet: node-redis
 * sends it again as EVAL at once, so it is no failure of the caller's command.
 */
function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** For the tracing events nothing here needs (the typings ask for a handler of each). */
function ignore(): void {}

/** A command's name as a label: node-redis sends it upper-cased; anything odd is `OTHER`. */
function commandLabel(name: string | undefined): string {
  return name && /^[A-Z][A-Z._|-]{0,31}$/.test(name) ? name : 'OTHER';
}
