#!lua
--- summary: acquire a lease-style lock and issue a fencing token, or report who holds it
--- invariant: at most one owner token holds the lock; fences strictly increase per resource
--- keys: lock fence
--- args: token ttl_ms
--- returns: {'acquired', fence, ttl_ms} | {'held', pttl_ms}
--- retry: safe
--- version: 1
--@include int_arg
--@include now_us
--@include lock_value
-- Retry safety: the same token while it holds the lock gets its own fence back (and a fresh TTL),
-- so a client that lost the reply to its first attempt can simply send it again.
-- Fences: max(last + 1, server time in µs). The time floor keeps fences increasing even when the
-- fence key is lost (failover to a lagging replica, expiry after a week idle), as long as the new
-- primary's clock is not behind the old one by more than the failover took.
local token = ARGV[1]
if token == '' then return redis.error_reply('ERR redis-atomic: token must not be empty') end
local ttl, bad = int_arg(ARGV[2], 'ttl_ms', 1, 604800000)
if not ttl then return bad end
local current = redis.call('GET', KEYS[1])
if current then
  local fence, owner = lock_value(current)
  if owner == token then
    redis.call('PEXPIRE', KEYS[1], ttl)
    return {'acquired', fence, ttl}
  end
  return {'held', redis.call('PTTL', KEYS[1])}
end
local last = redis.call('GET', KEYS[2])
local last_n = 0
if last then
  last_n = tonumber(last)
  if not last_n then return redis.error_reply('WRONGTYPE redis-atomic: fence key does not hold an integer') end
end
local fence = string.format('%.0f', math.max(now_us(), last_n + 1))
redis.call('SET', KEYS[1], fence .. ':' .. token, 'PX', ttl)
redis.call('SET', KEYS[2], fence, 'PX', ttl + 604800000)
return {'acquired', fence, ttl}
