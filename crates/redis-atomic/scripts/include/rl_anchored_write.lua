-- Fragment (rl_policy): charges an admitted request to an anchored window: `w1` the new count,
-- `w2` the new window's ms (the key's expiry closes it) or false to keep the running window's.
if w2 then
  redis.call('SET', key, w1, 'PX', w2)
else
  redis.call('SET', key, w1, 'KEEPTTL')
end
