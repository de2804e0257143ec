#!lua
--- summary: return at most limit expired leases to due (or to the dead letters after max_deliveries)
--- invariant: only leases whose deadline passed (server time) end; a job is in exactly one of due, inflight, dead
--- keys: inflight due dead meta errors
--- args: limit max_deliveries
--- returns: {'reaped', requeued, dead}
--- retry: safe
--- version: 2
--@include int_arg
--@include now_ms
--@include queue_types
--@include queue_meta
--@include queue_reap
local limit, bad = int_arg(ARGV[1], 'limit', 1, 1000)
if not limit then return bad end
local maxd, bad2 = int_arg(ARGV[2], 'max_deliveries', 1, 1000000)
if not maxd then return bad2 end
local wrong = queue_types({{KEYS[1], 'zset'}, {KEYS[2], 'zset'}, {KEYS[3], 'zset'}, {KEYS[4], 'hash'}, {KEYS[5], 'hash'}})
if wrong then return wrong end
local requeued, buried = queue_reap({inflight = KEYS[1], due = KEYS[2], dead = KEYS[3], meta = KEYS[4], errors = KEYS[5]}, now_ms(), limit, maxd)
return {'reaped', requeued, buried}
