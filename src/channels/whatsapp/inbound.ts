import type { BaileysEventMap, WAMessage } from '@whiskeysockets/baileys';
import { baileys } from './baileys.ts';
import { whatsappSessionId } from './rules.ts';

/** What a WhatsApp message means for the chatbot, in the project's own terms. */
export type WhatsAppInbound =
  /** A visitor wrote text: it goes to the conversation actor. */
  | { kind: 'text'; messageId: string; jid: string; sessionId: string; content: string }
  /** The owner answered from the linked phone: the conversation is taken over. */
  | { kind: 'owner'; messageId: string; jid: string; sessionId: string; content: string }
  /** A photo, a voice note, a sticker…: the chat is told that only text is read. */
  | { kind: 'unsupported'; messageId: string; jid: string; sessionId: string }
  /** Nothing to answer: groups, status broadcasts, newsletters, history, receipts, reactions, edits. */
  | { kind: 'ignored' };

/** Message kinds that are protocol traffic or annotations, not something a person sent. */
const SILENT_KINDS = new Set<string>([
  'protocolMessage',
  'reactionMessage',
  'senderKeyDistributionMessage',
  'messageContextInfo',
  'pollUpdateMessage',
  'keepInChatMessage',
  'encReactionMessage',
  'pinInChatMessage',
  'editedMessage',
]);

/** Maps one `messages.upsert` event (pure: no I/O). Only live (`notify`) messages count. */
export function mapWhatsAppUpsert(upsert: BaileysEventMap['messages.upsert']): WhatsAppInbound[] {
  if (upsert.type !== 'notify') return upsert.messages.map(() => ({ kind: 'ignored' }));
  return upsert.messages.map(mapWhatsAppMessage);
}

/** Maps one live message (Baileys is loaded: the message came from a socket). */
export function mapWhatsAppMessage(message: WAMessage): WhatsAppInbound {
  const { normalizeMessageContent, getContentType } = baileys();
  const { key } = message;
  const jid = chatJid(key.remoteJid, key.remoteJidAlt);
  if (!jid || !key.id || message.messageStubType || !message.message) return { kind: 'ignored' };
  const content = normalizeMessageContent(message.message);
  const type = getContentType(content);
  if (!type || SILENT_KINDS.has(type)) return { kind: 'ignored' };
  const text = (type === 'conversation' ? content?.conversation : content?.extendedTextMessage?.text)?.trim();
  const base = { messageId: key.id, jid, sessionId: whatsappSessionId(jid) };
  if (key.fromMe) return text ? { kind: 'owner', ...base, content: text } : { kind: 'ignored' };
  if (!text) return { kind: 'unsupported', ...base };
  return { kind: 'text', ...base, content: text };
}

/**
 * The one-to-one chat a message belongs to, by the contact's phone-number JID where WhatsApp gives
 * one (a chat addressed by its LID carries the number as the alternative), so that a contact keeps
 * one conversation; undefined for groups, broadcasts, status updates and newsletters.
 */
function chatJid(remoteJid: string | null | undefined, alternative: string | null | undefined): string | undefined {
  if (!remoteJid) return undefined;
  const { isPnUser, isLidUser, jidNormalizedUser } = baileys();
  if (isPnUser(remoteJid)) return jidNormalizedUser(remoteJid);
  if (!isLidUser(remoteJid)) return undefined;
  return jidNormalizedUser(alternative && isPnUser(alternative) ? alternative : remoteJid);
}
