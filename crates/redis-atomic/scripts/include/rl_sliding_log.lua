-- Fragment rl_sliding_log: at most `limit` units in any `period` µs (contract: rl_fixed_window).
-- State: a sorted set, one member per unit scored by its server time; an entry counts while
-- now < score + period. The check trims what expired (at most `limit` members, since no more
-- were ever live): a write, but one that changes no decision, so a refusal still charges nothing.
-- The live count is the members before the trim less those it removed; a missing key (a new or
-- idle identity, the common case) needs no trim. Out for the write: w1 = now, w2 = the live count.
do
  local live = redis.call('ZCARD', key)
  if live > 0 then
    live = live - redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - period))
  end
  if live + cost > limit then
    local rank = string.format('%d', live + cost - limit - 1)
    local nth = redis.call('ZRANGE', key, rank, rank, 'WITHSCORES')
    local newest = redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')
    local left = tonumber(newest[2]) + period - now
    ok, remaining, reset = false, limit > live and limit - live or 0, left > 0 and left or 0
    retry = tonumber(nth[2]) + period - now
  else
    ok, remaining, reset, retry, w1, w2 = true, limit - live - cost, period, 0, now, live
  end
end
