#!lua
--- summary: give a running job back (its worker and current fence only): due again after retry_after_ms, or dead once delivered max_deliveries times
--- invariant: only the current lease ends a job's delivery; a job reaches the dead letters only after max_deliveries deliveries
--- keys: inflight due dead meta payload errors
--- args: job_id token fence retry_after_ms max_deliveries error max_dead keep_dead_ms
--- returns: {'retrying', retry_after:ms} | {'dead'} | {'lost'}
--- retry: safe
--- version: 4
--@include int_arg
--@include now_ms
--@include queue_types
--@include queue_meta
--@include queue_bury
--@include queue_dead_bound
-- token: the worker the job is leased to.
-- Retry safety: a second run finds the lease ended and answers 'lost'; nothing moves twice.
local delay, bad = int_arg(ARGV[4], 'retry_after_ms', 0, 31536000000)
if not delay then return bad end
local maxd, bad2 = int_arg(ARGV[5], 'max_deliveries', 1, 1000000)
if not maxd then return bad2 end
local bound, bad3 = queue_dead_bound(ARGV[7], ARGV[8])
if not bound then return bad3 end
local wrong = queue_types({{KEYS[1], 'zset'}, {KEYS[2], 'zset'}, {KEYS[3], 'zset'}, {KEYS[4], 'hash'}, {KEYS[5], 'hash'}, {KEYS[6], 'hash'}})
if wrong then return wrong end
local id = ARGV[1]
local m = meta_parse(redis.call('HGET', KEYS[4], id))
if not m or m.state ~= 'r' or m.worker ~= ARGV[2] or m.fence ~= ARGV[3] then return {'lost'} end
local now = now_ms()
redis.call('ZREM', KEYS[1], id)
redis.call('HSET', KEYS[6], id, string.sub(ARGV[6], 1, 4096)) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
if m.deliveries >= maxd then
  queue_bury({dead = KEYS[3], meta = KEYS[4], payload = KEYS[5], errors = KEYS[6]}, now, id, m, bound)
  return {'dead'}
end
redis.call('ZADD', KEYS[2], now + delay, id) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
redis.call('HSET', KEYS[4], id, meta_format('q', m.fence, m.deliveries, '')) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
return {'retrying', delay}
