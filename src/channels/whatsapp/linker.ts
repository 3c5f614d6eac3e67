import type { WhatsAppStatus } from '../../contract/messaging-channels.ts';
import { ValidationError } from '../../errors.ts';
import type { SignalBus } from '../../redis/signal-bus.ts';
import type { WhatsAppConnection, WhatsAppStore } from './whatsapp-store.ts';
import { pairingPhone } from './rules.ts';

/**
 * Linking a chatbot's WhatsApp account, for the CLI and the dashboard alike: a link request is
 * written to Redis and signalled, and the gateway that takes the chatbot's socket lease runs Baileys
 * and writes each QR code (or the pairing code) back to the connection record.
 */
export class WhatsAppLinker {
  private readonly store: WhatsAppStore;
  private readonly signals: SignalBus;
  /** The other transport: linking a device ends a Cloud API connection (one transport per chatbot). */
  private readonly cloud: { disconnect(chatbotId: string): Promise<boolean> };

  constructor(deps: {
    store: WhatsAppStore;
    signals: SignalBus;
    cloud: { disconnect(chatbotId: string): Promise<boolean> };
  }) {
    this.store = deps.store;
    this.signals = deps.signals;
    this.cloud = deps.cloud;
  }

  /**
   * Starts linking by QR code, or by pairing code when `phone` is given; a linked chatbot is left
   * as it is (disconnect it first to link another number). A Cloud API connection is ended.
   */
  async link(chatbotId: string, phone?: unknown): Promise<WhatsAppConnection> {
    let digits: string | null = null;
    if (phone !== undefined && phone !== null && phone !== '') {
      digits = (typeof phone === 'string' ? pairingPhone(phone) : undefined) ?? null;
      if (digits === null) {
        throw new ValidationError('phone must be the number with its country code, like +49 151 12345678.');
      }
    }
    const current = await this.store.find(chatbotId);
    if (current?.state === 'linked') return current;
    await this.cloud.disconnect(chatbotId);
    const connection = await this.store.requestLink(chatbotId, digits);
    await this.signals.publish({ kind: 'channel', chatbot_id: chatbotId, channel: 'whatsapp' });
    return connection;
  }

  /** Gives up linking: the connection is unlinked with the reason, and its socket closed. */
  async abandon(chatbotId: string, reason: string): Promise<void> {
    await this.store.unlinked(chatbotId, reason);
    await this.signals.publish({ kind: 'channel', chatbot_id: chatbotId, channel: 'whatsapp' });
  }

  /** Unlinks the device (the gateway holding the socket logs it out) and forgets the connection. */
  async disconnect(chatbotId: string): Promise<boolean> {
    if (!(await this.store.disconnect(chatbotId))) return false;
    await this.signals.publish({ kind: 'channel', chatbot_id: chatbotId, channel: 'whatsapp' });
    return true;
  }

  /** The connection with its QR code drawn, or null when the chatbot has none. */
  async status(chatbotId: string): Promise<WhatsAppStatus | null> {
    const connection = await this.store.find(chatbotId);
    if (!connection) return null;
    // Imported on first use: the CLI's other commands never draw one.
    const svg = connection.qr
      ? await (await import('qrcode')).default.toString(connection.qr, { type: 'svg', margin: 2 })
      : null;
    const qr_image = svg === null ? null : `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
    return { ...connection, qr_image };
  }
}
