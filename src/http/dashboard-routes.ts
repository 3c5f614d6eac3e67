import { registerDashboardConnectionRoutes } from './dashboard-connection-routes.ts';
import type { Next, Request, Response, Server } from 'restify';
import type { Clock } from '../clock.ts';
import { OwnedResources } from '../dashboard/owned-resources.ts';
import type { TrustedProxies } from '../net/trusted-proxies.ts';
import type { Retrieval } from '../rag/retrieval-setup.ts';
import type { Services } from '../services.ts';
import { resolveChatbot, resolveWebhook, type DashboardApi } from './dashboard-api.ts';
import { registerDashboardAuthRoutes } from './dashboard-auth-routes.ts';
import { registerDashboardChannelRoutes } from './dashboard-channel-routes.ts';
import { registerDashboardChatbotRoutes } from './dashboard-chatbot-routes.ts';
import { registerDashboardConversationRoutes } from './dashboard-conversation-routes.ts';
import { registerDashboardDeveloperRoutes } from './dashboard-developer-routes.ts';
import { dashboardAuth, type CookiePolicy } from './dashboard-session.ts';
import { registerDashboardSourceRoutes } from './dashboard-source-routes.ts';
import { registerDashboardWebhookRoutes } from './dashboard-webhook-routes.ts';
import type { WebBundles } from './web-bundle.ts';
import { contentSecurityPolicy, serveBundle, serveWebFile } from './web-page.ts';

/** What the dashboard is built from. */
export interface DashboardDeps {
  services: Services;
  retrieval: Retrieval;
  bundles: WebBundles;
  clock: Clock;
  publicUrl: string | undefined;
  /** Whose X-Forwarded-For names the client (sign-in limits count per client address). */
  trustedProxies: TrustedProxies;
}

/** Only the page's own script, stylesheet and API; no inline script or style, no frames. */
const DASHBOARD_POLICY = contentSecurityPolicy([
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
]);

const WEB = new URL('../../web/dashboard/', import.meta.url);

/**
 * The owner dashboard: the web app at `/dashboard` (page, script, stylesheet) and its JSON
 * management API under `/dashboard/api/`, which runs every operation through the service layer.
 */
export function registerDashboard(server: Server, deps: DashboardDeps): void {
  const policy: CookiePolicy = {
    publicUrl: deps.publicUrl,
    maxAgeSeconds: Math.floor(deps.services.sessions.lifetime.maxAgeMs / 1000),
  };
  const auth = dashboardAuth(deps.services.sessions, policy);
  const owned = new OwnedResources(deps.services);
  const api: DashboardApi = {
    services: deps.services,
    owned,
    // Nothing the management API answers may be kept by a browser or a proxy.
    auth: async (req: Request, res: Response) => {
      res.setHeader('Cache-Control', 'no-store');
      await auth(req);
    },
    chatbot: resolveChatbot(owned),
    webhook: resolveWebhook(owned),
    policy,
    trustedProxies: deps.trustedProxies,
    retrieval: deps.retrieval,
    clock: deps.clock,
  };
  registerDashboardAuthRoutes(server, api);
  registerDashboardChatbotRoutes(server, api);
  registerDashboardSourceRoutes(server, api);
  registerDashboardConnectionRoutes(server, api);
  registerDashboardWebhookRoutes(server, api);
  registerDashboardConversationRoutes(server, api);
  registerDashboardChannelRoutes(server, api);
  registerDashboardDeveloperRoutes(server, api);

  // The gateway's root is where a new owner first looks: it leads to the dashboard.
  server.get('/', (_req: Request, res: Response, next: Next) => {
    res.writeHead(302, { Location: '/dashboard', 'Content-Length': 0, 'Cache-Control': 'no-cache' });
    res.end();
    next(false);
  });
  const html = { contentType: 'text/html; charset=utf-8', csp: DASHBOARD_POLICY };
  serveWebFile(server, '/dashboard', new URL('index.html', WEB), html);
  serveWebFile(server, '/dashboard/app.css', new URL('dashboard.css', WEB), { contentType: 'text/css; charset=utf-8' });
  serveBundle(server, '/dashboard/app.js', 'dashboard/main.tsx', deps.bundles);
}
