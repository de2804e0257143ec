-- rl_token_bucket(key, limit, period, burst, cost, now): a bucket of `burst` tokens refilled by one
-- token every interval = ceil(period / limit) µs. State: "<tokens>:<refilled_at>"; a full bucket
-- accrues nothing (refilled_at moves to now).
local function rl_token_bucket(key, limit, period, burst, cost, now)
  local interval = rl_div(period + limit - 1, limit)
  local tokens, at = burst, now
  local raw = redis.call('GET', key)
  if raw then
    local t, a = string.match(raw, '^(%d+):(%d+)$')
    if not t then return rl_bad_state(key) end
    tokens, at = tonumber(t), tonumber(a)
    if now > at then
      local n = rl_div(now - at, interval)
      tokens, at = tokens + n, at + n * interval
    end
  end
  if tokens >= burst then tokens, at = burst, math.max(at, now) end
  if tokens < cost then
    return {ok = false, remaining = tokens, retry = at + (cost - tokens) * interval - now,
      reset = math.max(0, at + (burst - tokens) * interval - now)}
  end
  tokens = tokens - cost
  local reset = math.max(0, at + (burst - tokens) * interval - now)
  return {ok = true, remaining = tokens, reset = reset, retry = 0, commit = function()
    redis.call('SET', key, rl_fmt(tokens) .. ':' .. rl_fmt(at), 'PX', rl_px(reset))
  end}
end
