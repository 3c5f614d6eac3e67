import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as NodeServer, type ServerResponse } from 'node:http';
import type { Request, Response, Server } from 'restify';
import { AuthenticationError, NotFoundError } from '../errors.ts';
import { errorResponse } from '../http/error-response.ts';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';

/** The path metrics are served at, on either port. */
export const METRICS_PATH = '/metrics';

/** The 401 detail of a scrape without the right bearer token. */
export const METRICS_TOKEN_DETAIL = 'Missing or invalid metrics token.';

/**
 * Who may scrape: anyone who reaches the port when no token is set (only the separate port, bound
 * to loopback by default, is ever served without one), else `Authorization: Bearer <token>`,
 * compared in constant time.
 */
export class MetricsAccess {
  private readonly digest: Buffer | undefined;

  constructor(token: string | undefined) {
    this.digest = token === undefined ? undefined : sha256(token);
  }

  /** Throws an AuthenticationError unless the request may scrape. */
  check(authorization: string | undefined): void {
    if (!this.digest) return;
    const match = /^Bearer (\S+)$/.exec(authorization ?? '');
    if (!match || !timingSafeEqual(sha256(match[1]!), this.digest)) {
      throw new AuthenticationError(METRICS_TOKEN_DETAIL);
    }
  }
}

/** `GET /metrics` on the gateway's public server, behind the bearer token (which must be set). */
export function registerMetricsRoute(server: Server, metrics: GatewayMetrics, access: MetricsAccess): void {
  server.get(METRICS_PATH, async (req: Request, res: Response) => {
    res.setHeader('WWW-Authenticate', 'Bearer');
    access.check(req.headers.authorization);
    const { contentType, body } = await metrics.exposition();
    res.sendRaw(200, body, { 'Content-Type': contentType });
  });
}

/** The metrics port could not be taken. */
export class MetricsListenError extends Error {
  override name = 'MetricsListenError';
}

/**
 * The separate metrics port: a bare HTTP server that answers `GET /metrics` (and `{"detail"}` errors
 * for anything else), so scrapes never pass the public server's routes, limits and logs.
 */
export class MetricsServer {
  private readonly server: NodeServer;
  private readonly metrics: GatewayMetrics;
  private readonly access: MetricsAccess;
  private readonly logger: Logger;

  constructor(metrics: GatewayMetrics, access: MetricsAccess, logger: Logger) {
    this.metrics = metrics;
    this.access = access;
    this.logger = logger;
    this.server = createServer((req, res) => {
      this.answer(req, res).catch((error: unknown) => this.refuse(res, error));
    });
  }

  /** Listens on `host:port`; resolves with the bound port (0 asks the system for a free one). */
  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const failed = (error: NodeJS.ErrnoException) =>
        reject(new MetricsListenError(`metrics cannot listen on ${host}:${port} (${error.code}): set METRICS_PORT`));
      this.server.once('error', failed);
      this.server.listen(port, host, () => {
        this.server.off('error', failed);
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  async close(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://metrics').pathname;
    if (path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) throw new NotFoundError('Not Found');
    this.access.check(req.headers.authorization);
    const { contentType, body } = await this.metrics.exposition();
    res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  private refuse(res: ServerResponse, error: unknown): void {
    const response = errorResponse(error);
    if (response.internal) this.logger.error({ err: error }, 'metrics scrape failed');
    const body = JSON.stringify({ detail: response.detail });
    const headers: Record<string, string | number> = {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
    };
    if (response.status === 401) headers['WWW-Authenticate'] = 'Bearer';
    res.writeHead(response.status, headers);
    res.end(body);
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
