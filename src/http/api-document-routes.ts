import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request, Response, Server } from 'restify';
import { sendDetail } from './http-server.ts';

/** Where the documents live in the repository (and in the image): docs/. */
const DOCS = path.resolve(import.meta.dirname, '../../docs');

/** One served file: its bytes, their ETag and media type. */
interface Document {
  body: Buffer;
  etag: string;
  type: string;
}

function load(file: string, type: string): Document {
  const body = readFileSync(path.join(DOCS, file));
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`, type };
}

/**
 * The public API's OpenAPI document at `/api/v1/openapi.json`, and the webhook payloads' JSON Schemas
 * it references by relative URL (`webhook-schemas/<name>.json`) beside it, served exactly as kept in
 * docs/ (read once, at startup). Public: no key, no rate limit, nothing counted, whatever
 * `Authorization` says; cached for five minutes and revalidated by ETag, readable from any origin (a
 * browser-based API tool can load it).
 */
export function registerApiDocument(server: Server): void {
  const document = load('openapi.json', 'application/json');
  const schemas = new Map(
    readdirSync(path.join(DOCS, 'webhook-schemas'))
      .filter((name) => name.endsWith('.json'))
      .map((name) => [name, load(path.join('webhook-schemas', name), 'application/schema+json')]),
  );
  server.get('/api/v1/openapi.json', async (req: Request, res: Response) => serve(req, res, document));
  server.get('/api/v1/webhook-schemas/:name', async (req: Request, res: Response) => {
    const schema = schemas.get(String((req.params as Record<string, unknown>).name));
    if (!schema) return sendDetail(res, 404, 'Not Found');
    serve(req, res, schema);
  });
}

function serve(req: Request, res: Response, document: Document): void {
  res.setHeader('Cache-Control', 'public, max-age=300');
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('ETag', document.etag);
  if (req.headers['if-none-match'] === document.etag) {
    res.writeHead(304);
    res.end();
    return;
  }
  res.writeHead(200, {
    'Content-Type': document.type,
    'Content-Length': document.body.length,
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(document.body);
}
