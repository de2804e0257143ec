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
