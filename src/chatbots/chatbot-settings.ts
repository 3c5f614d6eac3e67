import { z } from 'zod';
import type { ChatbotSettings, SettingsPatchBody } from '../contract/chatbot-settings.ts';
import { ValidationError } from '../errors.ts';

// The settings' shape is the contract's (the dashboard and the widget read it); this module checks
// changes to it and reads it from Redis.
export type { ChatbotSettings, EscalationRules } from '../contract/chatbot-settings.ts';

export const DEFAULT_SETTINGS: ChatbotSettings = {
  allowed_origins: [],
  lead_fields: [],
  ctas: [],
  escalation: { smart_intent: true, keywords: [], fallback_streak: 0 },
  widget: { title: '', color: '#2563eb', welcome_message: '' },
  retrieval: { query_rewrite: false },
};

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
  };
}

/** Reads stored settings; anything missing takes its default. */
export function parseSettings(json: string | undefined): ChatbotSettings {
  if (!json) return structuredClone(DEFAULT_SETTINGS);
  const stored = JSON.parse(json) as Partial<ChatbotSettings>;
  return {
    ...structuredClone(DEFAULT_SETTINGS),
    ...stored,
    escalation: { ...DEFAULT_SETTINGS.escalation, ...stored.escalation },
    widget: { ...DEFAULT_SETTINGS.widget, ...stored.widget },
    retrieval: { ...DEFAULT_SETTINGS.retrieval, ...stored.retrieval },
  };
}

function unique<T>(keyOf: (item: T) => string) {
  return (items: T[]) => new Set(items.map(keyOf)).size === items.length;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
