#!lua
--- summary: set a held lock's remaining lease to ttl_ms from now, only for its owner token and fence
--- invariant: only the current lease (token and fence) changes the lease; the new lease is absolute, never added
--- keys: lock
--- args: token fence ttl_ms
--- returns: {'extended', fence:fence, ttl:ms} | {'lost'}
--- retry: safe
--- version: 5
--- batch: yes
--@include int_arg
-- The decision is one comparison, exactly SET's IFEQ "<fence>:<token>" (see lock_value), so the
-- native path answers the same in every state. A retry sets the same absolute lease again.
local ttl, bad = int_arg(ARGV[3], 'ttl_ms', 1, 604800000)
if not ttl then return bad end
if ARGV[1] == '' or not string.find(ARGV[2], '^%d+$') then
  return redis.error_reply('ERR redis-atomic: token must not be empty and fence must be decimal digits')
end
if redis.call('GET', KEYS[1]) == ARGV[2] .. ':' .. ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {'extended', ARGV[2], ttl}
end
return {'lost'}
