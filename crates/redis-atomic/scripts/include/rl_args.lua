-- Fragment (not a function; see docs/scripts.md "Fragments"): validates one limit.
-- In: locals `algo` (fw|sl|sw|tb|gcra), `limit`, `period`, `burst`, `cost` as sent (strings).
-- Out: the same locals as numbers (burst = limit for the algorithms without one), or the script
-- returns an error reply. Bounds match redis_atomic::ratelimit::Limit, so a caller bypassing the
-- Rust types is refused too; they keep every product below 2^53, where a double is an exact
-- integer and math.floor(a / b) is exact floor division (for 0 <= a < 2^53, b >= 1 the quotient
-- is at least 1/b below the next integer, more than half a unit in its last place). Numbers
-- become strings through string.format('%d', n) (integer formatting, exact below 2^63), never
-- '%.0f' or a number handed to redis.call: those format a double, two to three times the cost
-- (measured with tools/rl-script-cost.py --instructions).
do
  -- Most requests cost 1: a string comparison instead of a parse (tonumber reads a string twice).
  cost = cost == '1' and 1 or tonumber(cost)
  limit, period, burst = tonumber(limit), tonumber(period), tonumber(burst)
  local most = algo == 'sl' and 10000 or 1000000000
  if not limit or limit % 1 ~= 0 or limit < 1 or limit > most then
    return redis.error_reply('ERR redis-atomic: limit must be an integer in 1..' .. most)
  end
  if not period or period % 1 ~= 0 or period < 1000 or period > 31622400000000 then
    return redis.error_reply('ERR redis-atomic: period_us must be an integer in 1000..31622400000000')
  end
  if not burst or burst % 1 ~= 0 or burst < 1 or burst > 1000000000 then
    return redis.error_reply('ERR redis-atomic: burst must be an integer in 1..1000000000')
  end
  if algo == 'tb' or algo == 'gcra' then
    if burst * math.floor((period + limit - 1) / limit) > 4503599627370496 then
      return redis.error_reply('ERR redis-atomic: burst * emission interval must not exceed 2^52 us')
    end
  else
    if algo == 'sw' and limit * period > 4503599627370496 then
      return redis.error_reply('ERR redis-atomic: limit * period_us must not exceed 2^52 for the sliding window')
    end
    burst = limit
  end
  if not cost or cost % 1 ~= 0 or cost < 1 or cost > 1000000000 then
    return redis.error_reply('ERR redis-atomic: cost must be an integer in 1..1000000000')
  end
  if cost > burst then return redis.error_reply('ERR redis-atomic: cost exceeds burst') end
end
