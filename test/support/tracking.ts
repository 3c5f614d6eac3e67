import type { Test } from 'tap';
import { systemClock } from '../../src/clock.ts';
import type { RedisClient } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { ConversationStore } from '../../src/store/conversation-store.ts';
import { PendingEventStore } from '../../src/store/pending-event-store.ts';

/** Limits under which test turns always start. */
export const OPEN_LIMITS = { rateLimit: 100, rateWindowMs: 60_000, leaseMs: 30_000, historySize: 10 };

/** A conversation store on `redis` under the `sb:` prefix, with the system clock. */
export function conversationStoreOn(redis: RedisClient): ConversationStore {
  const keys = new RedisKeys('sb:');
  return new ConversationStore(redis, keys, systemClock, new PendingEventStore(redis, keys, systemClock, 60_000));
}

/**
 * Counts the AbortSignal.timeout calls made until the test ends (node-redis arms one per command when
 * it has a command timeout); returns how many so far.
 */
export function countArmedTimers(t: Test): () => number {
  const original = AbortSignal.timeout.bind(AbortSignal);
  let armed = 0;
  AbortSignal.timeout = (ms: number) => {
    armed += 1;
    return original(ms);
  };
  t.teardown(() => {
    AbortSignal.timeout = original;
  });
  return () => armed;
}
