-- rl_gcra(key, limit, period, burst, cost, now): the generic cell rate algorithm. Emission
-- interval T = ceil(period / limit) µs, tolerance burst * T. State: the theoretical arrival time
-- (TAT, absolute µs). A request of cost c is admitted when now >= max(TAT, now) + c*T - burst*T:
-- exactly `burst` at once from idle, then one per T (no off-by-one interval).
local function rl_gcra(key, limit, period, burst, cost, now)
  local interval = rl_div(period + limit - 1, limit)
  local tat = now
  local raw = redis.call('GET', key)
  if raw then
    tat = tonumber(string.match(raw, '^(%d+)$'))
    if not tat then return rl_bad_state(key) end
    tat = math.max(tat, now)
  end
  local new_tat = tat + cost * interval
  local allow_at = new_tat - burst * interval
  if now < allow_at then
    local room = now + burst * interval - tat
    return {ok = false, remaining = room > 0 and rl_div(room, interval) or 0,
      retry = allow_at - now, reset = tat - now}
  end
  return {ok = true, remaining = rl_div(now - allow_at, interval), reset = new_tat - now, retry = 0,
    commit = function()
      redis.call('SET', key, rl_fmt(new_tat), 'PX', rl_px(new_tat - now))
    end}
end
