#!lua
--- summary: set a held permit's lease to end lease_ms from now, only for its holder and fence
--- invariant: only a live permit's own incarnation extends it; the new lease is absolute, never added
--- keys: permits holders
--- args: holder fence lease_ms
--- returns: {'refreshed', fence:fence, lease:ms} | {'not_held'}
--- retry: safe
--- version: 2
--@include int_arg
--@include now_us
local lease, bad = int_arg(ARGV[3], 'lease_ms', 1, 604800000)
if not lease then return bad end
local fence = redis.call('HGET', KEYS[2], ARGV[1])
local ends = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]))
local now = now_us()
if not fence or fence ~= ARGV[2] or not ends or ends <= now then return {'not_held'} end
redis.call('ZADD', KEYS[1], 'XX', now + lease * 1000, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease, 'NX')
redis.call('PEXPIRE', KEYS[1], lease, 'GT')
redis.call('PEXPIRE', KEYS[2], lease, 'NX')
redis.call('PEXPIRE', KEYS[2], lease, 'GT')
return {'refreshed', fence, lease}
