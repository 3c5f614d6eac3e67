import restify, { type Request, type Response, type Server } from 'restify';
import type { Logger } from '../logger.ts';
import { isRedisUnavailable } from '../redis/redis-client.ts';
import { errorResponse, type ErrorResponse } from './error-response.ts';

/** Largest request body accepted anywhere (chat messages are at most 4,000 characters). */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The gateway's restify server: request ids, one access-log line per request (path only: never
 * headers or query strings, which may carry credentials), and every error shaped as `{"detail"}`.
 */
export function createHttpServer(logger: Logger): Server {
  const server = restify.createServer({
    name: 'switchboard',
    handleUncaughtExceptions: false,
    ignoreTrailingSlash: true,
  });
  server.pre(async (req: Request, res: Response) => {
    res.setHeader('X-Request-Id', req.id());
  });
  server.on('restifyError', (req: Request, _res: Response, error: Error, callback: () => void) => {
    const response = outageResponse(req, error) ?? errorResponse(error);
    if (response.internal) logger.error({ err: error, req_id: req.id() }, 'request failed');
    Object.assign(error, { statusCode: response.status, toJSON: () => ({ detail: response.detail }) });
    callback();
  });
  server.on('after', (req: Request, res: Response) => {
    const path = (req.url ?? '').split('?')[0];
    const ms = Math.round((Date.now() - req.time()) * 1000) / 1000;
    logger.info({ req_id: req.id(), method: req.method, path, status: res.statusCode, ms }, 'request');
  });
  return server;
}

/**
 * Redis unreachable: 503 with a reason, except on the public API, whose statuses SPEC fixes (an
 * outage there is its "internal fault", a 500).
 */
function outageResponse(req: Request, error: Error): ErrorResponse | undefined {
  if (!isRedisUnavailable(error) || (req.url ?? '').startsWith('/api/')) return undefined;
  return { status: 503, detail: 'Service unavailable: Redis is not reachable.', internal: false };
}

/** Sends `{"detail"}` with a status, for refusals decided outside the error path. */
export function sendDetail(res: Response, status: number, detail: string): void {
  res.send(status, { detail });
}

/** The gateway could not take its address: in use, or not allowed. */
export class ListenError extends Error {
  override name = 'ListenError';
}

/** Starts listening; resolves with the bound port (0 asks the system for a free one). */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    // On restify's server, which re-emits its HTTP server's errors: unheard there, one would crash
    // the process before the caller could stop what it started (the managed redis-server).
    const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, port, host));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

function listenError(error: NodeJS.ErrnoException, port: number, host: string): Error {
  const address = `${host}:${port}`;
  if (error.code === 'EADDRINUSE') {
    return new ListenError(`${address} is in use by another process: set PORT (or HOST) to a free address`);
  }
  if (error.code === 'EACCES') return new ListenError(`not allowed to listen on ${address}: set PORT above 1023`);
  if (error.code === 'EADDRNOTAVAIL') return new ListenError(`${host} is not an address of this machine: set HOST`);
  return error;
}

/**
 * Stops accepting connections, lets in-flight requests finish (up to `graceMs`), then closes what
 * remains.
 */
export async function closeGracefully(server: Server, graceMs: number): Promise<void> {
  if (!server.server.listening) return;
  const closed = new Promise<void>((resolve) => server.server.close(() => resolve()));
  server.server.closeIdleConnections();
  const timer = setTimeout(() => server.server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(timer);
}

/** The gateway's address as a link: a wildcard host (every interface) is reached on this machine as localhost. */
export function listenUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}
