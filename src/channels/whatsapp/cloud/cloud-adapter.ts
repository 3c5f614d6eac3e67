import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ConversationRouter } from '../../../actors/conversation-router.ts';
import type { Chatbot } from '../../../chatbots/chatbot.ts';
import type { Clock } from '../../../clock.ts';
import { AuthenticationError, ForbiddenError, NotFoundError, ValidationError } from '../../../errors.ts';
import type { Logger } from '../../../logger.ts';
import type { ChatbotStore } from '../../../store/chatbot-store.ts';
import { TEXT_ONLY_NOTICE } from '../../channel-notices.ts';
import { answerTurn, tellFailure, type Deliver, type TurnChannel } from '../../channel-turn.ts';
import { PerKeyQueue } from '../../../per-key-queue.ts';
import type { CloudDelivery, LastInbound } from './cloud-delivery.ts';
import type { CloudConnection, WhatsAppCloudStore } from './cloud-store.ts';
import { CLOUD_TYPING_RENEW_MS } from './config.ts';
import { GraphApiError, GraphNetworkError, graphErrorMessage } from './graph-errors.ts';
import { mapCloudWebhook, type CloudInbound } from './inbound.ts';

/** What the Cloud API transport works with. */
export interface CloudAdapterDeps {
  store: WhatsAppCloudStore;
  delivery: CloudDelivery;
  chatbots: ChatbotStore;
  router: ConversationRouter;
  logger: Logger;
  clock: Clock;
}

/** The subscription check Meta makes when the webhook URL is set (`hub.*` query parameters). */
export interface VerifyRequest {
  mode: string | null;
  verifyToken: string | null;
  challenge: string | null;
}

type MessageEvent = Extract<CloudInbound, { kind: 'text' | 'unsupported' }>;
type StatusEvent = Extract<CloudInbound, { kind: 'status' }>;

/**
 * The WhatsApp channel's Cloud API transport, behind the webhook route that any gateway may serve:
 * a delivery is taken in only with a valid `X-Hub-Signature-256` (the app secret's HMAC of the raw
 * body), each message id once across all gateways (Meta retries deliveries), each chat's messages in
 * order in this process. Text goes to the conversation actor like every channel's, its reply back
 * through the Graph API with the typing indicator shown meanwhile; anything else is stored as a
 * placeholder and answered with a short notice; status callbacks are recorded on the stored replies.
 */
export class WhatsAppCloudAdapter {
  private readonly deps: CloudAdapterDeps;
  /** Per chat, the messages being taken in, in order. */
  private readonly chats = new PerKeyQueue<string>();
  private readonly turns: TurnChannel;

  constructor(deps: CloudAdapterDeps) {
    this.deps = deps;
    this.turns = { name: 'whatsapp', ...deps, typingRenewMs: CLOUD_TYPING_RENEW_MS };
  }

  /** The chatbot's connection, or NotFoundError when its WhatsApp does not go through the Cloud API. */
  async connection(chatbotId: string): Promise<CloudConnection> {
    const connection = await this.deps.store.find(chatbotId);
    if (!connection) throw new NotFoundError('WhatsApp Cloud API is not connected for this chatbot.');
    return connection;
  }

  /** Meta's subscription check: the challenge, echoed, when the mode is `subscribe` and the token matches. */
  verify(connection: CloudConnection, request: VerifyRequest): string {
    if (request.mode !== 'subscribe' || !sameText(request.verifyToken ?? '', connection.verifyToken)) {
      throw new ForbiddenError('Invalid verify token.');
    }
    if (!request.challenge) throw new ValidationError('hub.challenge is required.');
    return request.challenge;
  }

  /**
   * One webhook delivery. Resolves once every message in it is taken in (remembered, queued behind its
   * chat's earlier ones) and every status recorded, never after the AI's reply, so Meta gets its 200
   * at once; rejects (and Meta retries) when Redis could not take them in.
   */
  async receive(connection: CloudConnection, rawBody: Buffer, signature: string | undefined): Promise<void> {
    if (!validSignature(rawBody, signature, connection.appSecret)) {
      this.deps.logger.warn({ chatbot_id: connection.chatbotId }, 'whatsapp webhook refused: bad signature');
      throw new AuthenticationError('Invalid signature.');
    }
    let body: unknown;
    try {
      body = JSON.parse(rawBody.toString('utf8'));
    } catch {
      throw new ValidationError('Request body is not valid JSON.');
    }
    for (const event of mapCloudWebhook(body, connection.phoneNumberId)) {
      if (event.kind === 'status') await this.status(connection, event);
      else if (event.kind === 'error') {
        const { code } = event.error;
        this.deps.logger.warn(
          { chatbot_id: connection.chatbotId, code },
          `whatsapp: ${graphErrorMessage(event.error)}`,
        );
      } else await this.takeIn(connection, event);
    }
  }

  private async takeIn(connection: CloudConnection, event: MessageEvent): Promise<void> {
    const atMs = event.sentAtMs ?? this.deps.clock.nowMicros() / 1000;
    const { chatbotId } = connection;
    if (!(await this.deps.store.takeIn(chatbotId, event.sessionId, event.messageId, atMs))) return;
    const last = { atMs, messageId: event.messageId };
    this.chats
      .run(`${chatbotId}/${event.waId}`, () => this.handle(connection, event, last))
      .catch((error: unknown) =>
        this.deps.logger.error({ err: error, chatbot_id: chatbotId }, 'whatsapp message not taken in'),
      );
  }

  /** Never rejects: a failure is logged and, where it helps, told to the chat. */
  private async handle(connection: CloudConnection, event: MessageEvent, last: LastInbound): Promise<void> {
    const deliver: Deliver = (push) => this.deps.delivery.toChat(connection, event.sessionId, push, last);
    try {
      const chatbot = await this.deps.chatbots.get(connection.chatbotId);
      // The chat's next message waits only until this one is with its conversation actor.
      if (event.kind === 'unsupported') void this.placeholder(chatbot, connection, event, deliver);
      else {
        const message = { chatbot, sessionId: event.sessionId, content: event.content };
        void answerTurn(this.turns, message, deliver, (error) => this.failed(connection, error, deliver));
      }
    } catch (error) {
      await tellFailure(this.turns, connection.chatbotId, error, deliver);
    }
  }

  /**
   * A turn that failed: a refusal (paused, quota, rate limit) is told to the chat; Meta refusing the
   * reply (recorded on it) or being unreachable is the owner's to see, not the visitor's: logged.
   */
  private async failed(connection: CloudConnection, error: unknown, deliver: Deliver): Promise<void> {
    if (error instanceof GraphApiError || error instanceof GraphNetworkError) {
      this.deps.logger.warn({ err: error, chatbot_id: connection.chatbotId }, 'whatsapp reply not sent');
      return;
    }
    await tellFailure(this.turns, connection.chatbotId, error, deliver);
  }

  /**
   * A message that is not text: stored in the conversation as its placeholder (the AI does not answer
   * it), marked read, and answered with the owner's notice. Never rejects.
   */
  private async placeholder(
    chatbot: Chatbot,
    connection: CloudConnection,
    event: Extract<MessageEvent, { kind: 'unsupported' }>,
    deliver: Deliver,
  ): Promise<void> {
    const outcome = await this.deps.router.send({
      chatbot,
      sessionId: event.sessionId,
      content: event.placeholder,
      channel: 'whatsapp',
      recordOnly: true,
    });
    if (outcome.kind === 'failed') return await tellFailure(this.turns, chatbot.id, outcome.error, deliver);
    const { logger } = this.deps;
    await this.deps.delivery
      .markRead(connection, event.messageId)
      .catch((error: unknown) =>
        logger.debug({ err: error, chatbot_id: chatbot.id }, 'whatsapp read receipt not sent'),
      );
    await deliver({ type: 'notice', content: connection.textOnlyNotice || TEXT_ONLY_NOTICE }).catch((error: unknown) =>
      logger.warn({ err: error, chatbot_id: chatbot.id }, 'whatsapp notice not sent'),
    );
  }

  /** A status callback, recorded on the reply the message belongs to (a notice's are not kept). */
  private async status(connection: CloudConnection, event: StatusEvent): Promise<void> {
    const { chatbotId } = connection;
    const reply = await this.deps.store.sentReply(chatbotId, event.wamid);
    if (!reply) return;
    const at = Math.round((event.atMs ?? this.deps.clock.nowMicros() / 1000) * 1000);
    const failure = event.error
      ? {
          error: graphErrorMessage(event.error),
          ...(event.error.code === undefined ? {} : { error_code: event.error.code }),
        }
      : {};
    await this.deps.store.recordDelivery(chatbotId, reply.sessionId, reply.createdAt, {
      status: event.status,
      at,
      ...failure,
    });
    if (event.status === 'failed') {
      this.deps.logger.warn({ chatbot_id: chatbotId, code: event.error?.code }, 'whatsapp reply not delivered');
    }
  }
}

/** `sha256=<hex>` of the raw body keyed with the app secret, compared in constant time. */
export function validSignature(rawBody: Buffer, header: string | undefined, appSecret: string): boolean {
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '');
  if (!match) return false;
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(match[1]!, 'hex'));
}

/** Two strings compared in constant time (their lengths are not secret). */
function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
