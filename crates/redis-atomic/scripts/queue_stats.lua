#!lua flags=no-writes
--- summary: count a queue's jobs by state (due now, scheduled later, in flight, expired leases, dead, acked tombstones)
--- invariant: reads only
--- keys: due inflight dead done
--- args: -
--- returns: {'stats', ready, scheduled, running, expired, dead, acked}
--- retry: safe
--- version: 2
--@include now_ms
local now = now_ms()
local ready = redis.call('ZCOUNT', KEYS[1], '-inf', now)
local expired = redis.call('ZCOUNT', KEYS[2], '-inf', now)
return {'stats', ready, redis.call('ZCARD', KEYS[1]) - ready, redis.call('ZCARD', KEYS[2]), expired,
  redis.call('ZCARD', KEYS[3]), redis.call('ZCARD', KEYS[4])}
