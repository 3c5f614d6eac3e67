import type { Request, Response, Server } from 'restify';
import { isOAuthService, OAUTH_SERVICES } from '../connections/oauth-clients.ts';
import type { ConnectionOffer, DashboardConnection, NewConnectionBody } from '../contract/connection.ts';
import type { Deleted } from '../contract/deleted.ts';
import { DomainError, NotFoundError, ValidationError } from '../errors.ts';
import { SERVICE_LABELS } from '../sources/connectors/connector.ts';
import { dashboardConnectionView } from '../views.ts';
import { DASHBOARD_API, ownerOf, param, type DashboardApi } from './dashboard-api.ts';
import { bodyOf, optionalString, requiredString } from './dashboard-body.ts';
import { sessionCookie, type DashboardRequest } from './dashboard-session.ts';
import { jsonBody } from './json-body.ts';
import { errorResponse } from './error-response.ts';

/** Services an owner connects with a token pasted in the dashboard. */
const TOKEN_SERVICES = ['notion'] as const;

/**
 * Connections in the dashboard: the owner's list, connecting Notion with an integration token,
 * disconnecting, and the OAuth round trip for Google Drive, Dropbox and Microsoft:
 * `/dashboard/oauth/{service}/start` (the owner's session, or a state the CLI made) sends the browser
 * to the service; `/dashboard/oauth/{service}/callback` takes it back, checks state and session, and
 * stores the grant. The callback address is built from PUBLIC_URL.
 */
export function registerDashboardConnectionRoutes(server: Server, api: DashboardApi): void {
  const { services, auth } = api;
  const base = `${DASHBOARD_API}/connections`;

  server.get(base, auth, async (req: Request, res: Response) => {
    const connections = await services.connections.listForUser(ownerOf(req));
    res.send(200, connections.map(dashboardConnectionView) satisfies DashboardConnection[]);
  });

  // What the Connections page offers: each service, how it connects, and whether this server can.
  server.get(`${DASHBOARD_API}/connection-services`, auth, async (_req: Request, res: Response) => {
    res.send(200, [
      ...OAUTH_SERVICES.filter((s) => s !== 'microsoft').map((service): ConnectionOffer => ({
        service,
        label: SERVICE_LABELS[service],
        method: 'oauth',
        available: services.oauthClients[service] !== undefined,
      })),
      ...TOKEN_SERVICES.map((service): ConnectionOffer => ({
        service,
        label: SERVICE_LABELS[service],
        method: 'token',
        available: true,
      })),
    ] satisfies ConnectionOffer[]);
  });

  server.post(base, auth, jsonBody(), async (req: Request, res: Response) => {
    const body = bodyOf<NewConnectionBody>(req);
    const service = requiredString(body, 'service');
    if (!(TOKEN_SERVICES as readonly string[]).includes(service)) {
      throw new ValidationError('service must be notion (Google Drive and Dropbox connect with Connect).');
    }
    const token = requiredString(body, 'token').trim();
    if (token.length > 4096) throw new ValidationError('token must be at most 4096 characters.');
    const label = optionalString(body, 'label') ?? '';
    const connection = await services.connections.create(ownerOf(req), {
      service: 'notion',
      authKind: 'token',
      secret: { token },
      label: label.slice(0, 200),
    });
    res.send(201, dashboardConnectionView(connection) satisfies DashboardConnection);
  });

  server.del(`${base}/:connection_id`, auth, async (req: Request, res: Response) => {
    const connection = await services.connections.get(param(req, 'connection_id'));
    if (connection.user_id !== ownerOf(req)) throw new NotFoundError('Connection not found.');
    await services.connections.delete(connection.id);
    res.send(200, { id: connection.id, deleted: true } satisfies Deleted);
  });

  server.get('/dashboard/oauth/:service/start', async (req: Request, res: Response) => {
    await oauthPage(res, async () => {
      const service = param(req, 'service');
      services.oauth.client(service);
      const given = query(req).get('state');
      let location: string;
      if (given) {
        location = await services.oauth.authorizeUrl(given, callbackUrl(api, req, service), { service });
      } else {
        await auth(req, res);
        const session = (req as DashboardRequest).session;
        const state = await services.oauth.begin(service, session.userId, { kind: 'dashboard', sessionId: session.id });
        location = await services.oauth.authorizeUrl(state, callbackUrl(api, req, service));
      }
      res.redirect(302, location, () => {});
    });
  });

  server.get('/dashboard/oauth/:service/callback', async (req: Request, res: Response) => {
    await oauthPage(res, async () => {
      const service = param(req, 'service');
      if (!isOAuthService(service)) throw new ValidationError('Unknown service.');
      const q = query(req);
      const session = await services.sessions.authenticate(sessionCookie(req));
      const { starter } = await services.oauth.complete(
        service,
        { code: q.get('code') ?? undefined, state: q.get('state') ?? '', error: q.get('error') ?? undefined },
        session?.id ?? '',
        callbackUrl(api, req, service),
      );
      if (starter === 'dashboard') {
        res.redirect(302, '/dashboard#/connections', () => {});
      } else {
        page(res, 200, `${SERVICE_LABELS[service]} is connected to Switchboard. You can close this window.`);
      }
    });
  });
}

/** The callback address the service sends the browser back to (it must be the same at both ends). */
function callbackUrl(api: DashboardApi, req: Request, service: string): string {
  const origin = api.policy.publicUrl
    ? new URL(api.policy.publicUrl).origin
    : `http://${req.headers.host ?? 'localhost'}`;
  return `${origin}/dashboard/oauth/${service}/callback`;
}

/** Runs an OAuth step whose answer a person reads in the browser: errors become a short page. */
async function oauthPage(res: Response, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    page(res, errorResponse(error).status, error.detail);
  }
}

function page(res: Response, status: number, text: string): void {
  const escaped = text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const html = `<!doctype html><meta charset="utf-8"><title>Switchboard</title><p>${escaped}</p><p><a href="/dashboard#/connections">Back to the dashboard</a></p>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'",
  });
  res.end(html);
}

function query(req: Request): URLSearchParams {
  return new URL(req.url ?? '/', 'http://gateway').searchParams;
}
