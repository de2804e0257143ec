#!lua
--- summary: set a running job's lease to end ttl_ms from now, only for the worker it is leased to and its current fence
--- invariant: only the current lease (worker and fence) of a running job moves its deadline; the deadline is absolute, never added
--- keys: inflight meta
--- args: job_id token fence ttl_ms
--- returns: {'extended', fence:fence, ttl:ms} | {'lost'}
--- retry: safe
--- version: 3
--@include int_arg
--@include now_ms
--@include queue_types
--@include queue_meta
-- token: the worker the job is leased to. A lease past its deadline that no claim or reap has
-- taken yet is still the current one: its holder may extend it (nobody else has the job). Once
-- taken, the old fence answers 'lost'.
local ttl, bad = int_arg(ARGV[4], 'ttl_ms', 1, 86400000)
if not ttl then return bad end
local wrong = queue_types({{KEYS[1], 'zset'}, {KEYS[2], 'hash'}})
if wrong then return wrong end
local m = meta_parse(redis.call('HGET', KEYS[2], ARGV[1]))
if not m or m.state ~= 'r' or m.worker ~= ARGV[2] or m.fence ~= ARGV[3] then return {'lost'} end
redis.call('ZADD', KEYS[1], 'XX', now_ms() + ttl, ARGV[1]) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
return {'extended', m.fence, ttl}
