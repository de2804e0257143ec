-- rl_check_args(algo, limit, period, burst, cost): validated numbers, or nil plus an error reply.
-- Bounds match redis_atomic::ratelimit::Limit, so a caller bypassing the Rust types is refused too.
local function rl_check_args(algo, limit, period, burst, cost)
  local lim, bad = int_arg(limit, 'limit', 1, algo == 'sl' and 10000 or 1000000000)
  if not lim then return nil, bad end
  local per, bad2 = int_arg(period, 'period_us', 1000, 31622400000000)
  if not per then return nil, bad2 end
  local bur, bad3 = int_arg(burst, 'burst', 1, 1000000000)
  if not bur then return nil, bad3 end
  local bucket = algo == 'tb' or algo == 'gcra'
  if bucket and bur * rl_div(per + lim - 1, lim) > 4503599627370496 then
    return nil, redis.error_reply('ERR redis-atomic: burst * emission interval must not exceed 2^52 us')
  end
  if algo == 'sw' and lim * per > 4503599627370496 then
    return nil, redis.error_reply('ERR redis-atomic: limit * period_us must not exceed 2^52 for the sliding window')
  end
  if not bucket then bur = lim end
  local c, bad4 = int_arg(cost, 'cost', 1, 1000000000)
  if not c then return nil, bad4 end
  if c > bur then return nil, redis.error_reply('ERR redis-atomic: cost exceeds burst') end
  return {limit = lim, period = per, burst = bur}
end

-- rl_now(test_now): the server's clock in µs; a test clock only when the caller sent one (the
-- library sends it only with its `test-clock` feature, never by default).
local function rl_now(test_now)
  if test_now == '' then
    local t = redis.call('TIME')
    return tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return int_arg(test_now, 'test_now_us', 0, 9007199254740991)
end
