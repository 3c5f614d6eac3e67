import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { EVENT_NAMES, type EventName, type Webhook, type WebhookWithSecret } from '../contract/webhook.ts';
import { ValidationError } from '../errors.ts';
import { assertPublicDestination, NOT_PUBLIC_URL, type Egress } from '../net/ssrf-guard.ts';

// The webhook: the domain model its store persists, and the rules of its URL and events.

// A webhook goes to the dashboard as it is stored, secret included: the owner copies it into the
// receiver. Creating one and rotating its secret answer `WebhookWithSecret`.
export type { Webhook, WebhookWithSecret } from '../contract/webhook.ts';

/** What `webhook list` prints: never the secret, in either form. */
export type WebhookView = Omit<Webhook, 'secret' | 'standard_webhooks_secret'>;

/** `webhook list`'s view: everything but the secret. */
export function webhookView(hook: Webhook): WebhookView {
  const { id, chatbot_id, url, events, standard_webhooks, active, created_at } = hook;
  return { id, chatbot_id, url, events, standard_webhooks, active, created_at };
}

/** What creating a webhook, rotating its secret and changing its signing answer. */
export function withSecret(hook: Webhook): WebhookWithSecret {
  const { id, url, events, secret, standard_webhooks, standard_webhooks_secret } = hook;
  return { id, url, events, secret, standard_webhooks, standard_webhooks_secret };
}

/** `whsec_` + 32 random bytes, base64url. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

const NOT_HTTP_URL = 'url must be an absolute http or https URL.';

// Each refusal stops the checks after it, so the first issue is the one a caller is told, in this order.
const webhookUrl = z
  .string()
  .refine((raw) => ['http:', 'https:'].includes(URL.parse(raw)?.protocol ?? ''), {
    message: NOT_HTTP_URL,
    abort: true,
  })
  .refine(
    (raw) => {
      const url = URL.parse(raw);
      return !url?.username && !url?.password;
    },
    { message: 'url must not contain credentials.', abort: true },
  )
  .max(2048, { message: 'url must be at most 2048 characters.' })
  .transform((raw) => new URL(raw));

const EVENT_LIST = EVENT_NAMES.join(', ');

// The names are trimmed and each kept once; the first unknown one is named.
const webhookEvents = z
  .array(z.string())
  .transform((raw) => [...new Set(raw.map((event) => event.trim()).filter(Boolean))])
  .refine((events) => events.length > 0, { message: `events must name at least one of: ${EVENT_LIST}.` })
  .pipe(
    z.array(
      z.enum(EVENT_NAMES, { error: (issue) => `Unknown event ${String(issue.input)}; events are: ${EVENT_LIST}.` }),
    ),
  );

/**
 * A webhook's destination, checked before it is stored: an absolute http or https URL without
 * credentials, at most 2048 characters, whose host is a public address unless `allowPrivate` (the
 * SSRF guard's checks, so a webhook cannot be aimed at the gateway's own network). Returns it
 * normalized; a ValidationError otherwise.
 */
export async function checkWebhookUrl(rawUrl: string, allowPrivate: boolean, egress: Egress): Promise<string> {
  const url = parsed(webhookUrl, rawUrl);
  try {
    await assertPublicDestination(url, allowPrivate, egress);
  } catch (error) {
    throw new ValidationError(NOT_PUBLIC_URL, { cause: error });
  }
  return url.toString();
}

/**
 * The events a webhook selects: at least one, each one of SPEC's or of those beyond it, each once (a
 * ValidationError otherwise).
 */
export function checkWebhookEvents(raw: string[]): EventName[] {
  return parsed(webhookEvents, raw);
}

function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(result.error.issues[0]!.message);
  return result.data;
}
