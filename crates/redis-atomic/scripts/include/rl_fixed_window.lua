-- rl_fixed_window: at most `limit` units per window of `period` µs aligned to the epoch.
-- State: "<window_start>:<count>".
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
    return false, limit > count and limit - count or 0, reset, reset
  end
  count = count + cost
  return true, limit - count, reset, 0, rl_fmt(ws) .. ':' .. rl_fmt(count), rl_px(reset)
end
local rl_fixed_window_write = rl_set_write
