import type { Clock } from '../../clock.ts';
import { randomUUID } from 'node:crypto';
import type { Bot, Context } from 'grammy';
import type { UserFromGetMe } from 'grammy/types';
import type { ConversationRouter } from '../../actors/conversation-router.ts';
import type { Logger } from '../../logger.ts';
import type { ChatbotStore } from '../../store/chatbot-store.ts';
import type { TelegramConnection, TelegramStore } from './telegram-store.ts';
import { DEFAULT_WELCOME, TEXT_ONLY_NOTICE } from '../channel-notices.ts';
import { answerTurn, tellFailure, type Deliver, type TurnChannel } from '../channel-turn.ts';
import type { ChannelPort, VisitorPush } from '../channel-port.ts';
import { LeaseKeeper } from '../lease-keeper.ts';
import { PerKeyQueue } from '../../per-key-queue.ts';
import { telegramChatId, telegramWebhookPath } from './rules.ts';
import { mapTelegramUpdate, type TelegramInbound } from './inbound.ts';
import { loadGrammy } from './grammy.ts';
import { deliverToChat, retrying, TelegramOutbound } from './outbound.ts';

/** What the Telegram channel works with. */
export interface TelegramDeps {
  store: TelegramStore;
  chatbots: ChatbotStore;
  router: ConversationRouter;
  logger: Logger;
  clock: Clock;
  /** `TELEGRAM_API_ROOT`: another Bot API server. */
  apiRoot?: string;
  /** `PUBLIC_URL`: when set, webhook mode registers `PUBLIC_URL/channels/telegram/{id}` with Telegram. */
  publicUrl?: string;
  /** How long a poller's right lasts unless renewed (renewed every third of it). */
  pollerLeaseMs?: number;
}

/** The webhook's request-response pair, as the HTTP layer hands it over. */
export interface WebhookExchange {
  /** The parsed update (the body is read only after the secret token matched). */
  update: unknown;
  secretToken: string | undefined;
  /** 200 with no body: the update was taken in. */
  accept(): void;
  unauthorized(): void;
}

/** Telegram re-sends the typing action's effect after 5 s; it is renewed a little before. */
const TYPING_RENEW_MS = 4500;
/** Long polling waits this long for updates per request (Telegram's own limit is 50 s). */
const POLL_TIMEOUT_SECONDS = 25;

/** One chatbot's running bot. */
interface Running {
  connection: TelegramConnection;
  bot: Bot;
  outbound: TelegramOutbound;
  webhook?: (exchange: WebhookExchange) => Promise<void>;
  poller?: Poller;
  /** Per chat, the updates being taken in, in order. */
  chats: PerKeyQueue<number>;
}

/**
 * The Telegram channel: one grammY bot per connected chatbot, fed by the webhook route (any gateway
 * process may receive it) or by long polling (one process per bot at a time, by a lease in Redis).
 * Updates are acknowledged at once and taken in per chat, in order; a re-sent update (same
 * `update_id`) is taken in once across all processes. Text goes to the conversation actor; its reply
 * comes back with sendMessage, with the typing action while the AI works.
 */
export class TelegramChannel implements ChannelPort {
  readonly channel = 'telegram';
  private readonly deps: TelegramDeps;
  private readonly running = new Map<string, Running>();
  private readonly reloading = new PerKeyQueue<string>();
  /** Identifies this process as a poller holder. */
  private readonly holder = randomUUID();
  private stopped = false;
  private readonly turns: TurnChannel;

  constructor(deps: TelegramDeps) {
    this.deps = deps;
    this.turns = { name: 'telegram', ...deps, typingRenewMs: TYPING_RENEW_MS };
  }

  /** Starts every connected chatbot's bot. */
  async start(): Promise<void> {
    for (const connection of await this.deps.store.list()) await this.apply(connection);
  }

  /**
   * A chatbot's connection changed (in any process): stops its bot and starts it as stored now.
   * Reloads of one chatbot run one after another, so two never leave two bots (or two pollers) behind.
   */
  reload(chatbotId: string): Promise<void> {
    return this.reloading.run(chatbotId, async () => {
      if (this.stopped) return;
      await this.halt(chatbotId);
      const connection = await this.deps.store.find(chatbotId);
      if (connection) await this.apply(connection);
    });
  }

  /**
   * Through the chatbot's bot when it runs here (a push signalled to every gateway: only the
   * escalation, which a chat does not show). A push made elsewhere reaches Telegram directly through
   * VisitorDelivery, which needs no running bot.
   */
  async deliver(chatbotId: string, sessionId: string, push: VisitorPush): Promise<void> {
    const running = this.running.get(chatbotId);
    const chatId = telegramChatId(sessionId);
    if (running && chatId !== undefined) await deliverToChat(running.outbound, chatId, push);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.running.keys()].map((chatbotId) => this.halt(chatbotId)));
  }

  /**
   * A webhook call for the chatbot; false when the chatbot has no Telegram connection in webhook mode
   * (not found). A connection made by another process is picked up here even before its signal.
   */
  async webhook(chatbotId: string, exchange: WebhookExchange): Promise<boolean> {
    const running = await this.current(chatbotId);
    if (!running?.webhook) return false;
    await running.webhook(exchange);
    return true;
  }

  /**
   * The secret token a webhook call for the chatbot must carry (checked before its body is read), or
   * undefined when the chatbot has no Telegram connection in webhook mode.
   */
  async webhookSecret(chatbotId: string): Promise<string | undefined> {
    const running = await this.current(chatbotId);
    return running?.webhook ? running.connection.secretToken : undefined;
  }

  /**
   * The chatbot's running bot. One not running here is looked up in Redis (another process may have
   * connected it, its signal still on the way); a running one is never restarted by a webhook call.
   */
  private async current(chatbotId: string): Promise<Running | undefined> {
    if (!this.running.has(chatbotId)) await this.reload(chatbotId);
    return this.running.get(chatbotId);
  }

  private async apply(connection: TelegramConnection): Promise<void> {
    const { chatbotId } = connection;
    const apiRoot = this.deps.apiRoot;
    const grammy = await loadGrammy();
    const bot = new grammy.Bot(connection.token, {
      botInfo: connection.botInfo as unknown as UserFromGetMe,
      ...(apiRoot ? { client: { apiRoot } } : {}),
    });
    bot.api.config.use(retrying(grammy));
    const running: Running = {
      connection,
      bot,
      outbound: new TelegramOutbound(bot.api),
      chats: new PerKeyQueue(),
    };
    bot.use((ctx) => this.take(running, ctx));
    bot.catch((error) => this.deps.logger.error({ err: error.error, chatbot_id: chatbotId }, 'telegram update failed'));
    this.running.set(chatbotId, running);
    if (connection.mode === 'webhook') {
      const callback = grammy.webhookCallback(bot, adapter, { secretToken: connection.secretToken });
      // Typed after the adapter's handler return; at run time it is the callback's promise.
      running.webhook = async (exchange) => {
        await (callback(exchange) as unknown as Promise<unknown>);
      };
      if (this.deps.publicUrl) {
        const url = new URL(telegramWebhookPath(chatbotId), this.deps.publicUrl).href;
        await bot.api
          .setWebhook(url, { secret_token: connection.secretToken, allowed_updates: ['message'] })
          .catch((error: unknown) =>
            this.deps.logger.error({ err: error, chatbot_id: chatbotId }, 'telegram setWebhook failed'),
          );
      }
    } else {
      running.poller = new Poller(chatbotId, bot, this.deps, this.holder);
      running.poller.start();
    }
  }

  private async halt(chatbotId: string): Promise<void> {
    const running = this.running.get(chatbotId);
    if (!running) return;
    this.running.delete(chatbotId);
    await running.poller?.stop();
  }

  /**
   * One update: remembered first (so a re-sent one is dropped), then queued behind the chat's earlier
   * updates. Resolves without waiting for the AI, so the webhook is answered at once.
   */
  private async take(running: Running, ctx: Context): Promise<void> {
    const { chatbotId } = running.connection;
    if (!(await this.deps.store.firstSight(chatbotId, ctx.update.update_id))) return;
    const inbound = mapTelegramUpdate(ctx.update);
    if (inbound.kind === 'ignored') return;
    void running.chats.run(inbound.chatId, () => this.handle(running, inbound));
  }

  /** Never rejects: a failure is logged and, where it helps, told to the chat. */
  private async handle(running: Running, inbound: Exclude<TelegramInbound, { kind: 'ignored' }>): Promise<void> {
    const { chatbotId } = running.connection;
    const deliver: Deliver = (push) => deliverToChat(running.outbound, inbound.chatId, push);
    try {
      const chatbot = await this.deps.chatbots.get(chatbotId);
      if (inbound.kind === 'unsupported') return await deliver({ type: 'notice', content: TEXT_ONLY_NOTICE });
      if (inbound.kind === 'start') {
        const welcome = chatbot.settings.widget.welcome_message || DEFAULT_WELCOME;
        return await deliver({ type: 'notice', content: welcome });
      }
      // The chat's next update waits only until this one is with its conversation actor.
      void answerTurn(this.turns, { chatbot, sessionId: inbound.sessionId, content: inbound.content }, deliver);
    } catch (error) {
      await tellFailure(this.turns, chatbotId, error, deliver);
    }
  }
}

/** grammY's webhook callback on the gateway's HTTP layer (grammY ships no restify adapter). */
function adapter(exchange: WebhookExchange) {
  return {
    update: exchange.update as never,
    header: exchange.secretToken,
    end: () => exchange.accept(),
    respond: () => exchange.accept(),
    unauthorized: () => exchange.unauthorized(),
  };
}

/**
 * Long polling for one bot, in at most one process at a time: the process that holds the lease in
 * Redis polls and renews it; the others check now and then and take over when it lapses.
 */
class Poller {
  private readonly chatbotId: string;
  private readonly bot: Bot;
  private readonly deps: TelegramDeps;
  private readonly lease: LeaseKeeper;
  private polling: Promise<void> | undefined;

  constructor(chatbotId: string, bot: Bot, deps: TelegramDeps, holder: string) {
    this.chatbotId = chatbotId;
    this.bot = bot;
    this.deps = deps;
    const ttlMs = deps.pollerLeaseMs ?? 30_000;
    this.lease = new LeaseKeeper({
      clock: deps.clock,
      ttlMs,
      hold: () => deps.store.holdPoller(chatbotId, holder, ttlMs),
      release: () => deps.store.releasePoller(chatbotId, holder),
      onHeld: (held) => this.held(held),
      onError: (error) => deps.logger.warn({ err: error, chatbot_id: chatbotId }, 'telegram poller lease'),
    });
  }

  start(): void {
    this.lease.start();
  }

  async stop(): Promise<void> {
    this.lease.stop();
    await this.halt();
    await this.lease.release();
  }

  private async held(held: boolean): Promise<void> {
    if (held && !this.polling) {
      this.polling = this.bot
        .start({ allowed_updates: ['message'], timeout: POLL_TIMEOUT_SECONDS })
        .catch((error: unknown) =>
          this.deps.logger.error({ err: error, chatbot_id: this.chatbotId }, 'telegram polling stopped'),
        )
        .finally(() => {
          this.polling = undefined;
        });
    } else if (!held && this.polling) {
      await this.halt();
    }
  }

  private async halt(): Promise<void> {
    if (!this.polling) return;
    await this.bot.stop();
    await this.polling;
  }
}
