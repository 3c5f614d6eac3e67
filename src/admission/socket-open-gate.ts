import { randomUUID } from 'node:crypto';
import { addressKey } from './login-gate.ts';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { retryAfterSeconds, SLIDING_WINDOW } from './sliding-window.ts';

/** Sockets one client address may open in any `windowMs`. */
export interface SocketOpenLimits {
  perAddress: number;
  windowMs: number;
}

/** What the gate said about one socket open. */
export type OpenAdmission = { kind: 'admitted' } | { kind: 'limited'; retryAfterSeconds: number };

// Returns {1} or {0, µs until a slot frees}; a refused open is not counted, so a flood of refused
// opens does not grow the set.
const ADMIT = new LuaScript<{
  keys: [addressWindow: string];
  args: [limit: number, windowMicros: number, nonce: string];
  reply: [1] | [0, waitMicros: number];
}>(`${SLIDING_WINDOW}
local wait = admit(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
if wait > 0 then return {0, wait} end
return {1}
`);

/**
 * Rate limits new websockets (widget and agent) per client address, in a sliding window in Redis
 * shared by every gateway: a load balancer spreads one client's opens over all of them, and each
 * widget open writes a session to Redis, so a per-process count would multiply by the gateways.
 * IPv6 addresses count per /64, as the sign-in limit does.
 */
export class SocketOpenGate {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly limits: SocketOpenLimits;

  constructor(redis: RedisClient, keys: RedisKeys, limits: SocketOpenLimits) {
    this.redis = redis;
    this.keys = keys;
    this.limits = limits;
  }

  async admit(address: string): Promise<OpenAdmission> {
    const { perAddress, windowMs } = this.limits;
    const reply = await ADMIT.run(
      this.redis,
      [this.keys.socketOpens(addressKey(address))],
      [perAddress, windowMs * 1000, randomUUID()],
    );
    if (reply[0] === 1) return { kind: 'admitted' };
    return { kind: 'limited', retryAfterSeconds: retryAfterSeconds(reply[1]) };
  }
}
