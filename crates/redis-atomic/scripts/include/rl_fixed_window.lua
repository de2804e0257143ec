-- Fragment rl_fixed_window: at most `limit` units per window of `period` µs aligned to the epoch.
-- State: "<window_start>:<count>". The check contract of every algorithm fragment:
-- In: locals `key`, `limit`, `period`, `burst`, `cost`, `now` (numbers, validated by rl_args).
-- Out: assigns `ok` (admit?), `remaining`, `reset` (µs until full capacity), `retry` (µs until
-- this limit admits the request; 0 when it does) and, when admitted, `w1`, `w2` for the
-- algorithm's write fragment (rl_set_write: the new value, µs until it stops mattering or false
-- when the key's expiry is already right). Reads only (the sliding log also trims what already expired).
-- State it cannot parse makes the script return a WRONGTYPE error.
do
  local ws, count, expiry = math.floor(now / period) * period, 0, nil
  local raw = redis.call('GET', key)
  if raw then
    local w, n = string.match(raw, '^(%d+):(%d+)$')
    if not w then return redis.error_reply('WRONGTYPE redis-atomic: ' .. key .. ' does not hold rate-limit state') end
    w, n = w + 0, n + 0 -- digits (matched above): arithmetic converts them once, tonumber twice
    -- A clock that steps back never reopens a window; the window's key already expires right.
    if w >= ws then ws, count, expiry = w, n, false end
  end
  reset = ws + period - now
  if count + cost > limit then
    ok, remaining, retry = false, limit > count and limit - count or 0, reset
  else
    count = count + cost
    ok, remaining, retry = true, limit - count, 0
    w1, w2 = string.format('%d:%d', ws, count), expiry == nil and reset
  end
end
