-- rl_sliding_window: the sliding window counter. Windows of `period` µs are aligned to the
-- epoch; the previous window's count weighs (period - elapsed) / period. Admit when
-- prev * (period - elapsed) + (curr + cost) * period <= limit * period (integers; limit * period
-- <= 2^52). State: "<window_start>:<prev>:<curr>".
local function rl_sliding_window(key, limit, period, burst, cost, now)
  local ws, prev, curr = rl_div(now, period) * period, 0, 0
  local raw = redis.call('GET', key)
  if raw then
    local w, p, c = string.match(raw, '^(%d+):(%d+):(%d+)$')
    if not w then return rl_bad_state(key) end
    w, p, c = tonumber(w), tonumber(p), tonumber(c)
    if w >= ws then ws, prev, curr = w, p, c elseif w == ws - period then prev = c end
  end
  if prev > limit then prev = limit end
  if curr > limit then curr = limit end
  local elapsed = now > ws and now - ws or 0
  local weight = period - elapsed
  local weighted = rl_div(prev * weight + period - 1, period)
  local room = limit - curr - cost
  if room >= 0 and prev * weight <= room * period then
    local reset = 2 * period - elapsed
    return true, room - weighted, reset, 0, rl_fmt(ws) .. ':' .. rl_fmt(prev) .. ':' .. rl_fmt(curr + cost), rl_px(reset)
  end
  local retry
  if room >= 0 then
    retry = period - rl_div(room * period, prev) - elapsed
  else -- not before the next window, where this window's count becomes the weighted one
    local d = period - rl_div((limit - cost) * period, curr)
    retry = period - elapsed + (d > 0 and d or 0)
  end
  local reset = 0
  if curr > 0 then reset = 2 * period - elapsed elseif prev > 0 then reset = weight end
  local left = limit - curr - weighted
  return false, left > 0 and left or 0, reset, retry
end
local rl_sliding_window_write = rl_set_write
