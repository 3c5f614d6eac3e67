/**
 * Who holds a conversation that the owner answered from the linked phone: the AI stays silent in it
 * until the conversation is released (`conversation release`, the dashboard).
 */
export const PHONE_OWNER_HOLDER = 'owner';

/** How long a QR code or pairing code may wait for the owner before linking gives up. */
export const LINK_TIMEOUT_MS = 180_000;

/** Reconnect delays after a dropped connection: doubling from the first, capped at the last. */
export const RECONNECT_FIRST_MS = 1000;
export const RECONNECT_MAX_MS = 60_000;

/**
 * How long a message for a chat (an AI reply, an agent's reply, a notice) waits for the socket when it
 * is reconnecting in this process; after that it is not sent (it stays in the transcript).
 */
export const SEND_WAIT_MS = 60_000;

/** A phone number for a pairing code: digits only, with the country code (7 to 15 digits, E.164). */
const PAIRING_PHONE = /^\d{7,15}$/;

/** The conversation of a WhatsApp chat: `wa_` and the chat's JID, e.g. `wa_4915112345678@s.whatsapp.net`. */
export function whatsappSessionId(jid: string): string {
  return `wa_${jid}`;
}

/** The chat a `wa_` session talks to, or undefined for any other session. */
export function whatsappJid(sessionId: string): string | undefined {
  const match = /^wa_(\d{1,20}@(s\.whatsapp\.net|lid))$/.exec(sessionId);
  return match ? match[1] : undefined;
}

/** A phone number as the owner may type it (`+49 151 1234-5678`), as digits; undefined if it is not one. */
export function pairingPhone(input: string): string | undefined {
  const digits = input.replace(/[\s()+.-]/g, '');
  return PAIRING_PHONE.test(digits) ? digits : undefined;
}
