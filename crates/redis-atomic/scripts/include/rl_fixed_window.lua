-- rl_fixed_window(key, limit, period, burst, cost, now): at most `limit` units per window of
-- `period` µs aligned to the epoch. State: "<window_start>:<count>".
local function rl_fixed_window(key, limit, period, burst, cost, now)
  local ws, count = rl_div(now, period) * period, 0
  local raw = redis.call('GET', key)
  if raw then
    local w, n = string.match(raw, '^(%d+):(%d+)$')
    if not w then return rl_bad_state(key) end
    w, n = tonumber(w), tonumber(n)
    if w >= ws then ws, count = w, n end -- a clock that steps back never reopens a window
  end
  local reset = ws + period - now
  if count + cost > limit then
    return {ok = false, remaining = math.max(0, limit - count), reset = reset, retry = reset}
  end
  count = count + cost
  return {ok = true, remaining = limit - count, reset = reset, retry = 0, commit = function()
    redis.call('SET', key, rl_fmt(ws) .. ':' .. rl_fmt(count), 'PX', rl_px(reset))
  end}
end
