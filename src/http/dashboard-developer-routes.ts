import type { Request, Response, Server } from 'restify';
import type { AgentView, CreatedAgent, NewAgentBody } from '../contract/agent.ts';
import type { ApiKey, CreatedApiKey, NewApiKeyBody } from '../contract/api-key.ts';
import type { Usage } from '../contract/usage.ts';
import { personaOf, type Agent } from '../agents/agent.ts';
import { DASHBOARD_API, ownerOf, param, type DashboardApi } from './dashboard-api.ts';
import { bodyOf, optionalString, requiredString } from './dashboard-body.ts';
import { jsonBody } from './json-body.ts';

/** Days the usage chart covers, today included. */
const USAGE_DAYS = 30;

const agentView = ({ id, name, initial, created_at, active }: Agent): AgentView => ({
  id,
  name,
  initial: personaOf(name, initial).initial,
  created_at,
  active,
});

/**
 * The account's API keys (create: the key shown once; list; revoke), human agents (create: the token
 * shown once; list; revoke) and usage (messages this month against the plan's quota, per day).
 */
export function registerDashboardDeveloperRoutes(server: Server, api: DashboardApi): void {
  const { services, owned, auth } = api;

  server.get(`${DASHBOARD_API}/keys`, auth, async (req: Request, res: Response) => {
    res.send(200, (await services.apiKeys.list(ownerOf(req))) satisfies ApiKey[]);
  });
  server.post(`${DASHBOARD_API}/keys`, auth, jsonBody(), async (req: Request, res: Response) => {
    const name = requiredString(bodyOf<NewApiKeyBody>(req), 'name');
    res.send(201, (await services.apiKeys.create(ownerOf(req), name)) satisfies CreatedApiKey);
  });
  server.post(`${DASHBOARD_API}/keys/:key_id/revoke`, auth, async (req: Request, res: Response) => {
    res.send(200, (await services.apiKeys.revoke(ownerOf(req), owned.apiKeyId(param(req, 'key_id')))) satisfies ApiKey);
  });

  server.get(`${DASHBOARD_API}/agents`, auth, async (req: Request, res: Response) => {
    res.send(200, (await services.agents.list(ownerOf(req))).map(agentView) satisfies AgentView[]);
  });
  server.post(`${DASHBOARD_API}/agents`, auth, jsonBody(), async (req: Request, res: Response) => {
    const body = bodyOf<NewAgentBody>(req);
    const name = requiredString(body, 'name');
    const initial = optionalString(body, 'initial') ?? '';
    res.send(201, (await services.agents.create(ownerOf(req), name, initial)) satisfies CreatedAgent);
  });
  server.post(`${DASHBOARD_API}/agents/:agent_id/revoke`, auth, async (req: Request, res: Response) => {
    const agentId = await owned.agentId(ownerOf(req), param(req, 'agent_id'));
    res.send(200, agentView(await services.agents.revoke(agentId)) satisfies AgentView);
  });

  server.get(`${DASHBOARD_API}/usage`, auth, async (req: Request, res: Response) => {
    const account = await services.accounts.get(ownerOf(req));
    const days = await services.quota.daily(account.id, USAGE_DAYS);
    const month = days.at(-1)!.date.slice(0, 7);
    const chatbots = await services.chatbots.listForUser(account.id);
    const ratings = await Promise.all(
      chatbots.map(async ({ id, name }) => ({ chatbot_id: id, name, ...(await services.feedback.counts(id, month)) })),
    );
    res.send(200, {
      plan: account.plan,
      month,
      used: await services.quota.used(account.id),
      limit: services.quota.limitOf(account.plan) ?? null,
      days,
      ratings,
    } satisfies Usage);
  });
}
