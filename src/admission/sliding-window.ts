/**
 * Lua fragments for the scripts that rate-limit with a sliding window: a sorted set of event times by
 * the server's clock (µs), so a limit holds however many gateways count in it.
 *
 * - `server_now()`: the server's clock in µs.
 * - `window_used(key, now, window)`: the events of the window that ends at `now`. Events that have left
 *   it stay in the set until a trim; they are not counted.
 * - `window_add(key, now, window, member)`: counts `member` at `now` and keeps the set alive for a
 *   window. About one call in `TRIM_EVERY` (by the clock's µs) also trims the events that have left the
 *   window, so a busy set holds its window's events and a few more, and an idle one expires whole. (A
 *   trim on every call cost a command on every request; counting with ZCOUNT makes it needless.)
 * - `window_wait(key, now, window, limit)`: 0 while the window holds fewer than `limit` events, else
 *   the µs until its oldest event leaves it.
 * - `admit(key, limit, window, member)`: counts `member` and returns 0, or, when the window is full,
 *   counts nothing and returns the µs until its oldest event leaves it.
 */
/** One `window_add` in about this many trims its set. */
const TRIM_EVERY = 16;

export const SLIDING_WINDOW = `
local function server_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function window_start(now, window)
  return string.format('%.0f', now - window)
end
local function window_used(key, now, window)
  return redis.call('ZCOUNT', key, '(' .. window_start(now, window), '+inf')
end
local function window_add(key, now, window, member)
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, math.ceil(window / 1000))
  if now % ${TRIM_EVERY} == 0 then redis.call('ZREMRANGEBYSCORE', key, '-inf', window_start(now, window)) end
end
local function window_wait(key, now, window, limit)
  if window_used(key, now, window) < limit then return 0 end
  local oldest = redis.call('ZRANGEBYSCORE', key, '(' .. window_start(now, window), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  return tonumber(oldest[2]) + window - now
end
local function admit(key, limit, window, member)
  local now = server_now()
  local wait = window_wait(key, now, window, limit)
  if wait > 0 then return wait end
  window_add(key, now, window, member)
  return 0
end
`;

/** A `Retry-After` in whole seconds (at least 1) for a wait `admit` returned. */
export function retryAfterSeconds(waitMicros: number): number {
  return Math.max(1, Math.ceil(waitMicros / 1_000_000));
}
