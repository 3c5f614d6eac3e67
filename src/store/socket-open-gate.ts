import { randomUUID } from 'node:crypto';
import { addressKey } from './login-gate.ts';
import { LuaScript } from './lua-script.ts';
import type { RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/** Sockets one client address may open in any `windowMs`. */
export interface SocketOpenLimits {
  perAddress: number;
  windowMs: number;
}

/** What the gate said about one socket open. */
export type OpenAdmission = { kind: 'admitted' } | { kind: 'limited'; retryAfterSeconds: number };

// KEYS: the address's window. ARGV: limit, window µs, nonce. Returns {1} or {0, µs until a slot frees}.
// A sliding window with the server's clock, so the limit holds however many gateways the opens are
// spread over; a refused open is not counted, so the set never holds more than `limit` members.
const ADMIT = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  local oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
  return {0, oldest + window - now}
end
redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
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
    const reply = (await ADMIT.run(
      this.redis,
      [this.keys.socketOpens(addressKey(address))],
      [perAddress, windowMs * 1000, randomUUID()],
    )) as [number, number?];
    if (reply[0] === 1) return { kind: 'admitted' };
    return { kind: 'limited', retryAfterSeconds: Math.max(1, Math.ceil((reply[1] ?? 0) / 1_000_000)) };
  }
}
