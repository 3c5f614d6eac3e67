import type { Clock } from '../clock.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { ExpiringSet } from '../redis/expiring-set.ts';

/**
 * Which owners have a human agent online, across every gateway process: each agent connection
 * announces itself with a time-to-live and renews it while open, so a process that dies stops
 * counting on its own.
 */
export class AgentPresence {
  private readonly members: ExpiringSet;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>) {
    this.members = new ExpiringSet(redis, clock);
    this.keys = keys;
  }

  /** Marks (or keeps) a connection online for `ttlMs`. */
  async enter(userId: string, connectionId: string, ttlMs: number): Promise<void> {
    await this.members.enter(this.keys.agentsOnline(userId), connectionId, ttlMs);
  }

  async leave(userId: string, connectionId: string): Promise<void> {
    await this.members.leave(this.keys.agentsOnline(userId), connectionId);
  }

  /** Whether any agent of the owner is online now. */
  async anyOnline(userId: string): Promise<boolean> {
    return (await this.members.count(this.keys.agentsOnline(userId))) > 0;
  }
}
