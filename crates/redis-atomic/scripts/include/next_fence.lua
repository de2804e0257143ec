-- next_fence(last, now): the fence after `last` (0 when none) at server time `now` (µs):
-- max(last + 1, now). One issuer for locks, permits, idempotency claims and job leases. The time
-- floor keeps fences increasing even when the last fence was lost (a failover to a lagging
-- replica, an expired fence key), as long as the new primary's clock is not behind the old
-- one's by more than the failover took.
local function next_fence(last, now)
  return string.format('%.0f', math.max(last + 1, now))
end

-- issue_fence(key, now, keep_ms): the next fence of the counter at `key`, stored there for
-- keep_ms; nil and an error reply (nothing written) when the key holds something else.
local function issue_fence(key, now, keep_ms)
  local last = redis.call('GET', key)
  local last_n = 0
  if last then
    last_n = tonumber(last)
    if not last_n then return nil, redis.error_reply('WRONGTYPE redis-atomic: fence key does not hold an integer') end
  end
  local fence = next_fence(last_n, now)
  redis.call('SET', key, fence, 'PX', keep_ms)
  return fence
end
