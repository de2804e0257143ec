#!lua
--- summary: consume cost units of every limit of a policy (any algorithms), all or nothing
--- invariant: a request is charged to every limit or to none; no limit is ever over-consumed
--- keys: request limit...
--- args: cost request_id request_ttl_us test_now_us spec...
--- returns: {'allowed', min_remaining, max_reset_us, n, (remaining, reset_us, 0) * n} | {'limited', max_retry_us, max_reset_us, n, (remaining, reset_us, retry_us) * n} | {'replayed', ...}
--- retry: unsafe
--- version: 2
--@include int_arg
--@include rl_common
--@include rl_fixed_window
--@include rl_sliding_log
--@include rl_sliding_window
--@include rl_token_bucket
--@include rl_gcra
--@include rl_args
--@include rl_request
--@include rl_run
-- spec: four arguments per limit, in KEYS order: algorithm (fw|sl|sw|tb|gcra) limit period_us burst.
-- Every limit is checked before any is charged (see rl_run): node-rate-limiter-flexible's union
-- charges the limits that passed when another refuses (#280); this never does.
local n = #KEYS - 1
if n < 1 or n > 8 or #ARGV ~= 4 + 4 * n then
  return redis.error_reply('ERR redis-atomic: a policy takes 1..8 limits of 4 arguments each')
end
local algorithms = {
  fw = {rl_fixed_window, rl_fixed_window_write}, sl = {rl_sliding_log, rl_sliding_log_write},
  sw = {rl_sliding_window, rl_sliding_window_write}, tb = {rl_token_bucket, rl_token_bucket_write},
  gcra = {rl_gcra, rl_gcra_write},
}
local limits = {}
for i = 1, n do
  local base = 4 * i
  local algorithm = algorithms[ARGV[base + 1]]
  if not algorithm then return redis.error_reply('ERR redis-atomic: unknown algorithm') end
  for j = 1, i - 1 do
    if limits[j].key == KEYS[i + 1] then return redis.error_reply('ERR redis-atomic: duplicate limit key') end
  end
  local args, bad = rl_check_args(ARGV[base + 1], ARGV[base + 2], ARGV[base + 3], ARGV[base + 4], ARGV[1])
  if not args then return bad end
  limits[i] = {check = algorithm[1], write = algorithm[2], key = KEYS[i + 1],
    limit = args.limit, period = args.period, burst = args.burst}
end
local ttl, bad_ttl = int_arg(ARGV[3], 'request_ttl_us', 1000, 86400000000)
if not ttl then return bad_ttl end
local now, bad_now = rl_now(ARGV[4])
if not now then return bad_now end
return rl_run(KEYS[1], ARGV[2], ttl, tonumber(ARGV[1]), now, limits)
