// Canned replies: the domain rules their store and the management API share. A reply's text follows
// the message rule (src/conversations/message-text.ts), since an agent sends it as a message.
import { checkMessageText } from '../conversations/message-text.ts';
import { ValidationError } from '../errors.ts';

export type { CannedReply } from '../contract/canned-reply.ts';

/** Canned replies one owner may keep. */
export const MAX_CANNED_REPLIES = 200;

/** The longest shortcut. */
export const MAX_SHORTCUT_CHARS = 32;

const SHORTCUT = new RegExp(`^[a-z0-9_-]{1,${MAX_SHORTCUT_CHARS}}$`);

/** The `detail` of a shortcut that breaks the rule. */
export const SHORTCUT_RULE = `shortcut must be 1 to ${MAX_SHORTCUT_CHARS} characters of a-z, 0-9, - and _.`;

/**
 * A canned reply's shortcut as stored: 1 to 32 characters of a-z, 0-9, `-` and `_`, trimmed; one
 * leading `/` (as an agent types it) is dropped. Otherwise a ValidationError.
 */
export function checkShortcut(value: unknown): string {
  if (value === undefined || value === null) throw new ValidationError('shortcut is required.');
  if (typeof value !== 'string') throw new ValidationError('shortcut must be a string.');
  const trimmed = value.trim();
  const shortcut = trimmed.startsWith('/') ? trimmed.slice(1) : trimmed;
  if (!SHORTCUT.test(shortcut)) throw new ValidationError(SHORTCUT_RULE);
  return shortcut;
}

/**
 * A canned reply's text: the message rule (non-empty after trimming, at most 4,000 characters). A lone
 * surrogate becomes U+FFFD: the store's scripts read the record with Lua's cjson, which refuses one.
 */
export function checkCannedText(value: unknown): string {
  return checkMessageText(value, 'text').toWellFormed();
}
