#!lua
--- summary: release a lock, only for its current owner token
--- invariant: only the holder of the current token can delete the lock
--- keys: lock
--- args: token fence
--- returns: {'released', fence:fence} | {'not_held'}
--- retry: safe
--- version: 3
--@include lock_value
-- A retry after a lost reply finds the lock gone and answers not_held: nothing else changes.
-- fence: the holder's fence, or '' for any lease of this token. With it the decision is exactly
-- DELIFEQ's (the stored value equals "<fence>:<token>"), so the native path gives the same
-- answers; a missing ARGV[2] (a caller of the older one-argument form) means ''.
local fence, owner = lock_value(redis.call('GET', KEYS[1]))
local want = ARGV[2] or ''
if owner ~= nil and owner == ARGV[1] and (want == '' or want == fence) then
  redis.call('DEL', KEYS[1])
  return {'released', fence}
end
return {'not_held'}
