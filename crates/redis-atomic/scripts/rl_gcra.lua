#!lua
--- summary: consume cost units of one GCRA limit on server time, all or nothing
--- invariant: at most burst units at once, then one per ceil(period_us / limit); a refused request changes nothing
--- keys: request state
--- args: cost request_id request_ttl_us test_now_us limit period_us burst
--- returns: {'allowed', remaining, reset_us, 1, remaining, reset_us, 0} | {'limited', retry_us, reset_us, 1, remaining, reset_us, retry_us} | {'replayed', remaining, reset_us, 1, remaining, reset_us, 0}
--- retry: unsafe
--- version: 2
--@include int_arg
--@include rl_common
--@include rl_gcra
--@include rl_args
--@include rl_request
--@include rl_one
-- Retry: unsafe without a request id (a resend would charge twice). With one, an admitted request
-- is recorded under KEYS[1] and a resend within request_ttl_us replays it, charging nothing more.
local args, bad = rl_check_args('gcra', ARGV[5], ARGV[6], ARGV[7], ARGV[1])
if not args then return bad end
local ttl, bad_ttl = int_arg(ARGV[3], 'request_ttl_us', 1000, 86400000000)
if not ttl then return bad_ttl end
local now, bad_now = rl_now(ARGV[4])
if not now then return bad_now end
return rl_one(KEYS[1], ARGV[2], ttl, tonumber(ARGV[1]), now, rl_gcra, rl_gcra_write, KEYS[2], args)
