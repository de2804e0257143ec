#!lua
--- summary: take one of `capacity` permits for a holder with a lease and a fence, reclaiming expired permits first
--- invariant: at most `capacity` unexpired permits exist; fences strictly increase per semaphore
--- keys: permits holders fence
--- args: holder capacity ttl_ms
--- returns: {'acquired', fence:fence, ttl:ms} | {'full', retry_after:ms}
--- retry: safe
--- version: 4
--- batch: yes
--@include int_arg
--@include now_us
--@include next_fence
-- permits: sorted set holder -> lease end (server µs: no rounding, so a lease lasts exactly
-- ttl_ms after the call ran); holders: hash holder -> fence.
-- Retry safety: a holder that still holds a permit gets its own fence back (and a fresh lease).
-- Bounded work: at most 64 expired permits are reclaimed per call; expired ones left over are
-- excluded from the count anyway (ZCOUNT of leases ending after now), so they never block.
local holder = ARGV[1]
if holder == '' then return redis.error_reply('ERR redis-atomic: holder must not be empty') end
local capacity, bad = int_arg(ARGV[2], 'capacity', 1, 100000)
if not capacity then return bad end
local ttl, bad_ttl = int_arg(ARGV[3], 'ttl_ms', 1, 604800000)
if not ttl then return bad_ttl end
local now = now_us()
local ttl_us = ttl * 1000
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 64)
for i = 1, #expired do
  redis.call('ZREM', KEYS[1], expired[i])
  redis.call('HDEL', KEYS[2], expired[i])
end
local function keep_alive()
  redis.call('PEXPIRE', KEYS[1], ttl, 'NX')
  redis.call('PEXPIRE', KEYS[1], ttl, 'GT')
  redis.call('PEXPIRE', KEYS[2], ttl, 'NX')
  redis.call('PEXPIRE', KEYS[2], ttl, 'GT')
end
local mine = tonumber(redis.call('ZSCORE', KEYS[1], holder))
local fence = redis.call('HGET', KEYS[2], holder)
if mine and mine > now and fence then
  redis.call('ZADD', KEYS[1], now + ttl_us, holder)
  keep_alive()
  return {'acquired', fence, ttl}
end
if redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%.0f', now), '+inf') >= capacity then
  local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. string.format('%.0f', now), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  return {'full', math.ceil((tonumber(first[2]) - now) / 1000)}
end
local bad_fence
fence, bad_fence = issue_fence(KEYS[3], now, ttl + 604800000)
if not fence then return bad_fence end
redis.call('ZADD', KEYS[1], now + ttl_us, holder)
redis.call('HSET', KEYS[2], holder, fence)
keep_alive()
return {'acquired', fence, ttl}
