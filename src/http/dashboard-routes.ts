import { registerDashboardConnectionRoutes } from './dashboard-connection-routes.ts';
import type { Next, Request, Response, Server } from 'restify';
import type { Clock } from '../clock.ts';
import { OwnedResources } from '../dashboard/owned-resources.ts';
import type { TrustedProxies } from '../net/trusted-proxies.ts';
import type { Retrieval } from '../rag/retrieval-setup.ts';
import type { Services } from '../services.ts';
import { resolveChatbot, resolveWebhook, type DashboardApi } from './dashboard-api.ts';
import { registerDashboardAuthRoutes } from './dashboard-auth-routes.ts';
import { registerDashboardCannedReplyRoutes } from './dashboard-canned-reply-routes.ts';
import { registerDashboardChannelRoutes } from './dashboard-channel-routes.ts';
import { registerDashboardChatbotRoutes } from './dashboard-chatbot-routes.ts';
import { registerDashboardConversationRoutes } from './dashboard-conversation-routes.ts';
import { registerDashboardDeveloperRoutes } from './dashboard-developer-routes.ts';
import { registerDashboardProviderRoutes } from './dashboard-provider-routes.ts';
import type { ProviderCheck } from '../llm/provider-check.ts';
import { dashboardAuth, type CookiePolicy } from './dashboard-session.ts';
import { registerDashboardSourceRoutes } from './dashboard-source-routes.ts';
import { registerDashboardUnansweredRoutes } from './dashboard-unanswered-routes.ts';
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
  /** The providers' status and the "Test" call. */
  providerCheck: ProviderCheck;
}

/** Only the page's own script, stylesheet and API, and its own widget preview in a frame; no inline script or style. */
const DASHBOARD_POLICY = contentSecurityPolicy([
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
]);

/**
 * The widget preview's page, framed by the dashboard only: the real widget script, which styles its
 * shadow root with a `<style>` element and a `style` attribute, and talks to the gateway's own socket.
 */
const PREVIEW_POLICY = contentSecurityPolicy([
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
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
    providerCheck: deps.providerCheck,
    clock: deps.clock,
  };
  registerDashboardAuthRoutes(server, api);
  registerDashboardChatbotRoutes(server, api);
  registerDashboardSourceRoutes(server, api);
  registerDashboardConnectionRoutes(server, api);
  registerDashboardWebhookRoutes(server, api);
  registerDashboardConversationRoutes(server, api);
  registerDashboardUnansweredRoutes(server, api);
  registerDashboardChannelRoutes(server, api);
  registerDashboardDeveloperRoutes(server, api);
  registerDashboardCannedReplyRoutes(server, api);
  registerDashboardProviderRoutes(server, api);

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
  const preview = { contentType: 'text/html; charset=utf-8', csp: PREVIEW_POLICY };
  serveWebFile(server, '/dashboard/preview', new URL('preview-frame.html', WEB), preview);
  serveBundle(server, '/dashboard/preview.js', 'dashboard/preview-frame.ts', deps.bundles);
}
