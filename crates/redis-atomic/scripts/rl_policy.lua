#!lua
--- summary: consume cost units of every limit of a policy (any algorithms), all or nothing
--- invariant: a request is charged to every limit or to none; no limit is ever over-consumed
--- keys: request limit...
--- args: cost request_id request_ttl_us test_now_us spec...
--- returns: {'allowed', remaining, reset:us, n, limits:[remaining, reset:us, retry:us] * n} | {'limited', retry:us, reset:us, n, limits:[remaining, reset:us, retry:us] * n} | {'replayed', remaining, reset:us, n, limits:[remaining, reset:us, retry:us] * n}
--- retry: unsafe
--- version: 7
--- batch: yes
-- spec: four arguments per limit, in KEYS order: algorithm (fw|aw|sl|sw|tb|gcra) limit period_us burst.
-- Also the script for one limit with a request id (the rl_<algorithm> scripts keep no records).
-- Every limit is checked before any is charged (checks only read, but for the sliding log
-- trimming entries that already expired), so a refusal by one leaves every other limit as it
-- was: node-rate-limiter-flexible's union charges the limits that passed when another refuses
-- (#280); this never does. Flat on purpose: fragments, no functions (docs/scripts.md "Fragments").
local n = #KEYS - 1
if n < 1 or n > 8 or #ARGV ~= 4 + 4 * n then
  return redis.error_reply('ERR redis-atomic: a policy takes 1..8 limits of 4 arguments each')
end
local specs = {}
for i = 1, n do
  local base = 4 * i
  local algo, limit, period, burst, cost = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3], ARGV[base + 4], ARGV[1]
  if algo ~= 'fw' and algo ~= 'aw' and algo ~= 'sl' and algo ~= 'sw' and algo ~= 'tb' and algo ~= 'gcra' then
    return redis.error_reply('ERR redis-atomic: unknown algorithm')
  end
  if algo == 'aw' and ARGV[4] ~= '' then
    return redis.error_reply('ERR redis-atomic: the anchored window runs on key expiry and takes no test clock')
  end
  for j = 2, i do
    if KEYS[j] == KEYS[i + 1] then return redis.error_reply('ERR redis-atomic: duplicate limit key') end
  end
--@include rl_args
  specs[i] = {algo, limit, period, burst}
end
local cost = tonumber(ARGV[1]) -- validated with every limit above
local request_ttl -- the request record's lifetime, needed (and checked) only with a request id
if ARGV[2] ~= '' then
  request_ttl = tonumber(ARGV[3])
  if not request_ttl or request_ttl % 1 ~= 0 or request_ttl < 1000 or request_ttl > 86400000000 then
    return redis.error_reply('ERR redis-atomic: request_ttl_us must be an integer in 1000..86400000000')
  end
end
local clock, now = ARGV[4]
--@include rl_clock
--@include rl_replay
-- Check every limit: each one's {ok, remaining, reset, retry, w1, w2}, and the aggregate
-- (admitted by all, the least remaining, the latest reset, the longest retry).
local checks, admit, least, latest, longest = {}, true, nil, 0, 0
for i = 1, n do
  local algo, limit, period, burst = specs[i][1], specs[i][2], specs[i][3], specs[i][4]
  local key, ok, remaining, reset, retry, w1, w2 = KEYS[i + 1]
  if algo == 'fw' then
--@include rl_fixed_window
  elseif algo == 'aw' then
--@include rl_anchored_window
  elseif algo == 'sl' then
--@include rl_sliding_log
  elseif algo == 'sw' then
--@include rl_sliding_window
  elseif algo == 'tb' then
--@include rl_token_bucket
  else
--@include rl_gcra
  end
  checks[i] = {ok, remaining, reset, retry, w1, w2}
  if not ok then admit = false end
  if least == nil or remaining < least then least = remaining end
  if reset > latest then latest = reset end
  if retry > longest then longest = retry end
end
local out, statuses = {admit and 'allowed' or 'limited', admit and least or longest, latest, n}, {}
for i = 1, n do
  local c = checks[i]
  local r = c[2]
  if not admit and c[1] then r = r + cost end -- refused: report what it has, nothing is charged
  out[2 + 3 * i], out[3 + 3 * i], out[4 + 3 * i] = r, c[3], c[4]
  statuses[2 * i - 1], statuses[2 * i] = r, c[3]
end
if not admit then return out end
for i = 1, n do
  local key, period, w1, w2 = KEYS[i + 1], specs[i][3], checks[i][5], checks[i][6]
  if specs[i][1] == 'sl' then
--@include rl_sliding_log_write
  elseif specs[i][1] == 'aw' then
--@include rl_anchored_write
  else
--@include rl_set_write
  end
end
local remaining, reset = least, latest
--@include rl_record
return out
