-- rl_sliding_log: at most `limit` units in any `period` µs. State: a sorted set, one member per
-- unit scored by its server time; an entry counts while now < score + period. The check trims
-- what expired (at most `limit` members, since no more were ever live): a write, but one that
-- changes no decision, so a refusal still charges nothing. The write adds the new units.
local function rl_sliding_log(key, limit, period, burst, cost, now)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', rl_fmt(now - period))
  local live = redis.call('ZCARD', key)
  if live + cost > limit then
    local nth = redis.call('ZRANGE', key, live + cost - limit - 1, live + cost - limit - 1, 'WITHSCORES')
    local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    local reset = tonumber(newest[2]) + period - now
    return false, limit > live and limit - live or 0, reset > 0 and reset or 0, tonumber(nth[2]) + period - now
  end
  return true, limit - live - cost, period, 0, now, live
end
-- Members "<now>:<n>" are unique: n grows with the live count at one instant.
local function rl_sliding_log_write(key, now, live, period, cost)
  local stamp = rl_fmt(now)
  if cost == 1 then
    redis.call('ZADD', key, stamp, stamp .. ':' .. rl_fmt(live + 1))
  else
    local i = 0
    while i < cost do -- batches of 500 members keep unpack within Lua's stack limit
      local batch, j = {}, 0
      while j < 500 and i < cost do
        i, j = i + 1, j + 1
        batch[2 * j - 1], batch[2 * j] = stamp, stamp .. ':' .. rl_fmt(live + i)
      end
      redis.call('ZADD', key, unpack(batch))
    end
  end
  -- Cleanup only (entries expire by score): set once, then only ever extend. With no live entry
  -- the trim above deleted the set, so the key is new (NX sets its TTL); otherwise it has one
  -- from an earlier write (GT only extends it). One call either way.
  if live == 0 then
    redis.call('PEXPIRE', key, rl_px(period), 'NX')
  else
    redis.call('PEXPIRE', key, rl_px(period), 'GT')
  end
end
