import { timingSafeEqual } from 'node:crypto';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { Request, Response } from 'restify';
import { AuthenticationError, ForbiddenError } from '../errors.ts';
import type { DashboardSession, SessionStore } from '../store/session-store.ts';

/** The dashboard's session cookie; its path keeps it away from every other route of the gateway. */
const SESSION_COOKIE = 'sb_session';
const SESSION_COOKIE_PATH = '/dashboard';
/** The header the web app sends its session's CSRF token in, on every state-changing request. */
const CSRF_HEADER = 'x-csrf-token';

const NOT_SIGNED_IN = 'Not signed in.';
const CROSS_SITE = 'Cross-site request refused.';
const BAD_CSRF = 'CSRF token missing or invalid.';

/** A request that carries a valid dashboard session. */
export interface DashboardRequest extends Request {
  session: DashboardSession;
}

/** How the cookie is written and where requests may come from. */
export interface CookiePolicy {
  /** PUBLIC_URL: its origin is the only one allowed when set; `https:` makes the cookie Secure. */
  publicUrl: string | undefined;
  /** Seconds the browser keeps the cookie (the server ends sessions on its own schedule too). */
  maxAgeSeconds: number;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Requires a dashboard session cookie (401 otherwise), and on every state-changing request a
 * same-origin caller and the session's CSRF token in `X-CSRF-Token` (403 otherwise).
 */
export function dashboardAuth(sessions: SessionStore, policy: CookiePolicy) {
  return async function requireSession(req: Request) {
    const session = await sessions.authenticate(sessionCookie(req));
    if (!session) throw new AuthenticationError(NOT_SIGNED_IN);
    if (!SAFE_METHODS.has(req.method ?? 'GET')) {
      checkSameOrigin(req, policy);
      const presented = req.headers[CSRF_HEADER];
      if (typeof presented !== 'string' || !sameSecret(presented, session.csrfToken)) {
        throw new ForbiddenError(BAD_CSRF);
      }
    }
    (req as DashboardRequest).session = session;
  };
}

/** For the sign-in routes, which have no session yet: only same-origin browsers (or non-browsers). */
export function sameOriginOnly(policy: CookiePolicy) {
  return async function requireSameOrigin(req: Request) {
    checkSameOrigin(req, policy);
  };
}

/**
 * Browsers say where a request comes from (`Sec-Fetch-Site`, `Origin`); a request one of them marks
 * as cross-site is refused. Clients that send neither (curl, scripts) are not browsers riding on a
 * victim's cookie, and still need the CSRF token.
 */
function checkSameOrigin(req: Request, policy: CookiePolicy): void {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') throw new ForbiddenError(CROSS_SITE);
  const origin = req.headers.origin;
  if (origin === undefined) return;
  if (policy.publicUrl !== undefined) {
    if (origin !== new URL(policy.publicUrl).origin) throw new ForbiddenError(CROSS_SITE);
    return;
  }
  const host = URL.parse(origin)?.host;
  if (host === undefined || host !== req.headers.host) throw new ForbiddenError(CROSS_SITE);
}

/** The session cookie's value, when the request carries one. */
export function sessionCookie(req: Request): string | undefined {
  const header = req.headers.cookie;
  return header ? parseCookie(header)[SESSION_COOKIE] : undefined;
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Sets the session cookie: HttpOnly, SameSite=Lax, Secure when PUBLIC_URL is https. */
export function setSessionCookie(res: Response, token: string, policy: CookiePolicy): void {
  res.setHeader('Set-Cookie', cookieHeader(token, policy.maxAgeSeconds, policy));
}

/** Tells the browser to forget the session cookie. */
export function clearSessionCookie(res: Response, policy: CookiePolicy): void {
  res.setHeader('Set-Cookie', cookieHeader('', 0, policy));
}

function cookieHeader(value: string, maxAge: number, policy: CookiePolicy): string {
  return stringifySetCookie({
    name: SESSION_COOKIE,
    value,
    path: SESSION_COOKIE_PATH,
    maxAge,
    httpOnly: true,
    sameSite: 'lax',
    secure: policy.publicUrl?.startsWith('https:') === true,
  });
}
