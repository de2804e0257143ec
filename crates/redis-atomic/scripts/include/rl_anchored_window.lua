-- Fragment rl_anchored_window (rl_policy): the anchored window's check. State: a counter whose
-- expiry closes the window (rl_anchored_window.lua). Same contract as rl_fixed_window, except
-- `now` is not read (the key's expiry is the clock) and the write is rl_anchored_write: `w1` the
-- new count, `w2` the new window's ms, or false when the key keeps its expiry.
do
  local raw, count, ms = redis.call('GET', key), 0, math.floor((period + 999) / 1000)
  reset, w2 = ms * 1000, string.format('%d', ms)
  if raw then
    count = tonumber(raw)
    if not count or count % 1 ~= 0 or count < 0 then
      return redis.error_reply('WRONGTYPE redis-atomic: ' .. key .. ' does not hold rate-limit state')
    end
    local ttl = redis.call('PTTL', key)
    if ttl >= 0 then reset, w2 = math.max(ttl, 1) * 1000, false end -- else: no expiry, a new window
  end
  if count + cost > limit then
    ok, remaining, retry = false, limit > count and limit - count or 0, reset
  else
    count = count + cost
    ok, remaining, retry, w1 = true, limit - count, 0, string.format('%d', count)
  end
end
