import type { Request, Response } from 'restify';
import type { Clock } from '../clock.ts';
import type { OwnedResources } from '../dashboard/owned-resources.ts';
import type { TrustedProxies } from '../net/trusted-proxies.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import type { Webhook } from '../webhooks/webhook.ts';
import type { Retrieval } from '../rag/retrieval-setup.ts';
import type { ProviderCheck } from '../llm/provider-check.ts';
import type { Services } from '../services.ts';
import type { CookiePolicy, DashboardRequest } from './dashboard-session.ts';

/** Every dashboard API path starts here. */
export const DASHBOARD_API = '/dashboard/api';

/** What the dashboard API's route groups share. */
export interface DashboardApi {
  services: Services;
  owned: OwnedResources;
  /** Requires a session (and, on state changes, a same-origin caller and the CSRF token). */
  auth: (req: Request, res: Response) => Promise<void>;
  /** Resolve `:chatbot_id` / `:webhook_id` to the owner's resource, before any body is read (404 before 400). */
  chatbot: (req: Request) => Promise<void>;
  webhook: (req: Request) => Promise<void>;
  policy: CookiePolicy;
  /** Whose X-Forwarded-For names the client of a request. */
  trustedProxies: TrustedProxies;
  /** The search index a deleted source leaves at once, and the retriever "try a question" asks. */
  retrieval: Retrieval;
  /** The providers' status and the "Test" call. */
  providerCheck: ProviderCheck;
  clock: Clock;
}

/** The signed-in owner of a request that passed `auth`. */
export function ownerOf(req: Request): string {
  return (req as DashboardRequest).session.userId;
}

/** A path parameter as given. */
export function param(req: Request, name: string): string {
  const value = (req.params as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : '';
}

/** A request whose `:chatbot_id` or `:webhook_id` was resolved to the owner's resource. */
interface OwnedRequest extends Request {
  chatbot: Chatbot;
  webhook: Webhook;
}

/** Middleware that resolves `:chatbot_id` to the signed-in owner's chatbot. */
export function resolveChatbot(owned: OwnedResources) {
  return async function ownedChatbot(req: Request) {
    (req as OwnedRequest).chatbot = await owned.chatbot(ownerOf(req), param(req, 'chatbot_id'));
  };
}

/** Middleware that resolves `:webhook_id` to one of the signed-in owner's webhooks. */
export function resolveWebhook(owned: OwnedResources) {
  return async function ownedWebhook(req: Request) {
    (req as OwnedRequest).webhook = await owned.webhook(ownerOf(req), param(req, 'webhook_id'));
  };
}

/** The chatbot `resolveChatbot` found. */
export function chatbotOf(req: Request): Chatbot {
  return (req as OwnedRequest).chatbot;
}

/** The webhook `resolveWebhook` found. */
export function webhookOf(req: Request): Webhook {
  return (req as OwnedRequest).webhook;
}
