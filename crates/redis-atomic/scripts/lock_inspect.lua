#!lua flags=no-writes
--- summary: read a lock's state without changing it (runs on replicas)
--- invariant: reads only
--- keys: lock fence
--- args: -
--- returns: {'held', fence:fence, ttl:ms} | {'free', last_fence:fence}
--- retry: safe
--- version: 2
--@include lock_value
local raw = redis.call('GET', KEYS[1])
if raw then
  return {'held', lock_value(raw) or '0', math.max(0, redis.call('PTTL', KEYS[1]))}
end
return {'free', redis.call('GET', KEYS[2]) or '0'}
