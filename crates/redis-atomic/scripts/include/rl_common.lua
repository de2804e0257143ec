-- Rate-limit arithmetic: integers in µs, exact because every value stays below 2^53 (the
-- argument checks bound limit × period and burst × interval by 2^52).
-- Each algorithm is a pair: rl_<algo>(key, limit, period, burst, cost, now) checks, reading only,
-- and returns ok, remaining, reset_us, retry_us, w1, w2 (or nil plus an error reply);
-- rl_<algo>_write(key, w1, w2, period, cost) charges, given what the check returned.
-- rl_div(a, b): floor(a / b) for integers 0 <= a < 2^53, b >= 1, corrected for rounding.
local function rl_div(a, b)
  local q = math.floor(a / b)
  if q * b > a then q = q - 1 elseif (q + 1) * b <= a then q = q + 1 end
  return q
end
-- rl_px(us): a TTL in ms for state that stops mattering `us` µs from now, plus 1 s of slack so
-- expiry (on the real clock) never decides: the timestamps stored in the state do.
local function rl_px(us)
  return rl_div(us + 999, 1000) + 1000
end
local function rl_fmt(n)
  return string.format('%.0f', n)
end
local function rl_bad_state(key)
  return nil, redis.error_reply('WRONGTYPE redis-atomic: ' .. key .. ' does not hold rate-limit state')
end
-- The write of the algorithms whose state is one string: w1 the value, w2 its TTL in ms.
local function rl_set_write(key, value, px)
  redis.call('SET', key, value, 'PX', px)
end
