import type { Test as Tap } from 'tap';
import { ValidationError } from '../../src/errors.ts';
import { ReconnectError } from '../../src/sources/connectors/connector-errors.ts';
import {
  createConnectorHttp,
  DEFAULT_BASE_URLS,
  type ConnectorBaseUrls,
} from '../../src/sources/connectors/connector-http.ts';
import type { ConnectorAuth, ConnectorContext } from '../../src/sources/connectors/connector.ts';

/**
 * Credentials for driving a connector directly in a test: `tokens[0]` is the current access token;
 * each `refresh` moves to the next one (and counts), and past the last it throws `ReconnectError`
 * with `reconnect` as the message, as a revoked grant does.
 */
export class TestAuth implements ConnectorAuth {
  readonly secret: Record<string, string>;
  readonly baseUrl: string;
  refreshes = 0;
  private readonly tokens: string[];
  private readonly reconnect: string;

  constructor(options: { secret?: Record<string, string>; baseUrl?: string; tokens?: string[]; reconnect?: string }) {
    this.secret = options.secret ?? {};
    this.baseUrl = options.baseUrl ?? '';
    this.tokens = options.tokens ?? [options.secret?.token ?? ''];
    this.reconnect = options.reconnect ?? 'Reconnect.';
  }

  async accessToken(): Promise<string> {
    return this.tokens[this.refreshes]!;
  }

  async refresh(rejected: string): Promise<string> {
    if (rejected !== this.tokens[this.refreshes]) return this.tokens[this.refreshes]!;
    if (this.refreshes + 1 >= this.tokens.length) throw new ReconnectError(this.reconnect);
    this.refreshes += 1;
    return this.tokens[this.refreshes]!;
  }
}

/**
 * A connector context for loopback fakes: the SSRF guard lifted (fakes listen on 127.0.0.1), base
 * URLs overridden as given, small limits where a test sets them, and Retry-After waits recorded
 * (and slept for real, at most the `maxRetryAfterMs`).
 */
export function testConnectorContext(
  options: {
    auth?: ConnectorAuth;
    baseUrls?: Partial<ConnectorBaseUrls>;
    maxDocumentBytes?: number;
    maxDocuments?: number;
    allowPrivate?: boolean;
    waits?: number[];
  } = {},
): ConnectorContext {
  const limits = {
    maxDocumentBytes: options.maxDocumentBytes ?? 20 * 1024 * 1024,
    maxDocuments: options.maxDocuments ?? 500,
  };
  const http = createConnectorHttp({
    baseUrls: { ...DEFAULT_BASE_URLS, ...options.baseUrls },
    allowPrivate: options.allowPrivate ?? true,
    timeoutMs: 10_000,
    maxBytes: limits.maxDocumentBytes,
    retries: 3,
    maxRetryAfterMs: 5_000,
    sleep: async (ms) => {
      options.waits?.push(ms);
      await new Promise((resolve) => setTimeout(resolve, ms));
    },
  });
  return { auth: options.auth, http, limits };
}

/** A context's options in a connector test: its tokens (default: one newly issued) and small limits. */
export interface TestContextOptions {
  tokens?: string[];
  maxDocumentBytes?: number;
  maxDocuments?: number;
  waits?: number[];
}

/**
 * What every connector test file sets up against its fake: `grant` issues a token (kept in `issued`),
 * `context` drives the connector with `TestAuth` on those tokens (a revoked grant says `reconnect`),
 * and `failure` keeps each error message in `messages`, so a file can check that none holds a token.
 */
export function connectorTestBed(options: {
  issue: () => string;
  reconnect: string;
  baseUrls: Partial<ConnectorBaseUrls>;
}) {
  const issued: string[] = [];
  const messages: string[] = [];
  const grant = (): string => {
    const token = options.issue();
    issued.push(token);
    return token;
  };
  const context = (contextOptions: TestContextOptions = {}): ConnectorContext & { auth: TestAuth } => {
    const { tokens, ...limits } = contextOptions;
    const auth = new TestAuth({ tokens: tokens ?? [grant()], reconnect: options.reconnect });
    return { ...testConnectorContext({ ...limits, auth, baseUrls: options.baseUrls }), auth };
  };
  const failure = (promise: Promise<unknown>): Promise<Error> => failureOf(promise, messages);
  return { issued, messages, grant, context, failure };
}

/** What `action` throws (the refusal a test expects), or what it returns when it throws nothing. */
export function thrown(action: () => unknown): unknown {
  try {
    return action();
  } catch (caught) {
    return caught;
  }
}

/**
 * The error `promise` rejects with (an Error saying so when it resolves), its message kept in
 * `messages` so a test can check that no token appears in any message it saw.
 */
export async function failureOf(promise: Promise<unknown>, messages: string[]): Promise<Error> {
  const caught = await promise.then(
    () => new Error('expected a failure'),
    (error: unknown) => error as Error,
  );
  messages.push(caught.message);
  return caught;
}

/** Checks that `parse` refuses each reference with a ValidationError whose detail is `detail`. */
export function assertRefused(
  t: Tap,
  parse: (reference: string) => string,
  references: readonly string[],
  detail: string,
): void {
  for (const reference of references) {
    const error = thrown(() => parse(reference));
    t.ok(error instanceof ValidationError, reference);
    t.equal((error as ValidationError).detail, detail, reference);
  }
}
