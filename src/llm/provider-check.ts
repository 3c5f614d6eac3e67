import type { Clock } from '../clock.ts';
import { DEFAULT_MODELS, PROVIDERS, type Provider } from '../chatbots/chatbot.ts';
import type { ProviderStatus, ProviderTest } from '../contract/provider.ts';
import { RateLimitError, ValidationError } from '../errors.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import type { LlmProviders } from './llm-providers.ts';

/** How often one owner may test one provider: each test is a real, billed call. */
export const PROVIDER_TEST_INTERVAL_MS = 10_000;
/** The tiny completion a test asks for. */
const TEST_PROMPT = {
  system: 'You are checking a connection. Reply with the single word OK.',
  turns: [{ role: 'user' as const, content: 'Are you there?' }],
};
/** How much of a reply or an error a test result shows. */
const MAX_TEXT = 300;
const MODEL = /^[A-Za-z0-9._:/-]{1,100}$/;

/**
 * What the dashboard shows of the LLM providers: which ones this gateway can call (a key or a host
 * is configured; never the key itself), and a "Test" that makes one tiny completion with the
 * gateway's own credentials, so a missing or refused key shows before a visitor meets it.
 */
export class ProviderCheck {
  private readonly providers: LlmProviders;
  private readonly callable: Record<Provider, boolean>;
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;

  constructor(deps: {
    providers: LlmProviders;
    callable: Record<Provider, boolean>;
    redis: RedisClient;
    keys: RedisKeys;
    clock: Pick<Clock, 'nowMicros'>;
  }) {
    this.providers = deps.providers;
    this.callable = deps.callable;
    this.redis = deps.redis;
    this.keys = deps.keys;
    this.clock = deps.clock;
  }

  statuses(): ProviderStatus[] {
    return PROVIDERS.map((provider) => ({
      provider,
      configured: this.callable[provider],
      default_model: DEFAULT_MODELS[provider],
    }));
  }

  /**
   * One tiny completion through `provider` with `model` (its default when left out). A failure is a
   * result, not an error: the dashboard shows the provider's own message. At most one test per owner
   * and provider every PROVIDER_TEST_INTERVAL_MS, across gateways.
   */
  async test(userId: string, provider: unknown, rawModel: unknown): Promise<ProviderTest> {
    if (typeof provider !== 'string' || !(PROVIDERS as readonly string[]).includes(provider)) {
      throw new ValidationError(`provider must be one of: ${PROVIDERS.join(', ')}.`);
    }
    const known = provider as Provider;
    if (rawModel !== undefined && (typeof rawModel !== 'string' || !MODEL.test(rawModel))) {
      throw new ValidationError('model must be 1 to 100 letters, digits and . _ : / -.');
    }
    const model = rawModel ?? DEFAULT_MODELS[known];
    const allowed = await this.redis.set(this.keys.providerTest(userId, known), '1', {
      condition: 'NX',
      PX: PROVIDER_TEST_INTERVAL_MS,
    });
    if (allowed === null) throw new RateLimitError('Wait a few seconds before testing this provider again.');
    const started = this.clock.nowMicros();
    const elapsed = () => Math.round((this.clock.nowMicros() - started) / 1000);
    try {
      const reply = await this.providers[known].generate(model, TEST_PROMPT);
      return { provider: known, model, ok: true, latency_ms: elapsed(), reply: reply.text.trim().slice(0, MAX_TEXT) };
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return { provider: known, model, ok: false, latency_ms: elapsed(), detail: detail.slice(0, MAX_TEXT) };
    }
  }
}
