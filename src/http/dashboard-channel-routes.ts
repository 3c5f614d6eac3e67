import type { Request, Response, Server } from 'restify';
import type {
  ChannelDisconnected,
  ChannelsStatus,
  TelegramConnectBody,
  TelegramConnectionView,
  WhatsAppCloudConnectBody,
  WhatsAppCloudStatus,
  WhatsAppLinkBody,
  WhatsAppStatus,
} from '../contract/messaging-channels.ts';
import { NotFoundError } from '../errors.ts';
import { chatbotOf, DASHBOARD_API, type DashboardApi } from './dashboard-api.ts';
import { bodyOf } from './dashboard-body.ts';
import { jsonBody } from './json-body.ts';

/**
 * A chatbot's messaging channels. Telegram: its connection (mode, webhook path and secret token as
 * `channel telegram` prints them, and the bot's username), connect with a token and mode, disconnect.
 * WhatsApp, by one of two transports: the Cloud API (connect with the number's id, token and app
 * secret; the webhook URL and verify token to give Meta; disconnect), or a linked device (the link
 * state with the QR code drawn while linking, link by QR or pairing code, unlink). Choosing one ends
 * the other.
 */
export function registerDashboardChannelRoutes(server: Server, api: DashboardApi): void {
  const { services, auth, chatbot: ownedChatbot } = api;
  const base = `${DASHBOARD_API}/chatbots/:chatbot_id/channels`;

  server.get(base, auth, ownedChatbot, async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    const [telegram, whatsapp, whatsapp_cloud] = await Promise.all([
      services.telegramConnector.status(chatbot.id),
      services.whatsappLinker.status(chatbot.id),
      services.whatsappCloudConnector.status(chatbot.id),
    ]);
    res.send(200, { telegram, whatsapp, whatsapp_cloud } satisfies ChannelsStatus);
  });

  server.put(`${base}/telegram`, auth, ownedChatbot, jsonBody(), async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    const body = bodyOf<TelegramConnectBody>(req);
    const connected = await services.telegramConnector.connect(chatbot.id, body.token, body.mode ?? 'webhook');
    res.send(200, connected satisfies TelegramConnectionView);
  });

  server.del(`${base}/telegram`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    if (!(await services.telegramConnector.disconnect(chatbot.id))) {
      throw new NotFoundError('Telegram is not connected for this chatbot.');
    }
    res.send(200, { chatbot_id: chatbot.id, disconnected: true } satisfies ChannelDisconnected);
  });

  server.put(`${base}/whatsapp`, auth, ownedChatbot, jsonBody(), async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    await services.whatsappLinker.link(chatbot.id, bodyOf<WhatsAppLinkBody>(req).phone);
    res.send(200, (await services.whatsappLinker.status(chatbot.id)) satisfies WhatsAppStatus | null);
  });

  server.put(`${base}/whatsapp-cloud`, auth, ownedChatbot, jsonBody(), async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    const body = bodyOf<WhatsAppCloudConnectBody>(req);
    const connected = await services.whatsappCloudConnector.connect(chatbot.id, body);
    res.send(200, connected satisfies WhatsAppCloudStatus);
  });

  server.del(`${base}/whatsapp-cloud`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    if (!(await services.whatsappCloudConnector.disconnect(chatbot.id))) {
      throw new NotFoundError('WhatsApp Cloud API is not connected for this chatbot.');
    }
    res.send(200, { chatbot_id: chatbot.id, disconnected: true } satisfies ChannelDisconnected);
  });

  server.del(`${base}/whatsapp`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    if (!(await services.whatsappLinker.disconnect(chatbot.id))) {
      throw new NotFoundError('WhatsApp is not connected for this chatbot.');
    }
    res.send(200, { chatbot_id: chatbot.id, disconnected: true } satisfies ChannelDisconnected);
  });
}
