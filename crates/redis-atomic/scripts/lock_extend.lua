#!lua
--- summary: set a held lock's remaining lease to ttl_ms from now, only for its owner token
--- invariant: only the current owner changes the lease; the new lease is absolute, never added
--- keys: lock
--- args: token ttl_ms
--- returns: {'extended', fence:fence, ttl:ms} | {'not_held'}
--- retry: safe
--- version: 2
--@include int_arg
--@include lock_value
local ttl, bad = int_arg(ARGV[2], 'ttl_ms', 1, 604800000)
if not ttl then return bad end
local fence, owner = lock_value(redis.call('GET', KEYS[1]))
if owner ~= nil and owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {'extended', fence, ttl}
end
return {'not_held'}
