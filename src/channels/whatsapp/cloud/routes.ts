import type { Request, Response, Server } from 'restify';
import { NotFoundError } from '../../../errors.ts';
import { readBody } from '../../../http/json-body.ts';
import { isUuid } from '../../../uuid.ts';
import type { WhatsAppCloudAdapter } from './cloud-adapter.ts';
import { cloudWebhookPath } from './config.ts';

/** Meta batches updates: a delivery may be far larger than a chat request, but not without bound. */
const MAX_WEBHOOK_BYTES = 1024 * 1024;

/**
 * `GET /channels/whatsapp/{chatbot_id}`: Meta's subscription check (`hub.mode=subscribe`,
 * `hub.verify_token`, `hub.challenge` echoed as text/plain). `POST` the same path: a webhook delivery,
 * its signature checked over the raw body before anything is parsed, answered 200 as soon as it is
 * taken in (never after the AI's reply: Meta retries deliveries it waits too long for). Any gateway
 * may serve both.
 */
export function registerWhatsAppCloudRoutes(server: Server, adapter: WhatsAppCloudAdapter): void {
  const path = cloudWebhookPath(':chatbot_id');

  server.get(path, async (req: Request, res: Response) => {
    const connection = await adapter.connection(chatbotIdOf(req));
    const query = new URL(req.url ?? '/', 'http://gateway').searchParams;
    const challenge = adapter.verify(connection, {
      mode: query.get('hub.mode'),
      verifyToken: query.get('hub.verify_token'),
      challenge: query.get('hub.challenge'),
    });
    res.writeHead(200, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': Buffer.byteLength(challenge),
      'Cache-Control': 'no-store',
    });
    res.end(challenge);
  });

  server.post(path, async (req: Request, res: Response) => {
    // The connection first: a chatbot without one is answered before its body is read.
    const connection = await adapter.connection(chatbotIdOf(req));
    const raw = await readBody(req, res, { limit: MAX_WEBHOOK_BYTES, tooLarge: 'Request body is too large.' });
    const signature = req.headers['x-hub-signature-256'];
    await adapter.receive(connection, raw, Array.isArray(signature) ? signature[0] : signature);
    res.send(200);
  });
}

function chatbotIdOf(req: Request): string {
  const chatbotId = String((req.params as Record<string, string>).chatbot_id).toLowerCase();
  if (!isUuid(chatbotId)) throw new NotFoundError('Chatbot not found.');
  return chatbotId;
}
