import type { Update } from 'grammy/types';
import { telegramSessionId } from './rules.ts';

/** What a Telegram update means for the chatbot, in the project's own terms. */
export type TelegramInbound =
  | { kind: 'text'; chatId: number; sessionId: string; content: string }
  | { kind: 'start'; chatId: number; sessionId: string }
  /** A photo, a sticker, a voice note…: the chat is told that only text is read. */
  | { kind: 'unsupported'; chatId: number; sessionId: string }
  /** Nothing to answer: edits, channel posts, messages from bots, service messages, other update kinds. */
  | { kind: 'ignored' };

/** Message fields that are service notes (joins, pins, titles…), not something a person said. */
const SERVICE_FIELDS = [
  'new_chat_members',
  'left_chat_member',
  'new_chat_title',
  'new_chat_photo',
  'delete_chat_photo',
  'group_chat_created',
  'supergroup_chat_created',
  'channel_chat_created',
  'migrate_to_chat_id',
  'migrate_from_chat_id',
  'pinned_message',
  'message_auto_delete_timer_changed',
];

/** Maps one update (pure: no I/O). */
export function mapTelegramUpdate(update: Update): TelegramInbound {
  const message = update.message;
  if (!message || message.from?.is_bot) return { kind: 'ignored' };
  if (SERVICE_FIELDS.some((field) => field in message)) return { kind: 'ignored' };
  const chatId = message.chat.id;
  const sessionId = telegramSessionId(chatId);
  const text = message.text?.trim();
  if (text === undefined || text === '') return { kind: 'unsupported', chatId, sessionId };
  // `/start` or `/start payload` (deep links), also as `/start@botname` in groups.
  if (/^\/start(@\w+)?(\s|$)/.test(text)) return { kind: 'start', chatId, sessionId };
  return { kind: 'text', chatId, sessionId, content: text };
}
