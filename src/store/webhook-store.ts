import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { EventName } from '../contract/webhook.ts';
import { NotFoundError } from '../errors.ts';
import { systemEgress, type Egress } from '../net/ssrf-guard.ts';
import { formatTimestamp } from '../timestamp.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import {
  checkWebhookEvents,
  checkWebhookUrl,
  generateWebhookSecret,
  withSecret,
  type Webhook,
  type WebhookWithSecret,
} from '../webhooks/webhook.ts';
import { standardWebhooksSecret } from '../webhooks/standard-webhooks.ts';

/** Webhook configuration per chatbot: URL (validated, public unless allowed), events, secret, active. */
export class WebhookStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  private readonly allowPrivate: boolean;
  private readonly egress: Egress;

  constructor(
    redis: RedisClient,
    keys: RedisKeys,
    clock: Pick<Clock, 'nowMicros'>,
    allowPrivate: boolean,
    egress = systemEgress,
  ) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.allowPrivate = allowPrivate;
    this.egress = egress;
  }

  /** A new webhook, active; `standardWebhooks` opts in to the Standard Webhooks headers (off by default). */
  async create(
    chatbotId: string,
    rawUrl: string,
    rawEvents: string[],
    options: { standardWebhooks?: boolean } = {},
  ): Promise<WebhookWithSecret> {
    const url = await checkWebhookUrl(rawUrl, this.allowPrivate, this.egress);
    const events = checkWebhookEvents(rawEvents);
    const id = randomUUID();
    const row = {
      id,
      chatbot_id: chatbotId,
      url,
      events: events.join(','),
      secret: generateWebhookSecret(),
      // A record written before the field existed has none: off.
      standard_webhooks: options.standardWebhooks ? '1' : '0',
      active: '1',
      created_at: String(this.clock.nowMicros()),
    };
    await this.redis.set(this.keys.webhookOwner(id), chatbotId);
    await this.redis.hSet(this.keys.webhook(chatbotId, id), row);
    await this.redis.sAdd(this.keys.webhooksOf(chatbotId), id);
    return withSecret(toWebhook(row));
  }

  /** Every webhook of a chatbot, oldest first. */
  async listForChatbot(chatbotId: string): Promise<Webhook[]> {
    const ids = await this.redis.sMembers(this.keys.webhooksOf(chatbotId));
    const rows = await Promise.all(ids.map((id) => this.redis.hGetAll(this.keys.webhook(chatbotId, id))));
    return rows
      .filter((row) => row.id)
      .map(toWebhook)
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /** The active webhooks of a chatbot that selected `event`. */
  async subscribers(chatbotId: string, event: EventName): Promise<Webhook[]> {
    return (await this.listForChatbot(chatbotId)).filter((hook) => delivers(hook, event));
  }

  async get(webhookId: string): Promise<Webhook> {
    const chatbotId = await this.redis.get(this.keys.webhookOwner(webhookId));
    const row = chatbotId ? await this.redis.hGetAll(this.keys.webhook(chatbotId, webhookId)) : {};
    if (!row.id) throw new NotFoundError('Webhook not found.');
    return toWebhook(row);
  }

  async delete(webhookId: string): Promise<void> {
    const hook = await this.get(webhookId);
    await this.redis.sRem(this.keys.webhooksOf(hook.chatbot_id), webhookId);
    await this.redis.del(this.keys.webhook(hook.chatbot_id, webhookId));
    await this.redis.del(this.keys.webhookOwner(webhookId));
  }

  async rotateSecret(webhookId: string): Promise<WebhookWithSecret> {
    const hook = await this.get(webhookId);
    const secret = generateWebhookSecret();
    await this.redis.hSet(this.keys.webhook(hook.chatbot_id, webhookId), 'secret', secret);
    return withSecret(signedWith(hook, secret, hook.standard_webhooks));
  }

  /** Turns the Standard Webhooks headers on or off; SPEC's signature is sent either way. */
  async setStandardWebhooks(webhookId: string, on: boolean): Promise<Webhook> {
    const hook = await this.get(webhookId);
    await this.redis.hSet(this.keys.webhook(hook.chatbot_id, webhookId), 'standard_webhooks', on ? '1' : '0');
    return signedWith(hook, hook.secret, on);
  }

  async setActive(webhookId: string, active: boolean): Promise<Webhook> {
    const hook = await this.get(webhookId);
    await this.redis.hSet(this.keys.webhook(hook.chatbot_id, webhookId), 'active', active ? '1' : '0');
    return { ...hook, active };
  }
}

function toWebhook(row: Record<string, string>): Webhook {
  const hook = {
    id: row.id!,
    chatbot_id: row.chatbot_id!,
    url: row.url!,
    events: row.events!.split(',') as EventName[],
    active: row.active === '1',
    created_at: formatTimestamp(Number(row.created_at)),
  };
  return signedWith(hook, row.secret!, row.standard_webhooks === '1');
}

/** The webhook with this secret and Standard Webhooks setting (and the secret's Standard Webhooks form). */
function signedWith(
  hook: Omit<Webhook, 'secret' | 'standard_webhooks' | 'standard_webhooks_secret'>,
  secret: string,
  standardWebhooks: boolean,
): Webhook {
  const { id, chatbot_id, url, events, active, created_at } = hook;
  return {
    id,
    chatbot_id,
    url,
    events,
    secret,
    standard_webhooks: standardWebhooks,
    standard_webhooks_secret: standardWebhooks ? standardWebhooksSecret(secret) : null,
    active,
    created_at,
  };
}

/** Whether the webhook is delivered `event`: it is active and selected it. */
export function delivers(hook: Webhook, event: EventName): boolean {
  return hook.active && hook.events.includes(event);
}
