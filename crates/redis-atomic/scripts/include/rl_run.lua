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
