/**
 * A Lua fragment for the scripts that rate-limit with a sliding window (a sorted set of event times,
 * by the server's clock, so a limit holds however many gateways count in it): `admit(key, limit,
 * window_us, member)` counts `member` and returns 0, or, when the window is full, counts nothing and
 * returns the µs until its oldest event leaves it.
 */
export const SLIDING_WINDOW_ADMIT = `
local function admit(key, limit, window, member)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) >= limit then
    local oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
    return oldest + window - now
  end
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, math.ceil(window / 1000))
  return 0
end
`;

/** A `Retry-After` in whole seconds (at least 1) for a wait `admit` returned. */
export function retryAfterSeconds(waitMicros: number): number {
  return Math.max(1, Math.ceil(waitMicros / 1_000_000));
}
