-- Fragment: charges an admitted request to a sliding log. In: `key`, `w1` (now), `w2` (the live
-- count), `period`, `cost`. Members "<now>:<n>" are unique: n grows with the live count at one
-- instant.
do
  local stamp = string.format('%d', w1)
  if cost == 1 then
    redis.call('ZADD', key, stamp, string.format('%d:%d', w1, w2 + 1))
  else
    local i = 0
    while i < cost do -- batches of 500 members keep unpack within Lua's stack limit
      local batch, j = {}, 0
      while j < 500 and i < cost do
        i, j = i + 1, j + 1
        batch[2 * j - 1], batch[2 * j] = stamp, string.format('%d:%d', w1, w2 + i)
      end
      redis.call('ZADD', key, unpack(batch))
    end
  end
  -- Cleanup only (entries expire by score): set once, then only ever extend. With no live entry
  -- the trim deleted the set, so the key is new (NX sets its TTL); otherwise it has one from an
  -- earlier write (GT only extends it). One call either way.
  local px = string.format('%d', math.floor((period + 999) / 1000) + 1000)
  if w2 == 0 then
    redis.call('PEXPIRE', key, px, 'NX')
  else
    redis.call('PEXPIRE', key, px, 'GT')
  end
end
