import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { SecretKeyring } from '../connections/secret-keyring.ts';
import { NotFoundError } from '../errors.ts';
import type { ConnectionService } from '../sources/connectors/connector.ts';
import type {
  Connection,
  ConnectionAuthKind,
  ConnectionSecret,
  ConnectionStatus,
  NewConnection,
} from '../connections/connection.ts';
import { formatTimestamp } from '../timestamp.ts';
import { readPastCache, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';

/**
 * Users' connections to the services their sources are read from. Secrets are sealed with the
 * SecretBox (the connection id is the associated data) and never leave this store except through
 * `secret`; secrets are always read past the client-side cache, since another gateway may just
 * have rotated a token.
 */
export class ConnectionStore {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly clock: Pick<Clock, 'nowMicros'>;
  private readonly keyring: SecretKeyring;

  constructor(redis: RedisClient, keys: RedisKeys, clock: Pick<Clock, 'nowMicros'>, keyring: SecretKeyring) {
    this.redis = redis;
    this.keys = keys;
    this.clock = clock;
    this.keyring = keyring;
  }

  async create(userId: string, input: NewConnection): Promise<Connection> {
    const box = await this.keyring.box();
    const id = randomUUID();
    const createdAt = this.clock.nowMicros();
    // The owner entry first: a record without it is unreachable, never half-visible.
    await this.redis.set(this.keys.connectionOwner(id), userId);
    await this.redis.hSet(this.keys.connection(userId, id), {
      id,
      user_id: userId,
      service: input.service,
      auth_kind: input.authKind,
      status: 'active',
      label: input.label ?? '',
      base_url: input.baseUrl ?? '',
      created_at: String(createdAt),
      secret: box.seal(JSON.stringify(input.secret), id),
    });
    await this.redis.zAdd(this.keys.connectionsOf(userId), { score: createdAt, value: id });
    return this.get(id);
  }

  /** A user's connections, newest first. */
  async listForUser(userId: string): Promise<Connection[]> {
    const ids = await this.redis.zRange(this.keys.connectionsOf(userId), 0, -1, { REV: true });
    const rows = await Promise.all(ids.map((id) => this.redis.hGetAll(this.keys.connection(userId, id))));
    return rows.filter((row) => row.id).map(toConnection);
  }

  async get(connectionId: string): Promise<Connection> {
    return toConnection(await this.row(connectionId));
  }

  /** The connection's secret fields, opened. */
  async secret(connectionId: string): Promise<ConnectionSecret> {
    return (await this.withSecret(connectionId)).secret;
  }

  /** The connection and its opened secret, from one read. */
  async withSecret(connectionId: string): Promise<{ connection: Connection; secret: ConnectionSecret }> {
    const row = await this.row(connectionId);
    const box = await this.keyring.box();
    return {
      connection: toConnection(row),
      secret: JSON.parse(box.open(row.secret!, connectionId)) as ConnectionSecret,
    };
  }

  /** Replaces the secret (a refreshed or rotated token) and marks the connection active again. */
  async setSecret(connectionId: string, secret: ConnectionSecret): Promise<void> {
    const connection = await this.get(connectionId);
    const box = await this.keyring.box();
    await this.redis.hSet(this.keys.connection(connection.user_id, connectionId), {
      secret: box.seal(JSON.stringify(secret), connectionId),
      status: 'active',
    });
  }

  async setStatus(connectionId: string, status: ConnectionStatus): Promise<void> {
    const connection = await this.get(connectionId);
    await this.redis.hSet(this.keys.connection(connection.user_id, connectionId), 'status', status);
  }

  async delete(connectionId: string): Promise<void> {
    const connection = await this.get(connectionId);
    await this.redis.zRem(this.keys.connectionsOf(connection.user_id), connectionId);
    await this.redis.del(this.keys.connection(connection.user_id, connectionId));
    await this.redis.del(this.keys.connectionOwner(connectionId));
  }

  private async row(connectionId: string): Promise<Record<string, string>> {
    const userId = await readPastCache<string | null>(this.redis, (multi) =>
      multi.get(this.keys.connectionOwner(connectionId)),
    );
    const row = userId
      ? await readPastCache<Record<string, string>>(this.redis, (multi) =>
          multi.hGetAll(this.keys.connection(userId, connectionId)),
        )
      : {};
    if (!row.id) throw new NotFoundError('Connection not found.');
    return row;
  }
}

function toConnection(row: Record<string, string>): Connection {
  return {
    id: row.id!,
    user_id: row.user_id!,
    service: row.service as ConnectionService,
    auth_kind: row.auth_kind as ConnectionAuthKind,
    status: row.status as ConnectionStatus,
    label: row.label ?? '',
    base_url: row.base_url ?? '',
    created_at: formatTimestamp(Number(row.created_at)),
  };
}
