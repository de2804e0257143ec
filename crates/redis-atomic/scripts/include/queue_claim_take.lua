-- Fragment (queue_claim, queue_claim_id): returns up to `n` expired leases, then leases up to `n`
-- due jobs (due order) to `worker` for `ttl` ms, each with a new fence and one more delivery.
-- In: queue_claim_args' locals, `us`/`now` (server µs/ms), `out` (the reply so far) and `job_ttl`
-- (nil, or a value appended after each job's four fields). Out: `ids` (the leased job ids); each
-- job's id, fence, deliveries and payload (then `job_ttl`, if set) appended to `out`.
-- Fences: next_fence (max(last + 1, server µs)), so they increase even if the job record was lost.
queue_reap({inflight = KEYS[2], due = KEYS[1], dead = KEYS[3], meta = KEYS[4], payload = KEYS[5], errors = KEYS[6]}, now, n, maxd, bound)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, n)
for _, id in ipairs(ids) do
  local m = meta_parse(redis.call('HGET', KEYS[4], id))
  if not m then m = {fence = '0', deliveries = 0} end
  local fence = next_fence(tonumber(m.fence), us)
  local deliveries = m.deliveries + 1
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZADD', KEYS[2], now + ttl, id) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
  redis.call('HSET', KEYS[4], id, meta_format('r', fence, deliveries, worker)) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
  out[#out + 1] = id
  out[#out + 1] = fence
  out[#out + 1] = deliveries
  out[#out + 1] = redis.call('HGET', KEYS[5], id) or ''
  if job_ttl then out[#out + 1] = job_ttl end
end
