// A website on 127.0.0.1 for crawler tests: routes by path, every request logged.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the site answers for one path. */
export interface Route {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Answer only once this settles (a page held back until the test lets it go). */
  heldUntil?: Promise<void>;
}

/** One request the site received. */
export interface LoggedRequest {
  path: string;
  userAgent: string;
}

/** An HTML page with a title and a body. */
export function html(title: string, body: string): Route {
  return {
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`,
  };
}

/** A redirect to `location`. */
export function redirect(location: string, status = 302): Route {
  return { status, headers: { location } };
}

/** The site: set `routes` by path (query included), start, read `requests`, stop. */
export class FakeSite {
  readonly routes = new Map<string, Route | ((request: IncomingMessage) => Route)>();
  readonly requests: LoggedRequest[] = [];
  private server: Server | null = null;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The paths requested, in order. */
  get paths(): string[] {
    return this.requests.map((request) => request.path);
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => void this.answer(request, response));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = request.url ?? '/';
    this.requests.push({ path, userAgent: request.headers['user-agent'] ?? '' });
    const entry = this.routes.get(path);
    const route = typeof entry === 'function' ? entry(request) : (entry ?? { status: 404, body: 'not found' });
    if (route.delayMs) await new Promise((resolve) => setTimeout(resolve, route.delayMs));
    await route.heldUntil;
    if (response.destroyed) return;
    response.writeHead(route.status ?? 200, route.headers ?? {});
    response.end(route.body ?? '');
  }
}
