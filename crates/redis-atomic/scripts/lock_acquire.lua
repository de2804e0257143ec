#!lua
--- summary: acquire a lease-style lock and issue a fencing token, or report who holds it
--- invariant: at most one owner token holds the lock; fences strictly increase per resource
--- keys: lock fence
--- args: token ttl_ms
--- returns: {'acquired', fence:fence, ttl:ms} | {'held', retry_after:ms}
--- retry: safe
--- version: 2
--@include int_arg
--@include now_us
--@include lock_value
--@include next_fence
-- Retry safety: the same token while it holds the lock gets its own fence back (and a fresh TTL),
-- so a client that lost the reply to its first attempt can simply send it again.
-- Fences: next_fence (max(last + 1, server µs)); the fence key is kept a week beyond the lease.
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
  return {'held', math.max(0, redis.call('PTTL', KEYS[1]))}
end
local fence, bad_fence = issue_fence(KEYS[2], now_us(), ttl + 604800000)
if not fence then return bad_fence end
redis.call('SET', KEYS[1], fence .. ':' .. token, 'PX', ttl)
return {'acquired', fence, ttl}
