-- Fragment rl_sliding_window: the sliding window counter (contract: rl_fixed_window). Windows of
-- `period` µs are aligned to the epoch; the previous window's count weighs
-- (period - elapsed) / period. Admit when prev * (period - elapsed) + (curr + cost) * period <=
-- limit * period (integers; limit * period <= 2^52). State: "<window_start>:<prev>:<curr>".
do
  local ws, prev, curr, expiry = math.floor(now / period) * period, 0, 0, nil
  local raw = redis.call('GET', key)
  if raw then
    local w, p, c = string.match(raw, '^(%d+):(%d+):(%d+)$')
    if not w then return redis.error_reply('WRONGTYPE redis-atomic: ' .. key .. ' does not hold rate-limit state') end
    w, p, c = w + 0, p + 0, c + 0 -- digits: see rl_fixed_window
    -- Same window: the key already expires right (rl_set_write keeps its TTL).
    if w >= ws then ws, prev, curr, expiry = w, p, c, false elseif w == ws - period then prev = c end
  end
  if prev > limit then prev = limit end
  if curr > limit then curr = limit end
  local elapsed = now > ws and now - ws or 0
  local weight = period - elapsed
  local weighted = math.floor((prev * weight + period - 1) / period)
  local room = limit - curr - cost
  if room >= 0 and prev * weight <= room * period then
    ok, remaining, reset, retry = true, room - weighted, 2 * period - elapsed, 0
    w1, w2 = string.format('%d:%d:%d', ws, prev, curr + cost), expiry == nil and reset
  else
    if room >= 0 then
      retry = period - math.floor(room * period / prev) - elapsed
    else -- not before the next window, where this window's count becomes the weighted one
      local d = period - math.floor((limit - cost) * period / curr)
      retry = period - elapsed + (d > 0 and d or 0)
    end
    reset = 0
    if curr > 0 then reset = 2 * period - elapsed elseif prev > 0 then reset = weight end
    local left = limit - curr - weighted
    ok, remaining = false, left > 0 and left or 0
  end
end
