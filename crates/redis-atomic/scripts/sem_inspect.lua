#!lua flags=no-writes
--- summary: count a semaphore's live permits without changing anything (runs on replicas)
--- invariant: reads only
--- keys: permits fence
--- args: -
--- returns: {'permits', live_count, next_expiry_in_ms (0 when none), last_fence}
--- retry: safe
--- version: 1
--@include now_ms
local now = now_ms()
local live = redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local next_in = 0
if first[2] then next_in = tonumber(first[2]) - now end
return {'permits', live, next_in, redis.call('GET', KEYS[2]) or '0'}
