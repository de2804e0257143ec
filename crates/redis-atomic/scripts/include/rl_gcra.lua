-- Fragment rl_gcra: the generic cell rate algorithm (contract: rl_fixed_window). Emission
-- interval T = ceil(period / limit) µs, tolerance burst * T. State: the theoretical arrival time
-- (TAT, absolute µs). A request of cost c is admitted when now >= max(TAT, now) + c*T - burst*T:
-- exactly `burst` at once from idle, then one per T (no off-by-one interval).
do
  local interval = math.floor((period + limit - 1) / limit)
  local tat = now
  local raw = redis.call('GET', key)
  if raw then
    if not string.find(raw, '^%d+$') then
      return redis.error_reply('WRONGTYPE redis-atomic: ' .. key .. ' does not hold rate-limit state')
    end
    tat = raw + 0 -- digits: see rl_fixed_window
    if tat < now then tat = now end
  end
  local new_tat = tat + cost * interval
  local allow_at = new_tat - burst * interval
  if now < allow_at then
    local room = now + burst * interval - tat
    ok, remaining, reset, retry = false, room > 0 and math.floor(room / interval) or 0, tat - now, allow_at - now
  else
    ok, remaining, reset, retry = true, math.floor((now - allow_at) / interval), new_tat - now, 0
    w1, w2 = string.format('%d', new_tat), new_tat - now
  end
end
