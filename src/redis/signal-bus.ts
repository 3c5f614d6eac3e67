import { randomUUID } from 'node:crypto';
import type { VisitorPush } from '../channels/channel-port.ts';
import type { StreamEndReason } from '../conversations/reply-stream.ts';
import type { Logger } from '../logger.ts';
import type { StoredMessage } from '../store/conversation-store.ts';
import { isCluster, waitsForReplicas, type RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/** A change that live actors or sockets in any gateway process may need to hear about. */
export type Signal =
  /** Takeover or release changed the conversation in Redis: its live actor reloads it, agents hear of it. */
  | { kind: 'conversation'; chatbot_id: string; session_id: string; taken_over_by: string | null }
  /**
   * A message was stored (visitor, AI or agent): agents of the chatbot's owner see it. An AI reply
   * that was streamed names its stream.
   */
  | { kind: 'message'; chatbot_id: string; session_id: string; message: StoredMessage; stream_id?: string }
  /** The conversation was escalated for the first time: agents and the visitor's sockets hear of it. */
  | { kind: 'escalated'; chatbot_id: string; session_id: string; escalated_at: string }
  /** A visitor left or changed their lead (it is in Redis): agents of the chatbot's owner see who they are. */
  | { kind: 'lead'; chatbot_id: string; session_id: string }
  /** The next piece of an AI reply being written (ReplyStream): widget and agent sockets show it. */
  | { kind: 'stream'; chatbot_id: string; session_id: string; stream_id: string; content: string }
  /** A reply being written will not be stored (a takeover cut it, the turn failed): sockets drop it. */
  | { kind: 'stream-end'; chatbot_id: string; session_id: string; stream_id: string; reason: StreamEndReason }
  /** For a visitor whose connection (widget sockets, WhatsApp socket) another process may hold. */
  | { kind: 'visitor'; chatbot_id: string; session_id: string; push: VisitorPush }
  /** A source's chunks were written or removed: in-process search indexes reload them. */
  | { kind: 'source-chunks'; chatbot_id: string; source_id: string }
  /** A chatbot's messaging channel was connected, changed or removed: gateways restart its bot. */
  | { kind: 'channel'; chatbot_id: string; channel: 'telegram' | 'whatsapp' }
  /** A re-embedding switched the served embedding space: gateways load it and answer from it. */
  | { kind: 'embedding-space'; space: string; embeddings: string }
  /** An agent was revoked: every gateway closes that agent's sockets at once. */
  | { kind: 'agent-revoked'; agent_id: string }
  /** An owner's canned replies changed: every gateway tells that owner's agent sockets to read them again. */
  | { kind: 'canned-replies'; user_id: string };

/** A signal as a Lua script publishes it: the channel and the encoded message. */
export interface ScriptSignal {
  channel: string;
  message: string;
}

/** A received signal, with the bus that published it. */
export type ReceivedSignal = Signal & { origin: string };

/**
 * Cross-process signals over Redis pub/sub: any process (a gateway, the CLI) publishes, every gateway
 * receives, including the publisher itself.
 */
export class SignalBus {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly logger: Logger;
  private subscriber: RedisClient | undefined;

  constructor(redis: RedisClient, keys: RedisKeys, logger: Logger) {
    this.redis = redis;
    this.keys = keys;
    this.logger = logger;
  }

  /** Identifies this process's bus in the signals it publishes. */
  readonly id = randomUUID();
  private cluster: Promise<boolean> | undefined;

  async publish(signal: Signal): Promise<void> {
    const message = JSON.stringify({ ...signal, origin: this.id });
    if (await this.onCluster()) await this.redis.sPublish(this.keys.signals(), message);
    else await this.redis.publish(this.keys.signals(), message);
  }

  /**
   * The channel and message with which a Lua script publishes `signal` along with the write it tells
   * of, so both cost one round trip; undefined on a Redis Cluster, whose signals travel on a sharded
   * channel that a script may publish to only from the channel's own slot, and undefined when writes
   * wait for replicas (REDIS_WAIT_REPLICAS), so that nobody hears of a write before its replicas hold
   * it: the caller publishes after.
   */
  async forScript(signal: Signal): Promise<ScriptSignal | undefined> {
    if (waitsForReplicas(this.redis) || (await this.onCluster())) return undefined;
    return { channel: this.keys.signals(), message: JSON.stringify({ ...signal, origin: this.id }) };
  }

  /**
   * Whether the server is a Redis Cluster node: then signals travel on a sharded channel (SPUBLISH),
   * which stays on the channel's shard instead of being broadcast over the whole cluster bus.
   */
  private onCluster(): Promise<boolean> {
    // A failed INFO is not remembered as "no cluster": publisher and subscribers must agree on the
    // kind of channel, so the caller fails now and the next call asks again.
    this.cluster ??= this.redis.info('cluster').then((info) => /^cluster_enabled:1/m.test(info));
    this.cluster.catch(() => (this.cluster = undefined));
    return this.cluster;
  }

  /** Subscribes on a connection of its own (a subscribed connection can do nothing else). */
  async subscribe(handler: (signal: ReceivedSignal) => void): Promise<void> {
    // Without node-redis's maintenance notifications (Redis Enterprise's MOVING, MIGRATING …): its
    // handler stringifies every push it sees, each signal received included (2.5% of a busy gateway's
    // CPU), and a subscriber that loses its server reconnects anyway. Without the client-side cache
    // too: a subscriber reads nothing, and the copied option is the caching client's own cache, which
    // the subscriber's errors and reconnections would clear.
    const subscriber = isCluster(this.redis)
      ? this.redis.duplicate({ clientSideCache: undefined })
      : this.redis.duplicate({ maintNotifications: 'disabled', clientSideCache: undefined });
    subscriber.on('error', (error: Error) => this.logger.warn({ err: error.message }, 'signal connection error'));
    await subscriber.connect();
    const listener = (message: string) => {
      let signal: ReceivedSignal;
      try {
        signal = JSON.parse(message) as ReceivedSignal;
      } catch {
        this.logger.warn('ignored a malformed signal');
        return;
      }
      handler(signal);
    };
    if (await this.onCluster()) await subscriber.sSubscribe(this.keys.signals(), listener);
    else await subscriber.subscribe(this.keys.signals(), listener);
    this.subscriber = subscriber;
  }

  async stop(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber?.isOpen) await subscriber.close();
  }
}
