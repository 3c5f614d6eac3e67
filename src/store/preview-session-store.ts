import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

/**
 * The widget sessions of the dashboard's preview: one per chatbot at a time, a widget session like
 * any other (`embed-<uuid>`: its conversation is real, counts toward the quota and reaches webhooks),
 * remembered so the dashboard can mark its conversations as the owner's own preview.
 */
export class PreviewSessionStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly ttlSeconds: number;

  /** `ttlSeconds`: how long the widget channel recognises a session it has no conversation for yet. */
  constructor(redis: RedisClient, keys: RedisKeys, ttlSeconds: number) {
    this.redis = redis;
    this.keys = keys;
    this.ttlSeconds = ttlSeconds;
  }

  /**
   * The chatbot's preview session (a new one when it has none yet, or with `restart`), made known to
   * the widget channel for the next `ttlSeconds` as a handed-out session is, so the preview's widget
   * resumes it instead of being handed another.
   */
  async open(chatbotId: string, restart = false): Promise<string> {
    const current = this.keys.previewSession(chatbotId);
    const fresh = `embed-${randomUUID()}`;
    let sessionId = fresh;
    if (restart) await this.redis.set(current, fresh);
    // Two tabs opening the first preview at once share one session: the second finds the first's.
    else sessionId = (await this.redis.set(current, fresh, { NX: true, GET: true })) ?? fresh;
    await this.redis
      .multi()
      .sAdd(this.keys.previewSessions(chatbotId), sessionId)
      .set(this.keys.widgetSession(chatbotId, sessionId), '1', { EX: this.ttlSeconds })
      .exec();
    return sessionId;
  }

  /** Which of the given sessions of a chatbot are its previews. */
  async previews(chatbotId: string, sessionIds: readonly string[]): Promise<Set<string>> {
    if (sessionIds.length === 0) return new Set();
    const found = await this.redis.smIsMember(this.keys.previewSessions(chatbotId), [...sessionIds]);
    return new Set(sessionIds.filter((_, i) => found[i] === 1));
  }
}
