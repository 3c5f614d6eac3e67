import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { checkEmail, checkPlan, normalizeEmail, type Account } from '../accounts/account.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { formatTimestamp } from '../timestamp.ts';
import { scanKeys, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

/** Accounts (id, email, plan). Email addresses are unique, compared lowercased. */
export class AccountStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  private readonly plans: readonly string[];

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>, plans: readonly string[]) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.plans = plans;
  }

  async create(rawEmail: string, plan = 'free'): Promise<Account> {
    const address = checkEmail(rawEmail);
    checkPlan(plan, this.plans);
    const id = randomUUID();
    const createdAt = this.clock.nowMicros();
    // The record first, then the unique email claim: a crash in between leaves an unreachable record,
    // never an email that is taken by nobody.
    await this.redis.hSet(this.keys.user(id), { id, email: address, plan, created_at: String(createdAt) });
    const claimed = await this.redis.set(this.keys.userByEmail(address), id, { condition: 'NX' });
    if (claimed === null) {
      await this.redis.del(this.keys.user(id));
      throw new ConflictError('A user with this email already exists.');
    }
    await this.redis.set(this.keys.accountsExist(), '1');
    return { id, email: address, plan, created_at: formatTimestamp(createdAt) };
  }

  /**
   * Writes an account brought from another install (`import`): its id (unless another account has
   * it: then a new one) and creation time, under the same rules as `create`, with the backend-only
   * source types it had enabled.
   */
  async restore(input: {
    id: string;
    email: string;
    plan: string;
    createdAtMicros: number;
    connectors: readonly string[];
  }): Promise<Account> {
    const address = checkEmail(input.email);
    checkPlan(input.plan, this.plans);
    const id = (await this.redis.exists(this.keys.user(input.id))) === 0 ? input.id : randomUUID();
    await this.redis.hSet(this.keys.user(id), {
      id,
      email: address,
      plan: input.plan,
      created_at: String(input.createdAtMicros),
      ...(input.connectors.length > 0 ? { connectors: [...input.connectors].sort().join(',') } : {}),
    });
    const claimed = await this.redis.set(this.keys.userByEmail(address), id, { condition: 'NX' });
    if (claimed === null) {
      await this.redis.del(this.keys.user(id));
      throw new ConflictError('A user with this email already exists.');
    }
    await this.redis.set(this.keys.accountsExist(), '1');
    return { id, email: address, plan: input.plan, created_at: formatTimestamp(input.createdAtMicros) };
  }

  /**
   * Whether any account exists. Accounts made before the marker existed are found by a scan, once:
   * the marker is then set, so the answer is one GET from then on.
   */
  async anyExists(): Promise<boolean> {
    if ((await this.redis.get(this.keys.accountsExist())) !== null) return true;
    for await (const ids of this.claimedIds()) {
      // The first claim whose record is there will do: no need to read every account.
      const records = await Promise.all(ids.map((id) => this.redis.exists(this.keys.user(id))));
      if (records.some((found) => found === 1)) {
        await this.redis.set(this.keys.accountsExist(), '1');
        return true;
      }
    }
    return false;
  }

  /** Claims the first account: true for exactly one caller, and only while no account exists. */
  async claimFirst(): Promise<boolean> {
    if (await this.anyExists()) return false;
    return (await this.redis.set(this.keys.accountsExist(), '1', { condition: 'NX' })) !== null;
  }

  async get(userId: string): Promise<Account> {
    const fields = await this.redis.hGetAll(this.keys.user(userId));
    if (!fields.id) throw new NotFoundError('User not found.');
    return {
      id: fields.id,
      email: fields.email!,
      plan: fields.plan!,
      created_at: formatTimestamp(Number(fields.created_at)),
    };
  }

  /** The id of the account with this email address (compared as `create` stores it), if any. */
  async findIdByEmail(rawEmail: string): Promise<string | undefined> {
    return (await this.redis.get(this.keys.userByEmail(normalizeEmail(rawEmail)))) ?? undefined;
  }

  async setPlan(userId: string, plan: string): Promise<Account> {
    checkPlan(plan, this.plans);
    const account = await this.get(userId);
    await this.redis.hSet(this.keys.user(userId), 'plan', plan);
    return { ...account, plan };
  }

  /** The backend-only source types support enabled for the account. */
  async enabledConnectors(userId: string): Promise<string[]> {
    const value = await this.redis.hGet(this.keys.user(userId), 'connectors');
    return value ? value.split(',') : [];
  }

  /** Enables and disables backend-only source types for the account; returns the enabled ones. */
  async setConnectors(userId: string, enable: string[], disable: string[]): Promise<string[]> {
    await this.get(userId);
    const enabled = new Set(await this.enabledConnectors(userId));
    for (const type of enable) enabled.add(type);
    for (const type of disable) enabled.delete(type);
    const list = [...enabled].sort();
    await this.redis.hSet(this.keys.user(userId), 'connectors', list.join(','));
    return list;
  }

  /**
   * Every account, newest first. There is no index of accounts: the email claims are scanned (each
   * account has exactly one; a record whose claim was never written is unreachable and not listed),
   * which reads the whole keyspace once. It serves the operator's `user list`, not a request path.
   */
  async list(): Promise<Account[]> {
    const ids = new Set<string>();
    for await (const batch of this.claimedIds()) for (const id of batch) ids.add(id);
    const accounts = await Promise.all(
      [...ids].map((id) =>
        this.get(id).catch((error: unknown) => {
          // A claim whose record is gone names no account.
          if (error instanceof NotFoundError) return undefined;
          throw error;
        }),
      ),
    );
    return accounts
      .filter((account) => account !== undefined)
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
  }

  /** The account ids the email claims name, a scan batch at a time (the whole keyspace is read). */
  private async *claimedIds(): AsyncGenerator<string[]> {
    // The prefix has no glob characters (REDIS_PREFIX allows [A-Za-z0-9_:.-]).
    const claims = `${this.keys.userByEmail('')}*`;
    for await (const keys of scanKeys(this.redis, { MATCH: claims, COUNT: 1000 })) {
      // One GET per key: in a Redis Cluster the claims are spread over the slots.
      const values = await Promise.all(keys.map((key) => this.redis.get(key)));
      yield values.filter((id): id is string => Boolean(id));
    }
  }
}
