import type { Request, Response, Server } from 'restify';
import type { InviteBody, SessionInfo, SetupBody, SetupState, SignedOut, SignInBody } from '../contract/account.ts';
import type { SignedIn } from '../dashboard/owner-auth.ts';
import type { Account } from '../accounts/account.ts';
import { DASHBOARD_API, ownerOf, type DashboardApi } from './dashboard-api.ts';
import { bodyOf, optionalString } from './dashboard-body.ts';
import { clearSessionCookie, sameOriginOnly, setSessionCookie, type DashboardRequest } from './dashboard-session.ts';
import { jsonBody } from './json-body.ts';

/**
 * Sign-in and sessions: `POST /session` (email and password), `GET /session` (who is signed in, and
 * the CSRF token), `DELETE /session` (sign out), `DELETE /sessions` (sign out everywhere) and
 * `POST /invite` (set the password an invitation link asked for, and sign in); on first run,
 * `GET /setup` (is there no owner yet?) and `POST /setup` (create the first owner with the setup
 * token the gateway printed, and sign in).
 */
export function registerDashboardAuthRoutes(server: Server, api: DashboardApi): void {
  const { services, auth, policy, trustedProxies } = api;
  const sessionBody = (account: Account, csrfToken: string): SessionInfo => ({
    user: account,
    csrf_token: csrfToken,
    public_url: policy.publicUrl ?? null,
  });
  const signedIn = (res: Response, { account, session }: SignedIn) => {
    setSessionCookie(res, session.token, policy);
    res.setHeader('Cache-Control', 'no-store');
    res.send(200, sessionBody(account, session.csrfToken) satisfies SessionInfo);
  };

  server.post(`${DASHBOARD_API}/session`, sameOriginOnly(policy), jsonBody(), async (req: Request, res: Response) => {
    const body = bodyOf<SignInBody>(req);
    const address = trustedProxies.clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for']);
    const result = await services.ownerAuth.signIn(body.email, body.password, address);
    signedIn(res, result);
  });

  server.get(`${DASHBOARD_API}/session`, auth, async (req: Request, res: Response) => {
    const account = await services.accounts.get(ownerOf(req));
    res.send(200, sessionBody(account, (req as DashboardRequest).session.csrfToken) satisfies SessionInfo);
  });

  server.del(`${DASHBOARD_API}/session`, auth, async (req: Request, res: Response) => {
    await services.sessions.end((req as DashboardRequest).session);
    clearSessionCookie(res, policy);
    res.send(200, { signed_out: true } satisfies SignedOut);
  });

  server.del(`${DASHBOARD_API}/sessions`, auth, async (req: Request, res: Response) => {
    await services.ownerAuth.signOutEverywhere(ownerOf(req));
    clearSessionCookie(res, policy);
    res.send(200, { signed_out: true } satisfies SignedOut);
  });

  server.get(`${DASHBOARD_API}/setup`, async (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.send(200, { setup_needed: await services.ownerAuth.setupNeeded() } satisfies SetupState);
  });

  server.post(`${DASHBOARD_API}/setup`, sameOriginOnly(policy), jsonBody(), async (req: Request, res: Response) => {
    const body = bodyOf<SetupBody>(req);
    signedIn(res, await services.ownerAuth.createFirstOwner(body.token, body.email, body.password));
  });

  server.post(`${DASHBOARD_API}/invite`, sameOriginOnly(policy), jsonBody(), async (req: Request, res: Response) => {
    const body = bodyOf<InviteBody>(req);
    signedIn(res, await services.ownerAuth.acceptInvite(optionalString(body, 'token'), body.password));
  });
}
