import type { Request, Response, Server } from 'restify';
import type { Deleted } from '../contract/deleted.ts';
import type {
  Delivery,
  NewWebhookBody,
  TestEventBody,
  Webhook,
  WebhookPatchBody,
  WebhookWithSecret,
} from '../contract/webhook.ts';
import { testEvent } from '../dashboard/test-event.ts';
import { chatbotOf, DASHBOARD_API, ownerOf, param, webhookOf, type DashboardApi } from './dashboard-api.ts';
import { bodyOf, optionalBoolean, requiredString, requiredStrings } from './dashboard-body.ts';
import { IntegerQuery } from './integer-query.ts';
import { jsonBody } from './json-body.ts';

/** A page of the delivery log, newest first. */
const DELIVERIES_LIMIT = new IntegerQuery('limit', { min: 1, max: 200, fallback: 50 });
const DELIVERIES_OFFSET = new IntegerQuery('offset', { min: 0, max: 1_000_000, fallback: 0 });

/**
 * Webhooks of a chatbot: list (with their secrets: the owner copies them into the receiver), create,
 * read, turn the Standard Webhooks headers on or off, delete, rotate the secret; the delivery log of each (paged), redelivery, and a test event
 * sent through the same outbox and dispatcher, so it lands in the log like any delivery.
 */
export function registerDashboardWebhookRoutes(server: Server, api: DashboardApi): void {
  const { services, owned, auth, chatbot: ownedChatbot, webhook: ownedWebhook } = api;
  const hooks = `${DASHBOARD_API}/webhooks/:webhook_id`;

  server.get(
    `${DASHBOARD_API}/chatbots/:chatbot_id/webhooks`,
    auth,
    ownedChatbot,
    async (req: Request, res: Response) => {
      const chatbot = chatbotOf(req);
      res.send(200, (await services.webhooks.listForChatbot(chatbot.id)) satisfies Webhook[]);
    },
  );

  server.post(
    `${DASHBOARD_API}/chatbots/:chatbot_id/webhooks`,
    auth,
    ownedChatbot,
    jsonBody(),
    async (req: Request, res: Response) => {
      const chatbot = chatbotOf(req);
      const body = bodyOf<NewWebhookBody>(req);
      const url = requiredString(body, 'url');
      const events = requiredStrings(body, 'events');
      const standardWebhooks = optionalBoolean(body, 'standard_webhooks') ?? false;
      const created = await services.webhooks.create(chatbot.id, url, events, { standardWebhooks });
      res.send(201, created satisfies WebhookWithSecret);
    },
  );

  server.get(hooks, auth, ownedWebhook, async (req: Request, res: Response) => {
    res.send(200, webhookOf(req) satisfies Webhook);
  });

  // Its Standard Webhooks headers on or off (left out: unchanged). Answers the webhook, with the
  // secret's Standard Webhooks form once they are on.
  server.patch(hooks, auth, ownedWebhook, jsonBody(), async (req: Request, res: Response) => {
    let webhook = webhookOf(req);
    const standardWebhooks = optionalBoolean(bodyOf<WebhookPatchBody>(req), 'standard_webhooks');
    if (standardWebhooks !== undefined) {
      webhook = await services.webhooks.setStandardWebhooks(webhook.id, standardWebhooks);
    }
    res.send(200, webhook satisfies Webhook);
  });

  server.del(hooks, auth, ownedWebhook, async (req: Request, res: Response) => {
    const webhook = webhookOf(req);
    await services.webhooks.delete(webhook.id);
    res.send(200, { id: webhook.id, deleted: true } satisfies Deleted);
  });

  server.post(`${hooks}/rotate-secret`, auth, ownedWebhook, async (req: Request, res: Response) => {
    const webhook = webhookOf(req);
    res.send(200, (await services.webhooks.rotateSecret(webhook.id)) satisfies WebhookWithSecret);
  });

  server.get(`${hooks}/deliveries`, auth, ownedWebhook, async (req: Request, res: Response) => {
    const webhook = webhookOf(req);
    const limit = DELIVERIES_LIMIT.read(req);
    const offset = DELIVERIES_OFFSET.read(req);
    res.send(200, (await services.deliveries.log(webhook.id, { limit, offset })) satisfies Delivery[]);
  });

  server.post(`${hooks}/test`, auth, ownedWebhook, jsonBody(), async (req: Request, res: Response) => {
    const webhook = webhookOf(req);
    const event = testEvent(webhook.chatbot_id, bodyOf<TestEventBody>(req).event, api.clock.nowMicros());
    const deliveryId = await services.outbox.emitTo(webhook, event);
    res.send(201, (await services.deliveries.get(deliveryId)) satisfies Delivery);
  });

  server.post(`${DASHBOARD_API}/deliveries/:delivery_id/redeliver`, auth, async (req: Request, res: Response) => {
    const deliveryId = await owned.delivery(ownerOf(req), param(req, 'delivery_id'));
    res.send(200, (await services.deliveries.redeliver(deliveryId)) satisfies Delivery);
  });
}
