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
