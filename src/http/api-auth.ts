import type { Next, Request, Response } from 'restify';
import type { RequestGate } from '../admission/request-gate.ts';
import { sendDetail } from './http-server.ts';

/** The account a request was admitted for. */
export interface AuthenticatedRequest extends Request {
  userId: string;
}

export const UNAUTHORIZED_DETAIL = 'Unauthorized';
export const RATE_LIMITED_DETAIL = (limit: number) => `API rate limit exceeded. Max ${limit} requests per minute.`;

/**
 * Authenticates `Authorization: Bearer <key>` and applies the per-key rate limit. Every failure to
 * authenticate gets the same 401 (same body, same headers) whatever the reason, and counts toward
 * nothing. Admitted and rate-limited responses carry X-RateLimit-Limit / X-RateLimit-Remaining.
 */
export function apiAuth(gate: RequestGate) {
  // Callback style: only next(false) ends a restify chain without an error.
  return function authenticate(req: Request, res: Response, next: Next) {
    gate.admit(bearerToken(req.header('authorization'))).then((decision) => {
      if (decision.kind === 'unauthorized') {
        res.setHeader('WWW-Authenticate', 'Bearer');
        sendDetail(res, 401, UNAUTHORIZED_DETAIL);
        return next(false);
      }
      res.setHeader('X-RateLimit-Limit', String(decision.limit));
      res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
      if (decision.kind === 'limited') {
        sendDetail(res, 429, RATE_LIMITED_DETAIL(decision.limit));
        return next(false);
      }
      (req as AuthenticatedRequest).userId = decision.userId;
      return next();
    }, next);
  };
}

function bearerToken(header: string | undefined): string | undefined {
  const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
  return match ? match[1] : undefined;
}
