#!lua
--- summary: release a lock, only for its current owner token
--- invariant: only the holder of the current token can delete the lock
--- keys: lock
--- args: token fence
--- returns: {'released', fence:fence} | {'not_held'}
--- retry: safe
--- version: 4
-- A retry after a lost reply finds the lock gone and answers not_held: nothing else changes.
-- fence: the holder's fence, or '' for any lease of this token (a missing ARGV[2], from a caller
-- of the older one-argument form, means ''). With a fence the decision is DELIFEQ's exactly (the
-- stored value equals "<fence>:<token>"), so the native path gives the same answers, and it is
-- one comparison: no parsing on the path every guard takes. Flat on purpose.
local token, fence = ARGV[1], ARGV[2] or ''
local current = redis.call('GET', KEYS[1])
if not current then return {'not_held'} end
if fence ~= '' then
  if current ~= fence .. ':' .. token then return {'not_held'} end
  redis.call('DEL', KEYS[1])
  return {'released', fence}
end
-- Any lease of this token: "<fence>:<token>" (see lock_value), split at its first ':'.
local sep = string.find(current, ':', 1, true)
if not sep or string.sub(current, sep + 1) ~= token then return {'not_held'} end
redis.call('DEL', KEYS[1])
return {'released', string.sub(current, 1, sep - 1)}
