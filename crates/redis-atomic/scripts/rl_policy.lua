#!lua
--- summary: consume cost units of every limit of a policy (any algorithms), or each limit its own hits, all or nothing
--- invariant: a request is charged to every limit or to none; no limit is ever over-consumed
--- keys: request limit...
--- args: cost request_id request_ttl_us test_now_us spec...
--- returns: {'allowed', remaining, reset:us, n, limits:[remaining, reset:us, retry:us] * n} | {'limited', retry:us, reset:us, n, limits:[remaining, reset:us, retry:us] * n} | {'replayed', remaining, reset:us, n, limits:[remaining, reset:us, retry:us] * n}
--- retry: unsafe
--- version: 8
--- batch: yes
-- spec: four arguments per limit, in KEYS order: algorithm (fw|aw|sl|sw|tb|gcra) limit period_us burst.
-- The entries form (redis_atomic::ratelimit::EntryLimiter; 1..32 limits, each its own identity
-- under one hash tag) gives six per limit: algorithm limit period_us burst hits mode, and ignores
-- ARGV[1]. hits 0 checks as a request of 1 would and charges nothing. mode: h (enforced: refusing
-- vetoes the request), s (shadow: decided and charged when it admits, never vetoes), q (quota:
-- the request is refused when every quota limit refuses). A limit that refuses itself is never
-- charged; in this form its retry is at least 1 (retry 0 <=> it admits).
-- Also the script for one limit with a request id (the rl_<algorithm> scripts keep no records).
-- Every limit is checked before any is charged (checks only read, but for the sliding log
-- trimming entries that already expired), so a refusal by one leaves every other limit as it
-- was: node-rate-limiter-flexible's union charges the limits that passed when another refuses
-- (#280); this never does. Flat on purpose: fragments, no functions (docs/scripts.md "Fragments").
local n, width = #KEYS - 1, 4
if n >= 1 and #ARGV == 4 + 6 * n then width = 6 end
if n < 1 or n > (width == 6 and 32 or 8) or #ARGV ~= 4 + width * n then
  return redis.error_reply('ERR redis-atomic: a policy takes 1..8 limits of 4 arguments each (or 1..32 of 6)')
end
local specs = {}
for i = 1, n do
  local base = 4 + width * (i - 1)
  local algo, limit, period, burst = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3], ARGV[base + 4]
  local cost, mode = ARGV[1], 'h'
  if width == 6 then cost, mode = ARGV[base + 5], ARGV[base + 6] end
  if algo ~= 'fw' and algo ~= 'aw' and algo ~= 'sl' and algo ~= 'sw' and algo ~= 'tb' and algo ~= 'gcra' then
    return redis.error_reply('ERR redis-atomic: unknown algorithm')
  end
  if mode ~= 'h' and mode ~= 's' and mode ~= 'q' then
    return redis.error_reply('ERR redis-atomic: mode must be h, s or q')
  end
  if algo == 'aw' and ARGV[4] ~= '' then
    return redis.error_reply('ERR redis-atomic: the anchored window runs on key expiry and takes no test clock')
  end
  for j = 2, i do
    if KEYS[j] == KEYS[i + 1] then return redis.error_reply('ERR redis-atomic: duplicate limit key') end
  end
  local check_only = width == 6 and cost == '0' -- decided as a request of 1, charged nothing
  if check_only then cost = '1' end
--@include rl_args
  specs[i] = {algo, limit, period, burst, cost, check_only, mode}
end
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
-- Check every limit: each one's {ok, remaining, reset, retry, w1, w2}, and the aggregate over the
-- limits that can veto (admitted by all, the least remaining, the latest reset, the longest retry).
local checks, admit, least, latest, longest, quotas, quota_ok = {}, true, nil, 0, 0, 0, false
for i = 1, n do
  local algo, limit, period, burst, cost = specs[i][1], specs[i][2], specs[i][3], specs[i][4], specs[i][5]
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
  if width == 6 and not ok and retry < 1 then retry = 1 end
  checks[i] = {ok, remaining, reset, retry, w1, w2}
  local mode = specs[i][7]
  if mode == 'q' then
    quotas = quotas + 1
    if ok then quota_ok = true end
  end
  if mode == 'h' and not ok then admit = false end
  if mode ~= 's' then
    if least == nil or remaining < least then least = remaining end
    if reset > latest then latest = reset end
    if retry > longest then longest = retry end
  end
end
if quotas > 0 and not quota_ok then admit = false end
local out, statuses = {admit and 'allowed' or 'limited', admit and (least or 0) or longest, latest, n}, {}
for i = 1, n do
  local c = checks[i]
  local r = c[2]
  -- Not charged (refused, or a check only): report what it has
  if c[1] and (not admit or specs[i][6]) then r = r + specs[i][5] end
  out[2 + 3 * i], out[3 + 3 * i], out[4 + 3 * i] = r, c[3], c[4]
  statuses[2 * i - 1], statuses[2 * i] = r, c[3]
end
if not admit then return out end
for i = 1, n do
  if checks[i][1] and not specs[i][6] then
    local key, period, cost, w1, w2 = KEYS[i + 1], specs[i][3], specs[i][5], checks[i][5], checks[i][6]
    if specs[i][1] == 'sl' then
--@include rl_sliding_log_write
    elseif specs[i][1] == 'aw' then
--@include rl_anchored_write
    else
--@include rl_set_write
    end
  end
end
local remaining, reset = least or 0, latest
--@include rl_record
return out
