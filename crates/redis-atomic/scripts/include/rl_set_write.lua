-- Fragment: charges an admitted request for the algorithms whose state is one string.
-- In: `key`, `w1` (the new value) and `w2` (µs until it stops mattering, or false when the key's
-- expiry is already right: a windowed state written again within its window), as the algorithm's
-- check left them. The TTL adds 1 s of slack so expiry (on the real clock) never decides: the
-- timestamps stored in the state do. KEEPTTL spares the TTL's arithmetic and formatting.
if w2 then
  redis.call('SET', key, w1, 'PX', string.format('%d', math.floor((w2 + 999) / 1000) + 1000))
else
  redis.call('SET', key, w1, 'KEEPTTL')
end
