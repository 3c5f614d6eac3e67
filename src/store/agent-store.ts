import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { CreatedAgent } from '../contract/agent.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { formatTimestamp } from '../timestamp.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import type { SignalBus } from '../redis/signal-bus.ts';

/** A human agent of an owner, as listed (the token is never stored, only its SHA-256). */
export interface Agent {
  id: string;
  user_id: string;
  name: string;
  created_at: string;
  active: boolean;
}

const TOKEN = /^ag_[A-Za-z0-9_-]{43}$/;

/** Human agents and their sign-in tokens (`ag_` + 32 random bytes, stored hashed like API keys). */
export class AgentStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  private readonly signals: SignalBus;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>, signals: SignalBus) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.signals = signals;
  }

  async create(userId: string, name: string): Promise<CreatedAgent> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 100) throw new ValidationError('name must be 1 to 100 characters.');
    if ((await this.redis.exists(this.keys.user(userId))) === 0) throw new NotFoundError('User not found.');
    // Agents are named in takeovers ("taken over by Alice"), so a name is one agent per owner.
    if ((await this.list(userId)).some((agent) => agent.active && agent.name === trimmed)) {
      throw new ConflictError(`An agent named ${trimmed} already exists.`);
    }
    const id = randomUUID();
    const token = `ag_${randomBytes(32).toString('base64url')}`;
    const now = this.clock.nowMicros();
    await this.redis
      .multi()
      .hSet(this.keys.agent(userId, id), {
        id,
        user_id: userId,
        name: trimmed,
        created_at: String(now),
        active: '1',
        token_hash: hashToken(token),
      })
      .zAdd(this.keys.agentsOf(userId), { score: now, value: id })
      .exec();
    await this.redis.set(this.keys.agentOwner(id), userId);
    // The lookup is written last: until then the token opens nothing.
    await this.redis.set(this.keys.agentByHash(hashToken(token)), `${userId}:${id}`);
    return { id, name: trimmed, token };
  }

  /** The owner's agents, newest first. */
  async list(userId: string): Promise<Agent[]> {
    const ids = await this.redis.zRange(this.keys.agentsOf(userId), 0, -1, { REV: true });
    const rows = await Promise.all(ids.map((id) => this.redis.hGetAll(this.keys.agent(userId, id))));
    return rows.filter((row) => row.id).map(toAgent);
  }

  /**
   * Revokes an agent by id (the operator's view: any owner). Its token stops working at once, and
   * every gateway closes the agent's open sockets (a gateway that misses the signal, its subscriber
   * reconnecting, at the socket's next command).
   */
  async revoke(agentId: string): Promise<Agent> {
    const key = this.keys.agent(await this.owner(agentId), agentId);
    const hash = await this.redis.hGet(key, 'token_hash');
    if (!hash) throw new NotFoundError('Agent not found.');
    await this.redis.del(this.keys.agentByHash(hash));
    await this.redis.hSet(key, 'active', '0');
    await this.signals.publish({ kind: 'agent-revoked', agent_id: agentId });
    return toAgent(await this.redis.hGetAll(key));
  }

  /** The agent a token belongs to, if it is well formed, known and active. */
  async authenticate(token: unknown): Promise<Agent | undefined> {
    if (typeof token !== 'string' || !TOKEN.test(token)) return undefined;
    const owner = await this.redis.get(this.keys.agentByHash(hashToken(token)));
    if (!owner) return undefined;
    const [userId, agentId] = owner.split(':') as [string, string];
    const row = await this.redis.hGetAll(this.keys.agent(userId, agentId));
    return row.active === '1' ? toAgent(row) : undefined;
  }

  /** Whether the agent has not been revoked since it signed in. */
  async isActive(agent: Agent): Promise<boolean> {
    return (await this.redis.hGet(this.keys.agent(agent.user_id, agent.id), 'active')) === '1';
  }

  /** The user id of the agent's owner. */
  async owner(agentId: string): Promise<string> {
    const owner = await this.redis.get(this.keys.agentOwner(agentId));
    if (!owner) throw new NotFoundError('Agent not found.');
    return owner;
  }
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function toAgent(row: Record<string, string>): Agent {
  return {
    id: row.id!,
    user_id: row.user_id!,
    name: row.name!,
    created_at: formatTimestamp(Number(row.created_at)),
    active: row.active === '1',
  };
}
