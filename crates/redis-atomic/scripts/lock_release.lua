#!lua
--- summary: release a lock, only for its current owner token
--- invariant: only the holder of the current token can delete the lock
--- keys: lock
--- args: token
--- returns: {'released', fence:fence} | {'not_held'}
--- retry: safe
--- version: 2
--@include lock_value
-- A retry after a lost reply finds the lock gone and answers not_held: nothing else changes.
local fence, owner = lock_value(redis.call('GET', KEYS[1]))
if owner ~= nil and owner == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return {'released', fence}
end
return {'not_held'}
