import { minutesOf, NO_OFFICE_HOURS, noOfficeHours } from './office-hours.ts';
import { z } from 'zod';
import type { ChatbotSettings, SettingsPatchBody, Weekday } from '../contract/chatbot-settings.ts';
import { ValidationError } from '../errors.ts';

// The settings' shape is the contract's (the dashboard and the widget read it); this module checks
// changes to it and reads it from Redis.
export type { ChatbotSettings, EscalationRules } from '../contract/chatbot-settings.ts';

/**
 * The greeting a new chatbot's widget opens with. It is the setting's default, not the widget's
 * fallback: the owner sees it in the settings and can change it, or clear it for no greeting.
 */
export const DEFAULT_WELCOME_MESSAGE = 'Hi! How can I help you today?';

/**
 * A fresh copy of the defaults, which its caller may change. Built afresh rather than cloned: every
 * chatbot read parses its settings, and structuredClone was 6% of a busy gateway's CPU.
 */
function defaultSettings(): ChatbotSettings {
  return {
    allowed_origins: [],
    lead_fields: [],
    ctas: [],
    escalation: { smart_intent: true, keywords: [], fallback_streak: 0 },
    widget: { title: '', color: '#2563eb', welcome_message: DEFAULT_WELCOME_MESSAGE },
    retrieval: { query_rewrite: false },
    answers: { citations: true, api_citations: false, sources_only: false },
    hours: noOfficeHours(),
    retention: { conversations_days: null, leads_days: null },
  };
}

export const DEFAULT_SETTINGS: ChatbotSettings = defaultSettings();

/** The longest retention a chatbot may set, in days (ten years). */
export const MAX_RETENTION_DAYS = 3650;

const origin = z.string().transform((value, ctx) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not an origin like https://example.com` });
    return z.NEVER;
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.origin !== value.replace(/\/$/, '')) {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not an origin like https://example.com` });
    return z.NEVER;
  }
  return url.origin;
});

const leadField = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,39}$/, { message: 'must be 1-40 characters of a-z, 0-9 and _, starting with a letter' })
    .refine((name) => !['name', 'email', 'phone'].includes(name), { message: 'name, email and phone are built in' }),
  label: z.string().trim().min(1).max(80),
  required: z.boolean().default(false),
});

const httpUrl = z.url({ protocol: /^https?$/ }).max(2000);

const cta = z
  .strictObject({
    id: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, { message: 'must be 1-40 characters of A-Z, a-z, 0-9, _ and -' }),
    label: z.string().trim().min(1).max(60),
    action: z.enum(['link', 'escalate', 'message']),
    url: httpUrl.optional(),
    message: z.string().trim().min(1).max(4000).optional(),
  })
  .refine((value) => value.action !== 'link' || value.url !== undefined, { message: 'a link needs a url' })
  .refine((value) => value.action !== 'message' || value.message !== undefined, {
    message: 'a message action needs a message',
  });

const clock = z.string().regex(/^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/, { message: 'must be a time like 09:00' });
const interval = z
  .tuple([clock, clock])
  .refine(([from, to]) => minutesOf(from) < minutesOf(to), { message: 'must end after it starts' });
const day = z
  .array(interval)
  .max(6)
  .refine(
    (intervals) =>
      [...intervals]
        .sort((a, b) => minutesOf(a[0]) - minutesOf(b[0]))
        .every((current, i, sorted) => i === 0 || minutesOf(sorted[i - 1]![1]) <= minutesOf(current[0])),
    { message: 'intervals must not overlap' },
  );
const timeZone = z.string().refine(
  (zone) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      return zone.length <= 64;
    } catch {
      return false;
    }
  },
  { message: 'must be an IANA time zone like Europe/Berlin' },
);
const officeHours = z.strictObject({
  enabled: z.boolean({ error: 'must be true or false' }).default(false),
  time_zone: timeZone.default('UTC'),
  weekly: z
    .strictObject({
      mon: day.default([]),
      tue: day.default([]),
      wed: day.default([]),
      thu: day.default([]),
      fri: day.default([]),
      sat: day.default([]),
      sun: day.default([]),
    } satisfies Record<Weekday, z.ZodType>)
    .default(NO_OFFICE_HOURS.weekly),
  holidays: z
    .array(z.iso.date({ message: 'must be a date like 2026-12-25' }))
    .max(100)
    .default([]),
  contact_after_minutes: z.number().int().min(0).max(1440).default(0),
});

const RETENTION_DAYS = `must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or null (keep for ever)`;
const retentionDays = z
  .number({ error: RETENTION_DAYS })
  .int({ message: RETENTION_DAYS })
  .min(1, { message: RETENTION_DAYS })
  .max(MAX_RETENTION_DAYS, { message: RETENTION_DAYS })
  .nullable();

// Every setting of the contract's patch, and no other, has its schema here.
const settingsPatch = z.strictObject({
  allowed_origins: z.array(origin).max(50).optional(),
  lead_fields: z
    .array(leadField)
    .max(20)
    .refine(
      unique((field: { name: string }) => field.name),
      { message: 'field names must be unique' },
    )
    .optional(),
  ctas: z
    .array(cta)
    .max(10)
    .refine(
      unique((button: { id: string }) => button.id),
      { message: 'ids must be unique' },
    )
    .optional(),
  escalation: z
    .strictObject({
      smart_intent: z.boolean().optional(),
      keywords: z.array(z.string().trim().min(1).max(100)).max(100).optional(),
      fallback_streak: z.number().int().min(0).max(100).optional(),
    })
    .optional(),
  widget: z
    .strictObject({
      title: z.string().trim().max(80).optional(),
      color: z
        .string()
        .regex(/^#[0-9a-fA-F]{6}$/, { message: 'must be a hex colour like #2563eb' })
        .optional(),
      welcome_message: z.string().trim().max(1000).optional(),
    })
    .optional(),
  retrieval: z
    .strictObject({
      query_rewrite: z.boolean({ error: 'must be true or false' }).optional(),
    })
    .optional(),
  answers: z
    .strictObject({
      citations: z.boolean({ error: 'must be true or false' }).optional(),
      api_citations: z.boolean({ error: 'must be true or false' }).optional(),
      sources_only: z.boolean({ error: 'must be true or false' }).optional(),
    })
    .optional(),
  hours: officeHours.optional(),
  retention: z
    .strictObject({
      conversations_days: retentionDays.optional(),
      leads_days: retentionDays.optional(),
    })
    .optional(),
} satisfies Record<keyof SettingsPatchBody, z.ZodType>);

/** A change to some of the settings; what is left out stays as it was. */
export type SettingsPatch = z.input<typeof settingsPatch>;

/**
 * Applies a patch to the current settings after validating it. A bad value is a ValidationError
 * naming the setting, e.g. `ctas[0].url: a link needs a url`.
 */
export function applySettingsPatch(current: ChatbotSettings, patch: unknown): ChatbotSettings {
  const result = settingsPatch.safeParse(patch);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('');
    throw new ValidationError(`${path.replace(/^\./, '') || 'settings'}: ${issue.message}`);
  }
  const next = result.data;
  return {
    allowed_origins: next.allowed_origins ?? current.allowed_origins,
    lead_fields: next.lead_fields ?? current.lead_fields,
    ctas: (next.ctas ?? current.ctas).map(withoutUndefined),
    escalation: { ...current.escalation, ...withoutUndefined(next.escalation ?? {}) },
    widget: { ...current.widget, ...withoutUndefined(next.widget ?? {}) },
    retrieval: { ...current.retrieval, ...withoutUndefined(next.retrieval ?? {}) },
    answers: { ...current.answers, ...withoutUndefined(next.answers ?? {}) },
    hours: next.hours ?? current.hours,
    retention: { ...current.retention, ...withoutUndefined(next.retention ?? {}) },
  };
}

/** Whether the settings delete anything after a while (conversations, leads or both). */
export function retentionOn(settings: Pick<ChatbotSettings, 'retention'>): boolean {
  return settings.retention.conversations_days !== null || settings.retention.leads_days !== null;
}

/**
 * Reads stored settings; anything missing takes its default. Each call returns objects of its own
 * (nothing shared with DEFAULT_SETTINGS or another call), built once: this runs on every turn.
 */
export function parseSettings(json: string | undefined): ChatbotSettings {
  if (!json) return defaultSettings();
  const stored = JSON.parse(json) as Partial<ChatbotSettings>;
  return {
    allowed_origins: stored.allowed_origins ?? [],
    lead_fields: stored.lead_fields ?? [],
    ctas: stored.ctas ?? [],
    escalation: { ...DEFAULT_SETTINGS.escalation, keywords: [], ...stored.escalation },
    widget: { ...DEFAULT_SETTINGS.widget, ...stored.widget },
    retrieval: { ...DEFAULT_SETTINGS.retrieval, ...stored.retrieval },
    answers: { ...DEFAULT_SETTINGS.answers, ...stored.answers },
    hours: stored.hours ?? noOfficeHours(),
    retention: { ...DEFAULT_SETTINGS.retention, ...stored.retention },
  };
}

function unique<T>(keyOf: (item: T) => string) {
  return (items: T[]) => new Set(items.map(keyOf)).size === items.length;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
