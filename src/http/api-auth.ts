import type { Next, Request, Response } from 'restify';
import type { GateDecision, RequestGate } from '../admission/request-gate.ts';
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
    gate.admit(bearerToken(req)).then((decision) => {
      if (!passedGate(res, decision)) return next(false);
      (req as AuthenticatedRequest).userId = decision.userId;
      return next();
    }, next);
  };
}

/**
 * Whether the gate admitted the request: an admitted request gets its X-RateLimit headers, a refused
 * one its answer (401, or 429 with the headers).
 */
export function passedGate(
  res: Response,
  decision: GateDecision,
): decision is Extract<GateDecision, { kind: 'admitted' }> {
  if (decision.kind === 'unauthorized') {
    answerUnauthorized(res);
    return false;
  }
  res.setHeader('X-RateLimit-Limit', String(decision.limit));
  res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
  if (decision.kind === 'limited') {
    sendDetail(res, 429, RATE_LIMITED_DETAIL(decision.limit));
    return false;
  }
  return true;
}

/** The one 401 of the public API, whatever was wrong with the key. */
export function answerUnauthorized(res: Response): void {
  res.setHeader('WWW-Authenticate', 'Bearer');
  sendDetail(res, 401, UNAUTHORIZED_DETAIL);
}

/** The key of `Authorization: Bearer <key>`, if the header has that form. */
export function bearerToken(req: Request): string | undefined {
  const header = req.header('authorization');
  const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
  return match ? match[1] : undefined;
}
