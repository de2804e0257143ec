-- Fragment (rl_policy): with a request id (ARGV[2]), records an admitted request's decision
-- under KEYS[1] for `request_ttl` µs (format: see rl_replay). In: `now`, `request_ttl`, the
-- decision's `remaining` and `reset`, and `statuses` = {remaining_1, reset_1, ...}.
if ARGV[2] ~= '' then
  local record = {string.format('%d|%d|%d', now + request_ttl, remaining, now + reset)}
  for i = 1, #statuses, 2 do
    record[#record + 1] = string.format('%d,%d', statuses[i], now + statuses[i + 1])
  end
  redis.call('SET', KEYS[1], table.concat(record, '|'), 'PX', string.format('%d', math.floor((request_ttl + 999) / 1000) + 1000))
end
