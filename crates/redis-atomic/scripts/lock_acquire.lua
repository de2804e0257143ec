#!lua
--- summary: acquire a lease-style lock and issue a fencing token, or report who holds it
--- invariant: at most one owner token holds the lock; fences strictly increase per resource
--- keys: lock fence
--- args: token ttl_ms
--- returns: {'acquired', fence:fence, ttl:ms} | {'held', retry_after:ms}
--- retry: safe
--- version: 5
--- batch: yes
--@include now_us
--@include next_fence
-- Flat apart from the shared fence rule (next_fence: max(last + 1, server µs), so fences keep
-- increasing even when the fence key was lost to a failover or expiry): four commands when the
-- lock is free, TIME, GET, SET NX, SET. The fence is stored only when the lock is taken, kept 14
-- days from its last issue: at least a week beyond any lease (leases are at most 7 days).
-- Retry safety: the same token while it holds the lock gets its own fence back (and a fresh TTL),
-- so a client that lost the reply to its first attempt can simply send it again.
-- ttl_ms goes on to SET and PEXPIRE as sent, so it must be what they parse: plain decimal digits
-- (tonumber alone would let '0x10' or '1e3' through to a command that refuses it mid-script).
local token, ttl = ARGV[1], string.find(ARGV[2], '^[1-9]%d*$') and tonumber(ARGV[2])
if token == '' then return redis.error_reply('ERR redis-atomic: token must not be empty') end
if not ttl or ttl > 604800000 then
  return redis.error_reply('ERR redis-atomic: ttl_ms must be an integer in 1..604800000')
end
local last, bad = last_fence(KEYS[2])
if not last then return bad end
local fence = next_fence(last, now_us())
if redis.call('SET', KEYS[1], fence .. ':' .. token, 'NX', 'PX', ARGV[2]) then
  redis.call('SET', KEYS[2], fence, 'PX', '1209600000')
  return {'acquired', fence, ttl}
end
-- Held ("<fence>:<token>", see lock_value): by this token (a resend) or by another owner; a
-- value in no such form is someone else's data, held, never overwritten.
local current = redis.call('GET', KEYS[1])
local sep = string.find(current, ':', 1, true)
if sep and string.sub(current, sep + 1) == token then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'acquired', string.sub(current, 1, sep - 1), ttl}
end
return {'held', math.max(0, redis.call('PTTL', KEYS[1]))}
