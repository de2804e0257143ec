-- rl_check_args(algo, limit, period, burst, cost): validated numbers, or nil plus an error reply.
-- Bounds match redis_atomic::ratelimit::Limit, so a caller bypassing the Rust types is refused too.
local function rl_check_args(algo, limit, period, burst, cost)
  local lim, bad = int_arg(limit, 'limit', 1, algo == 'sl' and 10000 or 1000000000)
  if not lim then return nil, bad end
  local per, bad2 = int_arg(period, 'period_us', 1000, 31622400000000)
  if not per then return nil, bad2 end
  local bur, bad3 = int_arg(burst, 'burst', 1, 1000000000)
  if not bur then return nil, bad3 end
  local bucket = algo == 'tb' or algo == 'gcra'
  if bucket and bur * rl_div(per + lim - 1, lim) > 4503599627370496 then
    return nil, redis.error_reply('ERR redis-atomic: burst * emission interval must not exceed 2^52 us')
  end
  if algo == 'sw' and lim * per > 4503599627370496 then
    return nil, redis.error_reply('ERR redis-atomic: limit * period_us must not exceed 2^52 for the sliding window')
  end
  if not bucket then bur = lim end
  local c, bad4 = int_arg(cost, 'cost', 1, 1000000000)
  if not c then return nil, bad4 end
  if c > bur then return nil, redis.error_reply('ERR redis-atomic: cost exceeds burst') end
  return {limit = lim, period = per, burst = bur}
end

-- rl_now(test_now): the server's clock in µs; a test clock only when the caller sent one (the
-- library sends it only with its `test-clock` feature, never by default).
local function rl_now(test_now)
  if test_now == '' then
    local t = redis.call('TIME')
    return tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return int_arg(test_now, 'test_now_us', 0, 9007199254740991)
end

-- Request record: "<expires_at>|<remaining>|<reset_at>|<remaining_1>,<reset_at_1>|...", kept only
-- for admitted requests (a refused one consumed nothing, so deciding it again is harmless).
local function rl_replay(request_key, now)
  local raw = redis.call('GET', request_key)
  if not raw then return nil end
  local fields = {}
  for f in string.gmatch(raw, '[^|]+') do fields[#fields + 1] = f end
  local exp = tonumber(fields[1])
  if not exp or exp <= now or #fields < 4 then return nil end
  local out = {'replayed', tonumber(fields[2]), math.max(0, tonumber(fields[3]) - now), #fields - 3}
  for i = 4, #fields do
    local r, t = string.match(fields[i], '^(%d+),(%d+)$')
    if not r then return nil end
    out[#out + 1], out[#out + 2], out[#out + 3] = tonumber(r), math.max(0, tonumber(t) - now), 0
  end
  return out
end

-- rl_record(...): stores an admitted request's decision; statuses = {remaining_1, reset_1, ...}.
local function rl_record(request_key, request_ttl, now, remaining, reset, statuses)
  local record = {rl_fmt(now + request_ttl), rl_fmt(remaining), rl_fmt(now + reset)}
  for i = 1, #statuses, 2 do
    record[#record + 1] = rl_fmt(statuses[i]) .. ',' .. rl_fmt(now + statuses[i + 1])
  end
  redis.call('SET', request_key, table.concat(record, '|'), 'PX', rl_px(request_ttl))
end

-- rl_one(...): the decision for a single limit (the per-algorithm scripts). Reply as rl_run's.
local function rl_one(request_key, request_id, request_ttl, cost, now, check, write, key, a)
  if request_id ~= '' then
    local replay = rl_replay(request_key, now)
    if replay then return replay end
  end
  local ok, remaining, reset, retry, w1, w2 = check(key, a.limit, a.period, a.burst, cost, now)
  if ok == nil then return remaining end
  if not ok then return {'limited', retry, reset, 1, remaining, reset, retry} end
  write(key, w1, w2, a.period, cost)
  if request_id ~= '' then
    rl_record(request_key, request_ttl, now, remaining, reset, {remaining, reset})
  end
  return {'allowed', remaining, reset, 1, remaining, reset, 0}
end

-- rl_run(request_key, request_id, request_ttl, cost, now, limits): all-or-nothing over `limits`
-- ({check, write, key, limit, period, burst} each): every limit is checked before
-- any is charged (checks only read, but for the sliding log trimming entries that already
-- expired), so a refusal by one leaves every other limit as it was.
-- Reply: {status, a, b, n, (remaining, reset, retry) * n}.
local function rl_run(request_key, request_id, request_ttl, cost, now, limits)
  if request_id ~= '' then
    local replay = rl_replay(request_key, now)
    if replay then return replay end
  end
  local n, res = #limits, {}
  local ok, remaining, reset, retry = true, nil, 0, 0
  for i = 1, n do
    local l = limits[i]
    local a, r, t, y, w1, w2 = l.check(l.key, l.limit, l.period, l.burst, cost, now)
    if a == nil then return r end
    res[i] = {a, r, t, y, w1, w2}
    if not a then ok = false end
    if remaining == nil or r < remaining then remaining = r end
    if t > reset then reset = t end
    if y > retry then retry = y end
  end
  local out = {ok and 'allowed' or 'limited', ok and remaining or retry, reset, n}
  local statuses = {}
  for i = 1, n do
    local c = res[i]
    local r = c[2]
    if not ok and c[1] then r = r + cost end -- refused: report what it has, nothing is charged
    out[2 + 3 * i], out[3 + 3 * i], out[4 + 3 * i] = r, c[3], c[4]
    statuses[2 * i - 1], statuses[2 * i] = r, c[3]
  end
  if not ok then return out end
  for i = 1, n do
    local l, c = limits[i], res[i]
    l.write(l.key, c[5], c[6], l.period, cost)
  end
  if request_id ~= '' then
    rl_record(request_key, request_ttl, now, remaining, reset, statuses)
  end
  return out
end
