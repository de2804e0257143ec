#!lua
--- summary: set a running job's lease to end extend_ms from now, only for its current fence
--- invariant: only the current lease (fence) of a running job moves its deadline; the deadline is absolute, never added
--- keys: inflight meta
--- args: job_id fence extend_ms
--- returns: {'extended', lease:ms} | {'lost'}
--- retry: safe
--- version: 2
--@include int_arg
--@include now_ms
--@include queue_types
--@include queue_meta
-- A lease past its deadline that no claim or reap has taken yet is still the current one: its
-- holder may extend it (nobody else has the job). Once taken, the old fence answers 'lost'.
local ext, bad = int_arg(ARGV[3], 'extend_ms', 1, 86400000)
if not ext then return bad end
local wrong = queue_types({{KEYS[1], 'zset'}, {KEYS[2], 'hash'}})
if wrong then return wrong end
local m = meta_parse(redis.call('HGET', KEYS[2], ARGV[1]))
if not m or m.state ~= 'r' or m.fence ~= ARGV[2] then return {'lost'} end
redis.call('ZADD', KEYS[1], 'XX', now_ms() + ext, ARGV[1]) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
return {'extended', ext}
