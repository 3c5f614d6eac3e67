/**
 * A chatbot's Telegram and WhatsApp connections as the dashboard shows them (and the CLI prints
 * them). Part of the contract (see README.md beside this file).
 */

/** How a chatbot's Telegram bot receives updates. */
export type TelegramMode = 'webhook' | 'polling';

/** What connecting Telegram answers (and `channel telegram` prints); path and secret are null when polling. */
export interface TelegramConnectionView {
  mode: TelegramMode;
  webhook_path: string | null;
  secret_token: string | null;
}

/** A Telegram connection as the dashboard shows it: the view plus the bot's username. */
export interface TelegramStatus extends TelegramConnectionView {
  bot_username: string | null;
}

/**
 * Where a chatbot's WhatsApp link stands: `linking` (waiting for the owner to scan the QR code or
 * enter the pairing code), `linked`, or `unlinked` (logged out from the phone, refused, or the code
 * was not used in time; `reason` says which).
 */
export type WhatsAppLinkState = 'linking' | 'linked' | 'unlinked';

/** A chatbot's WhatsApp connection, as the CLI and the dashboard show it. */
export interface WhatsAppConnection {
  chatbot_id: string;
  state: WhatsAppLinkState;
  /** The number a pairing code was asked for (digits only), or null for QR linking. */
  phone: string | null;
  /** The linked account (`<number>@s.whatsapp.net`) once linked. */
  jid: string | null;
  /** While linking: the QR code's text (to render), or the pairing code to enter on the phone. */
  qr: string | null;
  pairing_code: string | null;
  /** Why the connection is unlinked. */
  reason: string | null;
  updated_at: string;
}

/** A WhatsApp connection as the dashboard shows it: the QR code also drawn, as an SVG data URL. */
export type WhatsAppStatus = WhatsAppConnection & { qr_image: string | null };

/**
 * How a chatbot reaches WhatsApp: the official Business Cloud API (Meta's Graph API and webhooks), or
 * a phone linked as a companion device (unofficial: Meta may ban numbers that automate it).
 */
export type WhatsAppTransport = 'cloud' | 'linked_device';

/**
 * A chatbot's WhatsApp Business Cloud API connection as the CLI prints it and the dashboard shows it.
 * The access token and the app secret are never shown again once entered.
 */
export interface WhatsAppCloudStatus {
  chatbot_id: string;
  transport: 'cloud';
  phone_number_id: string;
  business_account_id: string | null;
  /** The number as Meta shows it (`+1 555-0100`), and its verified business name, read when connecting. */
  display_phone_number: string | null;
  verified_name: string | null;
  /** Where Meta must send the number's webhooks (the gateway's address before it), and the verify token it must send. */
  webhook_path: string;
  /** The full webhook URL when the gateways' public address is known (PUBLIC_URL), else null. */
  webhook_url: string | null;
  verify_token: string;
  /** What a visitor who sends a photo, a voice note, a location or a reaction is told. */
  text_only_notice: string;
  connected_at: string;
}

/** `GET /dashboard/api/chatbots/{id}/channels`: the messaging channels' connections (null where there is none). */
export interface ChannelsStatus {
  telegram: TelegramStatus | null;
  /** The linked device, when WhatsApp goes through one. */
  whatsapp: WhatsAppStatus | null;
  /** The Cloud API connection, when WhatsApp goes through Meta's official API. */
  whatsapp_cloud: WhatsAppCloudStatus | null;
}

/**
 * `PUT …/channels/whatsapp-cloud`: connect (or change) the Cloud API transport, which unlinks a linked
 * device. On a change of a connected number, a left-out token or app secret keeps the stored one.
 */
export interface WhatsAppCloudConnectBody {
  phone_number_id: string;
  business_account_id?: string | null;
  token?: string;
  app_secret?: string;
  /** Empty or left out: the default notice. */
  text_only_notice?: string;
}

/** `PUT …/channels/telegram`: the bot's token, and how it receives updates (default webhook). */
export interface TelegramConnectBody {
  token: string;
  mode?: TelegramMode;
}

/** `PUT …/channels/whatsapp`: link by pairing code for this number, or by QR code when left out. */
export interface WhatsAppLinkBody {
  phone?: string;
}

/** What disconnecting a channel answers. */
export interface ChannelDisconnected {
  chatbot_id: string;
  disconnected: true;
}
