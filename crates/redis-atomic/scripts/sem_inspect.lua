#!lua flags=no-writes
--- summary: count a semaphore's live permits without changing anything (runs on replicas)
--- invariant: reads only
--- keys: permits fence
--- args: -
--- returns: {'permits', live, next_expiry:ms, last_fence:fence}
--- retry: safe
--- version: 2
--@include now_us
local now = now_us()
local live = redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%.0f', now), '+inf')
local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. string.format('%.0f', now), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local next_in = 0
if first[2] then next_in = math.ceil((tonumber(first[2]) - now) / 1000) end
return {'permits', live, next_in, redis.call('GET', KEYS[2]) or '0'}
