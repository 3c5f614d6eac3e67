import type { Request, Response, Server } from 'restify';
import type { ChatbotPatchBody, DashboardChatbot, NewChatbotBody } from '../contract/chatbot.ts';
import type { ChatbotSettingsView, SettingsPatchBody } from '../contract/chatbot-settings.ts';
import type { Deleted } from '../contract/deleted.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import { chatbotDetailView } from '../views.ts';
import { chatbotOf, DASHBOARD_API, ownerOf, type DashboardApi } from './dashboard-api.ts';
import { bodyOf, optionalBoolean, optionalString, requiredString } from './dashboard-body.ts';
import { jsonBody } from './json-body.ts';

/** The dashboard's chatbot: SPEC's detail view plus the model, which only the owner sees. */
function dashboardChatbotView(chatbot: Chatbot): DashboardChatbot {
  return { ...chatbotDetailView(chatbot), model: chatbot.model };
}

/**
 * Chatbots: list, create, read, change (name, provider and model, system prompt, fallback message,
 * paused or active), delete; and their widget, lead-form and escalation settings (`bot configure`).
 */
export function registerDashboardChatbotRoutes(server: Server, api: DashboardApi): void {
  const { services, auth, chatbot: ownedChatbot } = api;
  const base = `${DASHBOARD_API}/chatbots`;

  server.get(base, auth, async (req: Request, res: Response) => {
    const chatbots = await services.chatbots.listForUser(ownerOf(req));
    res.send(200, chatbots.map(dashboardChatbotView) satisfies DashboardChatbot[]);
  });

  server.post(base, auth, jsonBody(), async (req: Request, res: Response) => {
    const body = bodyOf<NewChatbotBody>(req);
    const created = await services.chatbots.create(ownerOf(req), {
      name: requiredString(body, 'name'),
      provider: optionalString(body, 'provider'),
      model: optionalString(body, 'model'),
      systemPrompt: optionalString(body, 'system_prompt'),
      fallbackMessage: optionalString(body, 'fallback_message'),
    });
    res.send(201, dashboardChatbotView(created) satisfies DashboardChatbot);
  });

  server.get(`${base}/:chatbot_id`, auth, ownedChatbot, async (req: Request, res: Response) => {
    res.send(200, dashboardChatbotView(chatbotOf(req)) satisfies DashboardChatbot);
  });

  server.patch(`${base}/:chatbot_id`, auth, ownedChatbot, jsonBody(), async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    const body = bodyOf<ChatbotPatchBody>(req);
    const isActive = optionalBoolean(body, 'is_active');
    const patch = {
      name: optionalString(body, 'name'),
      provider: optionalString(body, 'provider'),
      model: optionalString(body, 'model'),
      systemPrompt: optionalString(body, 'system_prompt'),
      fallbackMessage: optionalString(body, 'fallback_message'),
      isActive,
    };
    res.send(200, dashboardChatbotView(await services.chatbots.update(chatbot.id, patch)) satisfies DashboardChatbot);
  });

  server.del(`${base}/:chatbot_id`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    await services.chatbotDeletion.delete(chatbot.id);
    res.send(200, { id: chatbot.id, deleted: true } satisfies Deleted);
  });

  server.get(`${base}/:chatbot_id/settings`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    res.send(200, { chatbot_id: chatbot.id, ...chatbot.settings } satisfies ChatbotSettingsView);
  });

  server.patch(`${base}/:chatbot_id/settings`, auth, ownedChatbot, jsonBody(), async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    const settings = await services.chatbots.configure(chatbot.id, bodyOf<SettingsPatchBody>(req));
    res.send(200, { chatbot_id: chatbot.id, ...settings } satisfies ChatbotSettingsView);
  });
}
