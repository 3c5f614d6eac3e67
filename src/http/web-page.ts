import { readFile } from 'node:fs/promises';
import type { Request, Response, Server } from 'restify';
import type { WebBundles } from './web-bundle.ts';

/** A Content-Security-Policy header value from its directives. */
export function contentSecurityPolicy(directives: string[]): string {
  return directives.join('; ');
}

/**
 * Serves a static file of web/ at `path`, read once, with a policy (the HTML pages' CSP) and the
 * headers every page of the gateway carries.
 */
export function serveWebFile(
  server: Server,
  path: string,
  file: URL,
  headers: { contentType: string; csp?: string },
): void {
  let content: Promise<Buffer> | undefined;
  server.get(path, async (_req: Request, res: Response) => {
    content ??= readFile(file);
    const body = await content;
    res.writeHead(200, {
      'Content-Type': headers.contentType,
      'Content-Length': body.length,
      ...(headers.csp ? { 'Content-Security-Policy': headers.csp } : {}),
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    });
    res.end(body);
  });
}

/**
 * Serves the esbuild bundle of `entry` (relative to web/) at `path`, revalidated by ETag; `headers`
 * (caching, CORS) go on every answer, 304s included.
 */
export function serveBundle(
  server: Server,
  path: string,
  entry: string,
  bundles: WebBundles,
  headers: Record<string, string> = { 'Cache-Control': 'no-cache' },
): void {
  server.get(path, async (req: Request, res: Response) => {
    const bundle = await bundles.get(entry);
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.setHeader('ETag', bundle.etag);
    if (req.headers['if-none-match'] === bundle.etag) {
      res.writeHead(304);
      res.end();
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'application/javascript; charset=utf-8',
      'Content-Length': bundle.body.length,
      'X-Content-Type-Options': 'nosniff',
    });
    res.end(bundle.body);
  });
}
