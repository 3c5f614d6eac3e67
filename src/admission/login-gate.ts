import { createHash, randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { LuaScript } from '../redis/lua-script.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { SLIDING_WINDOW } from './sliding-window.ts';

/** The sign-in limits; each window counts failed attempts in any `windowMs`. */
export interface LoginLimits {
  /** Failures for one email address from one client address. */
  perEmailAndAddress: number;
  /** Failures from one client address, whatever the emails. */
  perAddress: number;
  windowMs: number;
  /** Sign-ins of one client address being checked at once (across every gateway). */
  concurrentPerAddress: number;
  /** How long an unfinished sign-in counts as in flight (a gateway that died never finishes it). */
  inFlightMs: number;
}

/** What the gate said about one sign-in attempt. */
export type LoginAdmission =
  { kind: 'admitted'; ticket: LoginTicket } | { kind: 'limited'; retryAfterSeconds: number } | { kind: 'busy' };

/** An admitted attempt, handed back with {@link LoginGate.finish} once it is decided. */
export interface LoginTicket {
  /** The email-and-address window, the address window, the address's sign-ins in flight. */
  keys: [emailAndAddressWindow: string, addressWindow: string, inFlight: string];
  member: string;
}

// Checked and counted in one script with the server's clock, so the limits are exact however many
// gateways take sign-ins at once. Returns {1, member}, {0, µs until a window slot frees} or {2} (too
// many of this address in flight).
const ADMIT = new LuaScript<{
  keys: LoginTicket['keys'];
  args: [
    perEmailAndAddress: number,
    perAddress: number,
    windowMicros: number,
    nonce: string,
    inFlightCap: number,
    inFlightLeaseMicros: number,
  ];
  reply: [1, member: string] | [0, waitMicros: number] | [2];
}>(`${SLIDING_WINDOW}
local now = server_now()
local window = tonumber(ARGV[3])
local wait = math.max(window_wait(KEYS[1], now, window, tonumber(ARGV[1])), window_wait(KEYS[2], now, window, tonumber(ARGV[2])))
if wait > 0 then return {0, wait} end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then return {2} end
local member = now .. ':' .. ARGV[4]
for i = 1, 2 do window_add(KEYS[i], now, window, member) end
local lease = tonumber(ARGV[6])
redis.call('ZADD', KEYS[3], now + lease, member)
redis.call('PEXPIRE', KEYS[3], math.ceil(lease / 1000))
return {1, member}
`);

/**
 * What a client address is counted as: an IPv4 address as itself, an IPv6 address as its /64. One
 * home or one server is handed a whole /64 and picks any of its 2^64 addresses at will, so counting
 * single IPv6 addresses would give each of them a fresh limit.
 */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const parsed = ipaddr.IPv6.parse(address);
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  return `${new ipaddr.IPv6([...parsed.parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}

/**
 * Rate limits dashboard sign-ins per email address and client address together, per client address,
 * and in how many sign-ins one client address has in flight (sliding windows and a leased set in
 * Redis). An email's failures from one client never lock the right password out from another: the
 * limit that holds any one email is per client. Every attempt is counted when it is admitted, so
 * concurrent guesses cannot slip past a limit; a successful sign-in takes its attempt back, so only
 * failures add up. All keys share the `{login}` hash tag: one script reads them all (sign-ins are
 * rare next to chat traffic).
 */
export class LoginGate {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly limits: LoginLimits;

  constructor(redis: RedisClient, keys: RedisKeys, limits: LoginLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`login limit ${name} must be a positive integer`);
    }
    this.redis = redis;
    this.keys = keys;
    this.limits = limits;
  }

  async admit(email: string, address: string): Promise<LoginAdmission> {
    const client = addressKey(address);
    const pair = createHash('sha256').update(`${email}\n${client}`).digest('hex');
    const keys: LoginTicket['keys'] = [
      this.keys.loginAttemptsByEmailAndAddress(pair),
      this.keys.loginAttemptsByAddress(client),
      this.keys.loginsInFlight(client),
    ];
    const { perEmailAndAddress, perAddress, windowMs, concurrentPerAddress, inFlightMs } = this.limits;
    const reply = await ADMIT.run(this.redis, keys, [
      perEmailAndAddress,
      perAddress,
      windowMs * 1000,
      randomUUID(),
      concurrentPerAddress,
      inFlightMs * 1000,
    ]);
    if (reply[0] === 1) return { kind: 'admitted', ticket: { keys, member: reply[1] } };
    if (reply[0] === 2) return { kind: 'busy' };
    return { kind: 'limited', retryAfterSeconds: Math.ceil(reply[1] / 1_000_000) };
  }

  /**
   * Ends an admitted attempt: it is no longer in flight, and with `forgive` (a successful sign-in, or
   * one the server could not check) it is taken out of both windows too.
   */
  async finish(ticket: LoginTicket, forgive: boolean): Promise<void> {
    const [pair, address, inFlight] = ticket.keys;
    const multi = this.redis.multi().zRem(inFlight, ticket.member);
    if (forgive) multi.zRem(pair, ticket.member).zRem(address, ticket.member);
    await multi.exec();
  }
}
