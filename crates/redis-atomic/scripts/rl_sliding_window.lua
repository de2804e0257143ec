#!lua
--- summary: consume cost units of one sliding-window-counter limit on server time, all or nothing
--- invariant: at most limit units by the weighted two-window estimate; a refused request changes nothing
--- keys: state
--- args: cost limit period_us burst test_now_us
--- returns: {'allowed', remaining, reset:us} | {'limited', retry:us, reset:us, remaining}
--- retry: unsafe
--- version: 6
--- batch: yes
-- Retry: unsafe (a resend would charge twice). Retry-safe consumption with a request id goes
-- through rl_policy, which records decisions; this script is the lean common case: one key, five
-- arguments, no request record. Flat on purpose: fragments, no functions (docs/scripts.md).
local algo, limit, period, burst, cost = 'sw', ARGV[2], ARGV[3], ARGV[4], ARGV[1]
--@include rl_args
local clock, now = ARGV[5]
--@include rl_clock
local key, ok, remaining, reset, retry, w1, w2 = KEYS[1]
--@include rl_sliding_window
if not ok then return {'limited', retry, reset, remaining} end
--@include rl_set_write
return {'allowed', remaining, reset}
