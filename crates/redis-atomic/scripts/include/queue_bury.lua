-- queue_bury(k, now, id, m, bound): makes job `id` (its record `m`) a dead letter at `now`, then
-- trims the dead letters: those that died keep_ms or more ago first, then the oldest beyond
-- max_count, at most 8 per call (so each death does bounded work, and the set, which grows by
-- one per death, never passes max_count). A trimmed letter loses its record, payload and last
-- error with it: nothing is left behind. k: {dead, meta, payload, errors};
-- bound: {max_count, keep_ms}. Needs queue_meta.
local function queue_bury(k, now, id, m, bound)
  redis.call('ZADD', k.dead, now, id)
  redis.call('HSET', k.meta, id, meta_format('d', m.fence, m.deliveries, ''))
  local gone = redis.call('ZRANGEBYSCORE', k.dead, '-inf', now - bound.keep_ms, 'LIMIT', 0, 8)
  local over = math.min(redis.call('ZCARD', k.dead) - #gone - bound.max_count, 8 - #gone)
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', k.dead, #gone, #gone + over - 1)) do
      gone[#gone + 1] = old
    end
  end
  for _, old in ipairs(gone) do
    redis.call('ZREM', k.dead, old)
    local o = meta_parse(redis.call('HGET', k.meta, old))
    if o and o.state == 'd' then
      redis.call('HDEL', k.meta, old)
      redis.call('HDEL', k.payload, old)
      redis.call('HDEL', k.errors, old)
    end
  end
end
