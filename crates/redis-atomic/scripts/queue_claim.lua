#!lua
--- summary: return expired leases, then lease up to max_jobs due jobs (due order) to a worker, each with a new fence
--- invariant: a job is in exactly one of due, inflight, dead; a claim takes only due jobs; every claim of a job gets a fence larger than all before it
--- keys: due inflight dead meta payload errors
--- args: worker visibility_ms max_jobs max_deliveries max_dead keep_dead_ms
--- returns: {'claimed', now_ms, count, jobs:[id:str, fence:fence, deliveries, payload:bytes] * count} | {'empty', retry_after:ms?}
--- retry: unsafe
--- version: 3
--@include int_arg
--@include now_us
--@include queue_types
--@include queue_meta
--@include queue_bury
--@include queue_dead_bound
--@include queue_reap
--@include next_fence
-- Not retry-safe: a second run would lease other jobs. After a lost reply the jobs of the first
-- run stay leased to nobody until visibility_ms passes; then a claim (or reap) returns them.
-- Bounded: at most max_jobs leases are reaped and at most max_jobs jobs claimed per call.
-- Fences: next_fence (max(last + 1, server µs)), so they increase even if the job record was lost.
local worker = ARGV[1]
if worker == '' or #worker > 128 then return redis.error_reply('ERR redis-atomic: worker must be 1..128 bytes') end
local vis, bad = int_arg(ARGV[2], 'visibility_ms', 1, 86400000)
if not vis then return bad end
local n, bad2 = int_arg(ARGV[3], 'max_jobs', 1, 1000)
if not n then return bad2 end
local maxd, bad3 = int_arg(ARGV[4], 'max_deliveries', 1, 1000000)
if not maxd then return bad3 end
local bound, bad4 = queue_dead_bound(ARGV[5], ARGV[6])
if not bound then return bad4 end
local wrong = queue_types({{KEYS[1], 'zset'}, {KEYS[2], 'zset'}, {KEYS[3], 'zset'}, {KEYS[4], 'hash'}, {KEYS[5], 'hash'}, {KEYS[6], 'hash'}})
if wrong then return wrong end
local us = now_us()
local now = math.floor(us / 1000)
queue_reap({inflight = KEYS[2], due = KEYS[1], dead = KEYS[3], meta = KEYS[4], payload = KEYS[5], errors = KEYS[6]}, now, n, maxd, bound)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, n)
local out = {'claimed', now, #ids}
for _, id in ipairs(ids) do
  local m = meta_parse(redis.call('HGET', KEYS[4], id))
  if not m then m = {fence = '0', deliveries = 0} end
  local fence = next_fence(tonumber(m.fence), us)
  local deliveries = m.deliveries + 1
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZADD', KEYS[2], now + vis, id) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
  redis.call('HSET', KEYS[4], id, meta_format('r', fence, deliveries, worker)) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
  out[#out + 1] = id
  out[#out + 1] = fence
  out[#out + 1] = deliveries
  out[#out + 1] = redis.call('HGET', KEYS[5], id) or ''
end
if #ids > 0 then return out end
local next_due = nil
for _, key in ipairs({KEYS[1], KEYS[2]}) do
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if first[2] then
    local at = tonumber(first[2])
    if not next_due or at < next_due then next_due = at end
  end
end
if not next_due then return {'empty'} end
return {'empty', math.max(0, next_due - now)}
