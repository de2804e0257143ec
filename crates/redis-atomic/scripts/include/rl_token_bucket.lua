-- rl_token_bucket: a bucket of `burst` tokens refilled by one token every interval =
-- ceil(period / limit) µs. State: "<tokens>:<refilled_at>"; a full bucket accrues nothing
-- (refilled_at moves to now).
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
  if tokens >= burst then
    tokens = burst
    if now > at then at = now end
  end
  if tokens < cost then
    local reset = at + (burst - tokens) * interval - now
    return false, tokens, reset > 0 and reset or 0, at + (cost - tokens) * interval - now
  end
  tokens = tokens - cost
  local reset = at + (burst - tokens) * interval - now
  if reset < 0 then reset = 0 end
  return true, tokens, reset, 0, rl_fmt(tokens) .. ':' .. rl_fmt(at), rl_px(reset)
end
local rl_token_bucket_write = rl_set_write
