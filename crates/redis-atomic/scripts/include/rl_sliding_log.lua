-- rl_sliding_log(key, limit, period, burst, cost, now): at most `limit` units in any `period` µs.
-- State: a sorted set, one member per unit scored by its server time; an entry counts while
-- now < score + period. Checking reads only (ZCOUNT); the commit trims what expired (at most
-- `limit` members per call, since no more were ever live) and adds the new units.
local function rl_sliding_log(key, limit, period, burst, cost, now)
  local live = redis.call('ZCOUNT', key, '(' .. rl_fmt(now - period), '+inf')
  if live + cost > limit then
    local nth = redis.call('ZRANGEBYSCORE', key, '(' .. rl_fmt(now - period), '+inf', 'WITHSCORES', 'LIMIT', live + cost - limit - 1, 1)
    local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    return {ok = false, remaining = math.max(0, limit - live),
      retry = tonumber(nth[2]) + period - now, reset = math.max(0, tonumber(newest[2]) + period - now)}
  end
  return {ok = true, remaining = limit - live - cost, reset = period, retry = 0, commit = function()
    redis.call('ZREMRANGEBYSCORE', key, '-inf', rl_fmt(now - period))
    local stamp, i = rl_fmt(now), 0
    while i < cost do -- members "<now>:<n>" are unique: n grows with the live count at one instant
      local batch, j = {}, 0
      while j < 500 and i < cost do
        i, j = i + 1, j + 1
        batch[2 * j - 1], batch[2 * j] = stamp, stamp .. ':' .. rl_fmt(live + i)
      end
      redis.call('ZADD', key, unpack(batch))
    end
    redis.call('PEXPIRE', key, rl_px(period))
  end}
end
