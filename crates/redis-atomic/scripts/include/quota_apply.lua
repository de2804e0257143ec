-- Fragment (quota_add, quota_add_id): adds `delta` to the counter KEYS[1] unless it would leave
-- [lo, hi] (mode refuse), or clamps into them (mode clamp). In: quota_args' locals.
-- Out: `applied` (true when written) and `value` (the counter after the call).
local raw = redis.call('GET', KEYS[1])
local value, applied = 0, true
if raw then
  value = tonumber(string.match(raw, '^-?%d+$'))
  if not value or math.abs(value) > limit then
    return redis.error_reply('WRONGTYPE redis-atomic: counter does not hold a 53-bit integer')
  end
end
local target = value + delta
if target < lo or target > hi then
  if mode == 'refuse' then applied = false end
  target = math.min(math.max(target, lo), hi)
end
if applied then
  -- INCRBY keeps the TTL; PEXPIRE NX sets one only where there is none (the first write), so
  -- later writes never stretch the counter's lifetime, unlike INCR + EXPIRE.
  redis.call('INCRBY', KEYS[1], string.format('%.0f', target - value))
  if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl, 'NX') end
  value = target
end
