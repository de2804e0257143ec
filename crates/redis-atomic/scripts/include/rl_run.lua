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
local function rl_replay(raw, now)
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

-- rl_run(request_key, request_id, request_ttl, cost, now, limits): all-or-nothing over `limits`
-- ({fn, key, args} each): every limit is checked (reads only) before any is charged, so a refusal
-- by one leaves every other untouched. Reply: {status, a, b, n, (remaining, reset, retry) * n}.
local function rl_run(request_key, request_id, request_ttl, cost, now, limits)
  if request_id ~= '' then
    local raw = redis.call('GET', request_key)
    if raw then
      local replay = rl_replay(raw, now)
      if replay then return replay end
    end
  end
  local checks, ok, remaining, reset, retry = {}, true, math.huge, 0, 0
  for i, l in ipairs(limits) do
    local c, err = l.fn(l.key, l.args.limit, l.args.period, l.args.burst, cost, now)
    if not c then return err end
    checks[i] = c
    ok = ok and c.ok
    remaining, reset, retry = math.min(remaining, c.remaining), math.max(reset, c.reset), math.max(retry, c.retry)
  end
  local out = {ok and 'allowed' or 'limited', ok and remaining or retry, reset, #checks}
  for _, c in ipairs(checks) do
    -- refused: a limit that would admit reports what it has now, since nothing is charged
    local r = c.remaining
    if not ok and c.ok then r = r + cost end
    out[#out + 1], out[#out + 2], out[#out + 3] = r, c.reset, c.retry
  end
  if not ok then return out end
  local record = {rl_fmt(now + request_ttl), rl_fmt(remaining), rl_fmt(now + reset)}
  for _, c in ipairs(checks) do
    c.commit()
    record[#record + 1] = rl_fmt(c.remaining) .. ',' .. rl_fmt(now + c.reset)
  end
  if request_id ~= '' then
    redis.call('SET', request_key, table.concat(record, '|'), 'PX', rl_px(request_ttl))
  end
  return out
end
