import type { Request, Response, Server } from 'restify';
import type { GatewayMetrics } from './gateway-metrics.ts';

/** The `route` label of a request no route matched (a 404 or 405): never its raw URL. */
export const UNMATCHED_ROUTE = 'unmatched';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Counts and times every request the public server answers, by method, the route's pattern
 * (`/api/v1/chatbots/:chatbot_id/chat`, not the URL) and status class, from restify's `after` event:
 * two in-memory updates per request. Websocket upgrades are not requests here; the open sockets
 * gauge counts them.
 */
export function observeHttpRequests(server: Server, metrics: GatewayMetrics): void {
  server.on('after', (req: Request, res: Response, route: { path?: unknown } | undefined) => {
    const method = METHODS.has(req.method ?? '') ? req.method! : 'OTHER';
    const path = typeof route?.path === 'string' ? route.path : UNMATCHED_ROUTE;
    metrics.httpRequests.inc({ method, route: path, status_class: `${Math.floor(res.statusCode / 100)}xx` });
    metrics.httpDuration.observe({ method, route: path }, Math.max(0, Date.now() - req.time()) / 1000);
  });
}
