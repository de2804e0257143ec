-- The one rule for fences, shared by every issuer (locks, semaphore permits, idempotency claims,
-- job leases): the fence after `last` (0 when none) at server time `now` (µs) is
-- max(last + 1, now). The time floor keeps fences increasing even when the last fence was lost
-- (a failover to a lagging replica, an expired fence key), as long as the new primary's clock is
-- not behind the old one's by more than the failover took.
local function next_fence(last, now)
  return string.format('%.0f', math.max(last + 1, now))
end

-- last_fence(key): the last fence stored at `key` (0 when none); nil and an error reply (nothing
-- written) when the key holds anything but an integer.
local function last_fence(key)
  local last = redis.call('GET', key)
  if not last then return 0 end
  local n = tonumber(last)
  if not n then return nil, redis.error_reply('WRONGTYPE redis-atomic: fence key does not hold an integer') end
  return n
end

-- issue_fence(key, now, keep_ms): the next fence of the counter at `key`, stored there for
-- keep_ms; nil and an error reply (nothing written) when the key holds something else.
local function issue_fence(key, now, keep_ms)
  local last, bad = last_fence(key)
  if not last then return nil, bad end
  local fence = next_fence(last, now)
  redis.call('SET', key, fence, 'PX', keep_ms)
  return fence
end
