-- Fragment: charges an admitted request for the algorithms whose state is one string.
-- In: `key`, `w1` (the new value) and `w2` (µs until it stops mattering), as the algorithm's
-- check left them. The TTL adds 1 s of slack so expiry (on the real clock) never decides: the
-- timestamps stored in the state do.
redis.call('SET', key, w1, 'PX', string.format('%d', math.floor((w2 + 999) / 1000) + 1000))
