#!lua
--- summary: complete a running job, only for the worker it is leased to and its current fence; keep a tombstone for keep_ms so enqueue stays idempotent
--- invariant: a job is acked at most once, by the holder of its current lease
--- keys: inflight meta payload errors done
--- args: job_id token fence keep_ms
--- returns: {'acked'} | {'lost'}
--- retry: safe
--- version: 3
--@include int_arg
--@include now_ms
--@include queue_types
--@include queue_meta
-- token: the worker the job is leased to (kept in the tombstone, so a repeat is recognised).
-- Retry safety: repeating the ack of the same lease answers 'acked' again while the tombstone
-- lives (keep_ms > 0). Each ack also forgets at most 16 tombstones older than keep_ms (bounded).
local keep, bad = int_arg(ARGV[4], 'keep_ms', 0, 31536000000)
if not keep then return bad end
local wrong = queue_types({{KEYS[1], 'zset'}, {KEYS[2], 'hash'}, {KEYS[3], 'hash'}, {KEYS[4], 'hash'}, {KEYS[5], 'zset'}})
if wrong then return wrong end
local id = ARGV[1]
local m = meta_parse(redis.call('HGET', KEYS[2], id))
local token, fence = ARGV[2], ARGV[3]
if m and m.state == 'a' and m.worker == token and m.fence == fence then return {'acked'} end
if not m or m.state ~= 'r' or m.worker ~= token or m.fence ~= fence then return {'lost'} end
local now = now_ms()
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', KEYS[3], id)
redis.call('HDEL', KEYS[4], id)
if keep == 0 then
  redis.call('HDEL', KEYS[2], id)
else
  redis.call('HSET', KEYS[2], id, meta_format('a', m.fence, m.deliveries, m.worker)) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
  redis.call('ZADD', KEYS[5], now, id) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
end
local old = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now - keep, 'LIMIT', 0, 16)
for _, gone in ipairs(old) do
  redis.call('ZREM', KEYS[5], gone)
  local g = meta_parse(redis.call('HGET', KEYS[2], gone))
  if g and g.state == 'a' then redis.call('HDEL', KEYS[2], gone) end
end
return {'acked'}
