-- rl_sliding_window(key, limit, period, burst, cost, now): the sliding window counter. Windows of
-- `period` µs are aligned to the epoch; the previous window's count weighs (period - elapsed) /
-- period. Admit when prev * (period - elapsed) + (curr + cost) * period <= limit * period
-- (integers; limit * period <= 2^52). State: "<window_start>:<prev>:<curr>".
local function rl_sliding_window(key, limit, period, burst, cost, now)
  local ws, prev, curr = rl_div(now, period) * period, 0, 0
  local raw = redis.call('GET', key)
  if raw then
    local w, p, c = string.match(raw, '^(%d+):(%d+):(%d+)$')
    if not w then return rl_bad_state(key) end
    w, p, c = tonumber(w), tonumber(p), tonumber(c)
    if w >= ws then ws, prev, curr = w, p, c elseif w == ws - period then prev = c end
  end
  prev, curr = math.min(prev, limit), math.min(curr, limit)
  local elapsed = math.max(0, now - ws)
  local weight = period - elapsed
  local room = limit - curr - cost
  if room >= 0 and prev * weight <= room * period then
    curr = curr + cost
    return {ok = true, remaining = room - rl_div(prev * weight + period - 1, period),
      reset = 2 * period - elapsed, retry = 0, commit = function()
        redis.call('SET', key, rl_fmt(ws) .. ':' .. rl_fmt(prev) .. ':' .. rl_fmt(curr), 'PX', rl_px(2 * period - elapsed))
      end}
  end
  local retry
  if room >= 0 then
    retry = period - rl_div(room * period, prev) - elapsed
  else -- not before the next window, where this window's count becomes the weighted one
    retry = period - elapsed + math.max(0, period - rl_div((limit - cost) * period, curr))
  end
  local reset = 0
  if curr > 0 then reset = 2 * period - elapsed elseif prev > 0 then reset = weight end
  return {ok = false, remaining = math.max(0, limit - curr - rl_div(prev * weight + period - 1, period)),
    reset = reset, retry = retry}
end
