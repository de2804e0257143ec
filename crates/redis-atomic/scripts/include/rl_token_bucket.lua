-- Fragment rl_token_bucket: a bucket of `burst` tokens refilled by one token every interval =
-- ceil(period / limit) µs (contract: rl_fixed_window). State: "<tokens>:<refilled_at>"; a full
-- bucket accrues nothing (refilled_at moves to now).
do
  local interval = math.floor((period + limit - 1) / limit)
  local tokens, at = burst, now
  local raw = redis.call('GET', key)
  if raw then
    local t, a = string.match(raw, '^(%d+):(%d+)$')
    if not t then return redis.error_reply('WRONGTYPE redis-atomic: ' .. key .. ' does not hold rate-limit state') end
    tokens, at = t + 0, a + 0 -- digits: see rl_fixed_window
    if now > at then
      local n = math.floor((now - at) / interval)
      tokens, at = tokens + n, at + n * interval
    end
  end
  if tokens >= burst then
    tokens = burst
    if now > at then at = now end
  end
  if tokens < cost then
    reset = at + (burst - tokens) * interval - now
    ok, remaining, reset, retry = false, tokens, reset > 0 and reset or 0, at + (cost - tokens) * interval - now
  else
    tokens = tokens - cost
    reset = at + (burst - tokens) * interval - now
    if reset < 0 then reset = 0 end
    ok, remaining, retry = true, tokens, 0
    w1, w2 = string.format('%d:%d', tokens, at), reset
  end
end
