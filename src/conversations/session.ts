import { ValidationError } from '../errors.ts';

/** Channels a message can arrive on. */
export type Channel = 'embed' | 'whatsapp' | 'telegram' | 'api';

const PREFIXES: Array<[string, Channel]> = [
  ['embed-', 'embed'],
  ['wa_', 'whatsapp'],
  ['tg_', 'telegram'],
  ['api-', 'api'],
];

const SESSION_ID = /^[A-Za-z0-9_.:@-]{1,128}$/;

/** DESIGN.md: 1–128 characters of `[A-Za-z0-9_.:@-]`, used as given. */
export function checkSessionId(value: unknown): string {
  if (typeof value !== 'string' || !SESSION_ID.test(value)) {
    throw new ValidationError('session_id must be 1 to 128 characters of letters, digits and _ . : @ -');
  }
  return value;
}

/**
 * The channel a session belongs to, by its id's prefix (`embed-`, `wa_`, `tg_`, `api-`): the one
 * place that reads it. Undefined for an id of the API's own choosing without a prefix.
 */
export function channelOfSession(sessionId: string): Channel | undefined {
  return PREFIXES.find(([prefix]) => sessionId.startsWith(prefix))?.[1];
}

/** The conversation's `source`: from the session prefix, else the channel the message came in on. */
export function sourceOf(sessionId: string, channel: Channel): Channel {
  return channelOfSession(sessionId) ?? channel;
}

/** SPEC's escalation `channel`, inferred from the session prefix only. */
export function escalationChannel(sessionId: string): 'web' | 'whatsapp' | 'telegram' | 'unknown' {
  const channel = channelOfSession(sessionId);
  if (channel === 'embed') return 'web';
  if (channel === 'api' || channel === undefined) return 'unknown';
  return channel;
}
