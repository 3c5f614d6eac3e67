import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/**
 * Widget sessions (`embed-<uuid>`): handed out to new visitors, and recognised when a widget comes
 * back with one, whether or not its visitor has written yet.
 */
export class WidgetSessionStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly ttlSeconds: number;

  constructor(redis: RedisClient, keys: RedisKeys, ttlSeconds: number) {
    this.redis = redis;
    this.keys = keys;
    this.ttlSeconds = ttlSeconds;
  }

  async issue(chatbotId: string): Promise<string> {
    const sessionId = `embed-${randomUUID()}`;
    await this.redis.set(this.keys.widgetSession(chatbotId, sessionId), '1', { EX: this.ttlSeconds });
    return sessionId;
  }

  /** Whether this chatbot handed the session out, or has a conversation under it. */
  async known(chatbotId: string, sessionId: string): Promise<boolean> {
    const found = await this.redis.exists([
      this.keys.widgetSession(chatbotId, sessionId),
      this.keys.conversation(chatbotId, sessionId),
    ]);
    return found > 0;
  }
}
