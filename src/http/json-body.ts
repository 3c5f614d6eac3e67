import getRawBody from 'raw-body';
import type { Request, Response } from 'restify';
import { TooLargeError, UnsupportedEncodingError, ValidationError } from '../errors.ts';
import { MAX_BODY_BYTES } from './http-server.ts';
import { parseJsonObject } from './json-object.ts';

/** A request whose body was read and parsed as a JSON object. */
export interface JsonRequest extends Request {
  body: Record<string, unknown>;
}

/**
 * Reads the body (at most MAX_BODY_BYTES, refused early from Content-Length or while streaming) and
 * parses it as a JSON object whatever the Content-Type, since `curl -d` sends form types. Placed
 * after authentication in a route's chain, so an unauthenticated body is never read.
 */
export function jsonBody() {
  return async function readJsonBody(req: Request, res: Response) {
    (req as JsonRequest).body = await readJsonObject(req, res);
  };
}

/** Reads and parses a request's body as jsonBody() does, for a route that must read it in its handler. */
export async function readJsonObject(req: Request, res: Response): Promise<Record<string, unknown>> {
  const text = await readBody(req, res, { limit: MAX_BODY_BYTES, tooLarge: 'Request body is too large.' }, 'utf-8');
  return parseJsonObject(text, {
    notJson: 'Request body is not valid JSON.',
    notObject: 'Request body must be a JSON object.',
  });
}

/** How much of a body is read, and what a larger one is told. */
interface BodyLimit {
  limit: number;
  tooLarge: string;
}

/**
 * Reads a whole request body up to `limit.limit` bytes: a larger one is refused with 413 (from
 * Content-Length, or while streaming) and its connection closed, a compressed one with 415.
 */
export function readBody(req: Request, res: Response, limit: BodyLimit, encoding: 'utf-8'): Promise<string>;
export function readBody(req: Request, res: Response, limit: BodyLimit): Promise<Buffer>;
export async function readBody(
  req: Request,
  res: Response,
  limit: BodyLimit,
  encoding?: 'utf-8',
): Promise<string | Buffer> {
  const contentEncoding = req.headers['content-encoding'];
  if (contentEncoding !== undefined && contentEncoding !== 'identity') {
    throw new UnsupportedEncodingError('Content-Encoding is not supported.');
  }
  try {
    const length = req.headers['content-length'];
    return encoding
      ? await getRawBody(req, { limit: limit.limit, length, encoding })
      : await getRawBody(req, { limit: limit.limit, length });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') {
      // The rest of the body is never read: close the connection after answering.
      res.setHeader('Connection', 'close');
      throw new TooLargeError(limit.tooLarge);
    }
    throw new ValidationError('Request body could not be read.', { cause: error });
  }
}
