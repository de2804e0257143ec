-- The classic fenced lock: SET NX PX, and on success INCR the fence (ARGV: token, ttl_ms).
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return false
