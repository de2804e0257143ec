#!lua
--- summary: return at most limit expired leases to due (or to the dead letters after max_deliveries)
--- invariant: only leases whose deadline passed (server time) end; a job is in exactly one of due, inflight, dead
--- keys: inflight due dead meta payload errors
--- args: limit max_deliveries max_dead keep_dead_ms
--- returns: {'reaped', requeued, dead}
--- retry: safe
--- version: 3
--@include int_arg
--@include now_ms
--@include queue_types
--@include queue_meta
--@include queue_bury
--@include queue_dead_bound
--@include queue_reap
local limit, bad = int_arg(ARGV[1], 'limit', 1, 1000)
if not limit then return bad end
local maxd, bad2 = int_arg(ARGV[2], 'max_deliveries', 1, 1000000)
if not maxd then return bad2 end
local bound, bad3 = queue_dead_bound(ARGV[3], ARGV[4])
if not bound then return bad3 end
local wrong = queue_types({{KEYS[1], 'zset'}, {KEYS[2], 'zset'}, {KEYS[3], 'zset'}, {KEYS[4], 'hash'}, {KEYS[5], 'hash'}, {KEYS[6], 'hash'}})
if wrong then return wrong end
local k = {inflight = KEYS[1], due = KEYS[2], dead = KEYS[3], meta = KEYS[4], payload = KEYS[5], errors = KEYS[6]}
local requeued, buried = queue_reap(k, now_ms(), limit, maxd, bound)
return {'reaped', requeued, buried}
