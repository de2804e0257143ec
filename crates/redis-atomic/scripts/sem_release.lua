#!lua
--- summary: give a permit back, only for its holder and fence
--- invariant: only the current incarnation of a permit (holder and fence) can release it
--- keys: permits holders
--- args: holder fence
--- returns: {'released', fence:fence} | {'lost'}
--- retry: safe
--- version: 4
--- batch: yes
--@include now_us
-- A permit whose lease ended answers lost (its holder may have overlapped a successor) but
-- is removed all the same. A retried release finds it gone: lost, nothing else changes.
local fence = redis.call('HGET', KEYS[2], ARGV[1])
if not fence or fence ~= ARGV[2] then return {'lost'} end
local ends = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]))
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if ends and ends > now_us() then return {'released', fence} end
return {'lost'}
