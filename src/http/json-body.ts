import getRawBody from 'raw-body';
import type { Request, Response } from 'restify';
import { TooLargeError, UnsupportedEncodingError, ValidationError } from '../errors.ts';
import { MAX_BODY_BYTES } from './http-server.ts';

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
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      throw new UnsupportedEncodingError('Content-Encoding is not supported.');
    }
    let text: string;
    try {
      text = await getRawBody(req, { limit: MAX_BODY_BYTES, length: req.headers['content-length'], encoding: 'utf-8' });
    } catch (error) {
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large') {
        // The rest of the body is never read: close the connection after answering.
        res.setHeader('Connection', 'close');
        throw new TooLargeError('Request body is too large.');
      }
      throw new ValidationError('Request body could not be read.', { cause: error });
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ValidationError('Request body is not valid JSON.');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new ValidationError('Request body must be a JSON object.');
    }
    (req as JsonRequest).body = body as Record<string, unknown>;
  };
}
