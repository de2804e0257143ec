-- queue_reap(k, now, limit, max_deliveries, bound): moves at most `limit` in-flight jobs whose
-- lease deadline has passed (server time) back to due, at their deadline (so they keep their
-- place), or to the dead letters (queue_bury, which trims them to `bound`) once they were
-- delivered max_deliveries times. k: {inflight, due, dead, meta, payload, errors}. Returns the
-- counts requeued and buried. Needs queue_meta and queue_bury.
local function queue_reap(k, now, limit, max_deliveries, bound)
  local expired = redis.call('ZRANGEBYSCORE', k.inflight, '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
  local requeued, buried = 0, 0
  for i = 1, #expired, 2 do
    local id, deadline = expired[i], expired[i + 1]
    local m = meta_parse(redis.call('HGET', k.meta, id))
    redis.call('ZREM', k.inflight, id)
    if not m then m = {fence = '0', deliveries = max_deliveries, worker = ''} end
    redis.call('HSET', k.errors, id, 'lease expired (visibility timeout) in delivery ' .. string.format('%.0f', m.deliveries))
    if m.deliveries >= max_deliveries then
      queue_bury(k, now, id, m, bound)
      buried = buried + 1
    else
      redis.call('ZADD', k.due, deadline, id)
      redis.call('HSET', k.meta, id, meta_format('q', m.fence, m.deliveries, ''))
      requeued = requeued + 1
    end
  end
  return requeued, buried
end
