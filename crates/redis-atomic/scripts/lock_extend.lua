#!lua
--- summary: set a held lock's remaining lease to ttl_ms from now, only for its owner token
--- invariant: only the current owner changes the lease; the new lease is absolute, never added
--- keys: lock
--- args: token ttl_ms fence
--- returns: {'extended', fence:fence, ttl:ms} | {'not_held'}
--- retry: safe
--- version: 3
--@include int_arg
--@include lock_value
local ttl, bad = int_arg(ARGV[2], 'ttl_ms', 1, 604800000)
if not ttl then return bad end
-- fence: the holder's fence, or '' for any lease of this token (a missing ARGV[3] means ''). With
-- it the decision is exactly SET's IFEQ "<fence>:<token>", so the native path answers the same.
local fence, owner = lock_value(redis.call('GET', KEYS[1]))
local want = ARGV[3] or ''
if owner ~= nil and owner == ARGV[1] and (want == '' or want == fence) then
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {'extended', fence, ttl}
end
return {'not_held'}
