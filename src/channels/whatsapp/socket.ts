import type { AuthenticationState, BaileysEventMap } from '@whiskeysockets/baileys';
import { baileys } from './baileys.ts';
import type { Logger } from '../../logger.ts';

/** The events of a WhatsApp socket the channel listens to. */
export type WhatsAppSocketEvents = Pick<BaileysEventMap, 'connection.update' | 'creds.update' | 'messages.upsert'>;

/**
 * The part of a Baileys socket the channel uses: the port that tests fill with a fake (an event
 * emitter and recorded sends) and production with {@link baileysSocketFactory}.
 */
export interface WhatsAppSocket {
  readonly ev: {
    on<E extends keyof WhatsAppSocketEvents>(event: E, listener: (arg: WhatsAppSocketEvents[E]) => void): void;
  };
  sendMessage(jid: string, content: { text: string }): Promise<{ key: { id?: string | null } } | undefined>;
  sendPresenceUpdate(type: 'composing' | 'paused', jid: string): Promise<void>;
  requestPairingCode(phoneNumber: string): Promise<string>;
  /** Unlinks the device from the owner's phone. */
  logout(): Promise<void>;
  end(error: Error | undefined): void | Promise<void>;
}

/** What a socket is made from: the device's auth state (kept in Redis) and a logger. */
export interface WhatsAppSocketOptions {
  auth: AuthenticationState;
  logger: Logger;
}

/** Makes a connected-or-connecting socket for one chatbot's linked device. */
export type WhatsAppSocketFactory = (options: WhatsAppSocketOptions) => WhatsAppSocket;

/**
 * Real WhatsApp Web sockets (Baileys). The socket never marks the account online (so the owner's
 * phone keeps its notifications) and syncs no history: only live messages matter to the chatbot.
 * `waWebSocketUrl` points at another server (tests).
 */
export function baileysSocketFactory(settings: { waWebSocketUrl?: string } = {}): WhatsAppSocketFactory {
  // Baileys is loaded by then: the auth state a socket is made from came from redisAuthState.
  return ({ auth, logger }) => {
    const { makeWASocket, makeCacheableSignalKeyStore, Browsers } = baileys();
    return makeWASocket({
      auth: { creds: auth.creds, keys: makeCacheableSignalKeyStore(auth.keys, logger) },
      logger: baileysLogger(logger),
      browser: Browsers.ubuntu('Chrome'),
      markOnlineOnConnect: false,
      syncFullHistory: false,
      shouldSyncHistoryMessage: () => false,
      getMessage: () => Promise.resolve(undefined),
      ...(settings.waWebSocketUrl ? { waWebSocketUrl: settings.waWebSocketUrl } : {}),
    });
  };
}

/**
 * Baileys logs every connection step at `info`: its lines go out from `warn` up, unless the
 * gateway logs at `debug` or finer (or at nothing).
 */
function baileysLogger(logger: Logger): Logger {
  const quiet = logger.levelVal === logger.levels.values.info;
  return logger.child({ component: 'baileys' }, { level: quiet ? 'warn' : logger.level });
}
