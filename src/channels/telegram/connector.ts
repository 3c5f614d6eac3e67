import type { TelegramConnectionView, TelegramStatus } from '../../contract/messaging-channels.ts';
import { UpstreamError, ValidationError } from '../../errors.ts';
import type { SignalBus } from '../../redis/signal-bus.ts';
import { loadGrammy } from './grammy.ts';
import type { TelegramStore } from './telegram-store.ts';
import { TELEGRAM_TOKEN, telegramWebhookPath } from './rules.ts';

/**
 * Connecting a chatbot to a Telegram bot and disconnecting it, for the CLI and the dashboard alike:
 * the token is checked with `getMe`, stored, and every gateway is told to restart that bot.
 */
export class TelegramConnector {
  private readonly store: TelegramStore;
  private readonly signals: SignalBus;
  private readonly apiRoot: string | undefined;

  constructor(deps: { store: TelegramStore; signals: SignalBus; apiRoot: string | undefined }) {
    this.store = deps.store;
    this.signals = deps.signals;
    this.apiRoot = deps.apiRoot;
  }

  async connect(chatbotId: string, token: unknown, mode: unknown): Promise<TelegramConnectionView> {
    if (mode !== 'webhook' && mode !== 'polling') throw new ValidationError('mode must be webhook or polling.');
    if (typeof token !== 'string' || !TELEGRAM_TOKEN.test(token)) {
      throw new ValidationError('token does not look like a Telegram bot token (123456:ABC…).');
    }
    const { Api, GrammyError } = await loadGrammy();
    let botInfo: Record<string, unknown>;
    try {
      // Asked once, without retries: someone is waiting for the answer.
      botInfo = { ...(await new Api(token, this.apiRoot ? { apiRoot: this.apiRoot } : undefined).getMe()) };
    } catch (error) {
      if (error instanceof GrammyError) throw new ValidationError(`Telegram refused the token: ${error.description}`);
      throw new UpstreamError(`Telegram could not be reached: ${(error as Error).message}`);
    }
    const connection = await this.store.connect({ chatbotId, token, mode, botInfo });
    await this.signals.publish({ kind: 'channel', chatbot_id: chatbotId, channel: 'telegram' });
    return view(chatbotId, connection.mode, connection.secretToken);
  }

  /** False when Telegram was not connected. */
  async disconnect(chatbotId: string): Promise<boolean> {
    if (!(await this.store.disconnect(chatbotId))) return false;
    await this.signals.publish({ kind: 'channel', chatbot_id: chatbotId, channel: 'telegram' });
    return true;
  }

  /** The chatbot's connection, or null when it has none. */
  async status(chatbotId: string): Promise<TelegramStatus | null> {
    const connection = await this.store.find(chatbotId);
    if (!connection) return null;
    const username = connection.botInfo.username;
    return {
      ...view(chatbotId, connection.mode, connection.secretToken),
      bot_username: typeof username === 'string' ? username : null,
    };
  }
}

function view(chatbotId: string, mode: 'webhook' | 'polling', secretToken: string): TelegramConnectionView {
  const webhook = mode === 'webhook';
  return {
    mode,
    webhook_path: webhook ? telegramWebhookPath(chatbotId) : null,
    secret_token: webhook ? secretToken : null,
  };
}
