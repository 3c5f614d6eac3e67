import type { Request, Response, Server } from 'restify';
import type { ProviderStatus, ProviderTest, ProviderTestBody } from '../contract/provider.ts';
import { DASHBOARD_API, ownerOf, type DashboardApi } from './dashboard-api.ts';
import { bodyOf } from './dashboard-body.ts';
import { jsonBody } from './json-body.ts';

/**
 * The LLM providers: `GET /providers` (which ones the answering gateway can call) and
 * `POST /providers/test` (one tiny completion with a provider's credentials).
 */
export function registerDashboardProviderRoutes(server: Server, api: DashboardApi): void {
  const { auth, providerCheck } = api;

  server.get(`${DASHBOARD_API}/providers`, auth, async (_req: Request, res: Response) => {
    res.send(200, providerCheck.statuses() satisfies ProviderStatus[]);
  });

  server.post(`${DASHBOARD_API}/providers/test`, auth, jsonBody(), async (req: Request, res: Response) => {
    const body = bodyOf<ProviderTestBody>(req);
    const result = await providerCheck.test(ownerOf(req), body.provider, body.model);
    res.send(200, result satisfies ProviderTest);
  });
}
