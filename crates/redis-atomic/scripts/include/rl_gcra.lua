-- rl_gcra: the generic cell rate algorithm. Emission interval T = ceil(period / limit) µs,
-- tolerance burst * T. State: the theoretical arrival time (TAT, absolute µs). A request of cost c
-- is admitted when now >= max(TAT, now) + c*T - burst*T: exactly `burst` at once from idle, then
-- one per T (no off-by-one interval).
local function rl_gcra(key, limit, period, burst, cost, now)
  local interval = rl_div(period + limit - 1, limit)
  local tat = now
  local raw = redis.call('GET', key)
  if raw then
    tat = tonumber(string.match(raw, '^(%d+)$'))
    if not tat then return rl_bad_state(key) end
    if tat < now then tat = now end
  end
  local new_tat = tat + cost * interval
  local allow_at = new_tat - burst * interval
  if now < allow_at then
    local room = now + burst * interval - tat
    return false, room > 0 and rl_div(room, interval) or 0, tat - now, allow_at - now
  end
  return true, rl_div(now - allow_at, interval), new_tat - now, 0, rl_fmt(new_tat), rl_px(new_tat - now)
end
local rl_gcra_write = rl_set_write
