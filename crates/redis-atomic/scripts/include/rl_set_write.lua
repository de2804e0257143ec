-- Fragment: charges an admitted request for the algorithms whose state is one string.
-- In: `key`, `w1` (the new value) and `w2` (its TTL in ms), as the algorithm's check left them.
redis.call('SET', key, w1, 'PX', w2)
