import type { Next, Request, Response, Server } from 'restify';
import type { TelegramChannel } from './adapter.ts';
import { NotFoundError } from '../../errors.ts';
import { isUuid } from '../../uuid.ts';
import { sendDetail } from '../../http/http-server.ts';
import { jsonBody, type JsonRequest } from '../../http/json-body.ts';

interface TelegramRequest extends JsonRequest {
  chatbotId: string;
}

/**
 * `POST /channels/telegram/{chatbot_id}`, where Telegram posts a chatbot's updates in webhook mode.
 * The secret token is checked before the body is read; an update is answered 200 as soon as it is
 * taken in, never after the AI's reply (Telegram re-sends updates it waits too long for).
 */
export function registerTelegramRoutes(server: Server, channel: TelegramChannel): void {
  server.post(
    '/channels/telegram/:chatbot_id',
    // Callback style: only next(false) ends a restify chain without an error.
    function checkSecret(req: Request, res: Response, next: Next) {
      const chatbotId = String((req.params as Record<string, string>).chatbot_id).toLowerCase();
      if (!isUuid(chatbotId)) return next(new NotFoundError('Chatbot not found.'));
      channel.webhookSecret(chatbotId).then((secret) => {
        if (secret === undefined) return next(new NotFoundError('Telegram is not connected for this chatbot.'));
        if (req.headers['x-telegram-bot-api-secret-token'] !== secret) {
          sendDetail(res, 401, 'Invalid secret token.');
          return next(false);
        }
        (req as TelegramRequest).chatbotId = chatbotId;
        return next();
      }, next);
    },
    jsonBody(),
    async (req: Request, res: Response) => {
      const { chatbotId, body } = req as TelegramRequest;
      const taken = await channel.webhook(chatbotId, {
        update: body,
        secretToken: req.headers['x-telegram-bot-api-secret-token'] as string | undefined,
        accept: () => {
          if (!res.headersSent) res.send(200);
        },
        unauthorized: () => sendDetail(res, 401, 'Invalid secret token.'),
      });
      if (!taken) throw new NotFoundError('Telegram is not connected for this chatbot.');
    },
  );
}
