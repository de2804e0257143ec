#!lua
--- summary: set a held permit's lease to end ttl_ms from now, only for its holder and fence
--- invariant: only a live permit's own incarnation extends it; the new lease is absolute, never added
--- keys: permits holders
--- args: holder fence ttl_ms
--- returns: {'extended', fence:fence, ttl:ms} | {'lost'}
--- retry: safe
--- version: 3
--@include int_arg
--@include now_us
local ttl, bad = int_arg(ARGV[3], 'ttl_ms', 1, 604800000)
if not ttl then return bad end
local fence = redis.call('HGET', KEYS[2], ARGV[1])
local ends = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]))
local now = now_us()
if not fence or fence ~= ARGV[2] or not ends or ends <= now then return {'lost'} end
redis.call('ZADD', KEYS[1], 'XX', now + ttl * 1000, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl, 'NX')
redis.call('PEXPIRE', KEYS[1], ttl, 'GT')
redis.call('PEXPIRE', KEYS[2], ttl, 'NX')
redis.call('PEXPIRE', KEYS[2], ttl, 'GT')
return {'extended', fence, ttl}
