import { z } from 'zod';
import { EVENT_NAMES } from '../contract/webhook.ts';
import { PROVIDERS } from '../chatbots/chatbot.ts';
import { REFRESH_SCHEDULES, SOURCE_TYPES } from '../sources/source.ts';
import { CONNECTION_SERVICES } from '../sources/connectors/connector.ts';
import { parseTimestamp } from '../timestamp.ts';

// The export stream (`switchboard export`, read by `switchboard import`): JSON Lines, a header line
// with the format's name and version, one record a line, and an end line counting the records, so
// that a stream cut short is told from a whole one. Each record's shape is its schema below; what the
// schemas accept is what import writes. A version changes when a record changes in a way an older
// import would misread; an import refuses any version but its own.

/** The name every export's header carries. */
export const EXPORT_FORMAT = 'switchboard-export';
/** The version this Switchboard writes and reads. */
export const EXPORT_VERSION = 1;

const timestamp = z.string().refine((text) => parseTimestamp(text) !== undefined, {
  message: 'must be a timestamp like 2026-11-21T21:06:33.123456+00:00',
});
const id = z.string().regex(/^[A-Za-z0-9-]{1,64}$/, { message: 'must be an id' });
const sessionId = z.string().regex(/^[A-Za-z0-9_.:@-]{1,128}$/, { message: 'must be a session id' });

export const headerRecord = z.object({
  type: z.literal('header'),
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(EXPORT_VERSION),
  exported_at: timestamp,
  account: z.object({
    id,
    email: z.string(),
    plan: z.string(),
    created_at: timestamp,
    /** The backend-only source types enabled for the account. */
    connectors: z.array(z.string()),
  }),
});

export const chatbotRecord = z.object({
  type: z.literal('chatbot'),
  chatbot: z.object({
    id,
    name: z.string(),
    slug: z.string(),
    provider: z.enum(PROVIDERS),
    model: z.string(),
    is_active: z.boolean(),
    created_at: timestamp,
    system_prompt: z.string(),
    fallback_message: z.string(),
    /** Checked by the settings' own rules when imported. */
    settings: z.record(z.string(), z.unknown()),
  }),
});

/** A text source's text, or a file's bytes; url and connector sources carry none (they are read again). */
const content = z.discriminatedUnion('encoding', [
  z.object({ encoding: z.literal('utf8'), data: z.string() }),
  z.object({ encoding: z.literal('base64'), data: z.base64() }),
]);

export const sourceRecord = z.object({
  type: z.literal('source'),
  source: z.object({
    id,
    chatbot_id: id,
    type: z.enum(SOURCE_TYPES),
    title: z.string(),
    url: z.string(),
    reference: z.string(),
    refresh: z.enum([...REFRESH_SCHEDULES, '']),
    created_at: timestamp,
    /** The service of the connection a connector source read through; null when it had none. */
    connection_service: z.enum(CONNECTION_SERVICES).nullable(),
  }),
  content: content.nullable(),
});

const citation = z.object({ title: z.string(), url: z.string().optional() });
const message = z.object({
  role: z.enum(['user', 'assistant', 'agent']),
  content: z.string(),
  created_at: timestamp,
  citations: z.array(citation).optional(),
  feedback: z.enum(['up', 'down']).optional(),
  agent: z.object({ name: z.string(), initial: z.string() }).optional(),
  failure: z.string().optional(),
});

export const conversationRecord = z.object({
  type: z.literal('conversation'),
  conversation: z.object({
    conversation_id: id,
    chatbot_id: id,
    session_id: sessionId,
    source: z.string().min(1).max(32),
    created_at: timestamp,
    last_activity_at: timestamp,
    escalated_at: timestamp.nullable(),
    taken_over_by: z.string().nullable(),
    messages: z.array(message),
  }),
});

export const leadRecord = z.object({
  type: z.literal('lead'),
  lead: z.object({
    lead_id: id,
    chatbot_id: id,
    session_id: sessionId,
    name: z.string(),
    email: z.string(),
    phone: z.string(),
    custom_data: z.record(z.string(), z.string()),
    created_at: timestamp,
  }),
});

/** A webhook's destination and events; its secret stays behind (an import makes a new one). */
export const webhookRecord = z.object({
  type: z.literal('webhook'),
  webhook: z.object({
    id,
    chatbot_id: id,
    url: z.string(),
    events: z.array(z.enum(EVENT_NAMES)),
    active: z.boolean(),
    /** Whether it sends the Standard Webhooks headers too; absent in exports made before it existed. */
    standard_webhooks: z.boolean().default(false),
    created_at: timestamp,
  }),
});

const counts = z.object({
  chatbots: z.number().int().min(0),
  sources: z.number().int().min(0),
  conversations: z.number().int().min(0),
  leads: z.number().int().min(0),
  webhooks: z.number().int().min(0),
});

export const endRecord = z.object({ type: z.literal('end'), counts });

/** One record between the header and the end. */
export const bodyRecord = z.discriminatedUnion('type', [
  chatbotRecord,
  sourceRecord,
  conversationRecord,
  leadRecord,
  webhookRecord,
]);

export type HeaderRecord = z.infer<typeof headerRecord>;
export type ChatbotRecord = z.infer<typeof chatbotRecord>;
export type SourceRecord = z.infer<typeof sourceRecord>;
export type ConversationExport = z.infer<typeof conversationRecord>;
export type LeadRecord = z.infer<typeof leadRecord>;
export type WebhookRecord = z.infer<typeof webhookRecord>;
export type BodyRecord = z.infer<typeof bodyRecord>;
export type EndRecord = z.infer<typeof endRecord>;
/** How many records of each kind a stream holds (its end line). */
export type ExportCounts = z.infer<typeof counts>;
