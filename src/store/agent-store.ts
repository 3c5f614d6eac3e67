import { randomUUID } from 'node:crypto';
import { checkInitial, personaOf, type Agent } from '../agents/agent.ts';
import type { AgentPersona } from '../contract/conversation.ts';
import { generateAgentToken, hashAgentToken, isWellFormedAgentToken } from '../auth/agent-token.ts';
import type { Clock } from '../clock.ts';
import type { CreatedAgent } from '../contract/agent.ts';
import { checkDisplayName } from '../display-name.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { formatTimestamp } from '../timestamp.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import type { SignalBus } from '../redis/signal-bus.ts';

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

  /** A new agent (with an avatar initial, else its name's first letter) and its token, shown once. */
  async create(userId: string, name: string, initial = ''): Promise<CreatedAgent> {
    const trimmed = checkDisplayName(name);
    const letters = initial === '' ? '' : checkInitial(initial);
    if ((await this.redis.exists(this.keys.user(userId))) === 0) throw new NotFoundError('User not found.');
    // Agents are named in takeovers ("taken over by Alice"), so a name is one agent per owner.
    if ((await this.list(userId)).some((agent) => agent.active && agent.name === trimmed)) {
      throw new ConflictError(`An agent named ${trimmed} already exists.`);
    }
    const id = randomUUID();
    const token = generateAgentToken();
    const now = this.clock.nowMicros();
    await this.redis
      .multi()
      .hSet(this.keys.agent(userId, id), {
        id,
        user_id: userId,
        name: trimmed,
        initial: letters,
        created_at: String(now),
        active: '1',
        token_hash: hashAgentToken(token),
      })
      .zAdd(this.keys.agentsOf(userId), { score: now, value: id })
      .exec();
    await this.redis.set(this.keys.agentOwner(id), userId);
    // The lookup is written last: until then the token opens nothing.
    await this.redis.set(this.keys.agentByHash(hashAgentToken(token)), `${userId}:${id}`);
    return { id, name: trimmed, token };
  }

  /**
   * How the owner's agent of that name shows to visitors; a name no active agent has (an operator's
   * takeover under any name) shows as itself, with its first letter.
   */
  async persona(userId: string, name: string): Promise<AgentPersona> {
    const agent = (await this.list(userId)).find((candidate) => candidate.active && candidate.name === name);
    return personaOf(name, agent?.initial);
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
    if (!isWellFormedAgentToken(token)) return undefined;
    const owner = await this.redis.get(this.keys.agentByHash(hashAgentToken(token)));
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

function toAgent(row: Record<string, string>): Agent {
  return {
    id: row.id!,
    user_id: row.user_id!,
    name: row.name!,
    initial: row.initial ?? '',
    created_at: formatTimestamp(Number(row.created_at)),
    active: row.active === '1',
  };
}
