import { z } from 'zod';
import type { DeliveryStatus } from '../../../contract/conversation.ts';
import { cloudSessionId } from './config.ts';
import type { GraphErrorBody } from './graph-errors.ts';

/** What a Cloud API webhook means for the chatbot, in the project's own terms. */
export type CloudInbound =
  /** A visitor wrote text (or tapped a button, whose label is the text): it goes to the conversation actor. */
  | { kind: 'text'; messageId: string; waId: string; sessionId: string; content: string; sentAtMs?: number }
  /**
   * A photo, a voice note, a location, a reaction…: stored as a placeholder (`[image]`), and the chat
   * is told that only text is read.
   */
  | { kind: 'unsupported'; messageId: string; waId: string; sessionId: string; placeholder: string; sentAtMs?: number }
  /** How far a message the chatbot sent got. */
  | {
      kind: 'status';
      wamid: string;
      status: Exclude<DeliveryStatus, 'accepted'>;
      atMs?: number;
      error?: GraphErrorBody;
    }
  /** Meta reports a problem that concerns no one message (logged). */
  | { kind: 'error'; error: GraphErrorBody };

const errorBody = z.looseObject({
  code: z.number().optional(),
  title: z.string().optional(),
  message: z.string().optional(),
  error_data: z.looseObject({ details: z.string().optional() }).optional(),
});

const message = z.looseObject({
  from: z.string().optional(),
  id: z.string().min(1),
  timestamp: z.string().optional(),
  type: z.string(),
  text: z.looseObject({ body: z.string() }).optional(),
  button: z.looseObject({ text: z.string().optional() }).optional(),
  interactive: z
    .looseObject({
      button_reply: z.looseObject({ title: z.string().optional() }).optional(),
      list_reply: z.looseObject({ title: z.string().optional() }).optional(),
    })
    .optional(),
  reaction: z.looseObject({ emoji: z.string().optional() }).optional(),
});

const status = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  timestamp: z.string().optional(),
  errors: z.array(errorBody).optional(),
});

const value = z.looseObject({
  metadata: z.looseObject({ phone_number_id: z.string() }).optional(),
  messages: z.array(z.unknown()).optional(),
  statuses: z.array(z.unknown()).optional(),
  errors: z.array(z.unknown()).optional(),
});

const payload = z.looseObject({
  object: z.string().optional(),
  entry: z
    .array(z.looseObject({ changes: z.array(z.looseObject({ field: z.string().optional(), value: z.unknown() })) }))
    .optional(),
});

/** A WhatsApp id: the number's digits. Messages from senders without one (a username only) cannot be answered. */
const WA_ID = /^\d{5,20}$/;

/** Message kinds that say nothing to answer: a number change, a first-contact request, a deleted message. */
const SILENT_TYPES = new Set(['system', 'request_welcome', 'ephemeral']);

const STATUSES = new Set(['sent', 'delivered', 'read', 'failed']);

/**
 * Maps a webhook's JSON body (pure: no I/O). Only the `messages` field of the chatbot's own phone
 * number counts (an app serving several numbers may post them all to one URL); entries of another
 * shape are skipped one by one, never the whole delivery.
 */
export function mapCloudWebhook(body: unknown, phoneNumberId: string): CloudInbound[] {
  const parsed = payload.safeParse(body);
  if (!parsed.success) return [];
  const events: CloudInbound[] = [];
  for (const entry of parsed.data.entry ?? []) {
    for (const change of entry.changes) {
      const read = value.safeParse(change.value);
      if (change.field !== 'messages' || !read.success) continue;
      if (read.data.metadata?.phone_number_id !== phoneNumberId) continue;
      for (const raw of read.data.messages ?? []) events.push(...mapMessage(raw));
      for (const raw of read.data.statuses ?? []) events.push(...mapStatus(raw));
      for (const raw of read.data.errors ?? []) {
        const error = errorBody.safeParse(raw);
        if (error.success) events.push({ kind: 'error', error: error.data });
      }
    }
  }
  return events;
}

function mapMessage(raw: unknown): CloudInbound[] {
  const parsed = message.safeParse(raw);
  if (!parsed.success || !parsed.data.from || !WA_ID.test(parsed.data.from)) return [];
  const m = parsed.data;
  if (SILENT_TYPES.has(m.type)) return [];
  if (m.type === 'reaction' && !m.reaction?.emoji) return []; // a reaction taken back
  const base = { messageId: m.id, waId: m.from!, sessionId: cloudSessionId(m.from!), ...sentAt(m.timestamp) };
  const text = textOf(m)?.trim();
  if (text) return [{ kind: 'text', ...base, content: text }];
  return [{ kind: 'unsupported', ...base, placeholder: placeholderOf(m, raw) }];
}

/** The text a visitor sent: a text message's body, or the label of a button or list entry they tapped. */
function textOf(m: z.infer<typeof message>): string | undefined {
  if (m.type === 'text') return m.text?.body;
  if (m.type === 'button') return m.button?.text;
  if (m.type === 'interactive') return m.interactive?.button_reply?.title ?? m.interactive?.list_reply?.title;
  return undefined;
}

/** What the transcript keeps of a message that is not text: its kind, and a media caption or the emoji. */
function placeholderOf(m: z.infer<typeof message>, raw: unknown): string {
  if (m.type === 'reaction') return `[reaction ${m.reaction!.emoji!}]`;
  const media = (raw as Record<string, unknown>)[m.type] as { caption?: unknown } | undefined;
  const caption = typeof media?.caption === 'string' && media.caption.trim() ? ` ${media.caption.trim()}` : '';
  const kind = m.type === 'contacts' ? 'contact card' : m.type === 'unsupported' ? 'unsupported message' : m.type;
  return `[${kind}]${caption}`;
}

function mapStatus(raw: unknown): CloudInbound[] {
  const parsed = status.safeParse(raw);
  if (!parsed.success || !STATUSES.has(parsed.data.status)) return [];
  const { id, errors } = parsed.data;
  const error = errors?.[0];
  const at = sentAt(parsed.data.timestamp).sentAtMs;
  return [
    {
      kind: 'status',
      wamid: id,
      status: parsed.data.status as Exclude<DeliveryStatus, 'accepted'>,
      ...(at === undefined ? {} : { atMs: at }),
      ...(error ? { error } : {}),
    },
  ];
}

/** Meta's timestamps are Unix seconds, as a string. */
function sentAt(timestamp: string | undefined): { sentAtMs?: number } {
  const seconds = Number(timestamp);
  return timestamp && Number.isFinite(seconds) && seconds > 0 ? { sentAtMs: seconds * 1000 } : {};
}
