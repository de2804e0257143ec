#!lua
--- summary: release a lock, only for its current owner token and fence
--- invariant: only the holder of the current lease (token and fence) can delete the lock
--- keys: lock
--- args: token fence
--- returns: {'released', fence:fence} | {'lost'}
--- retry: safe
--- version: 6
--- batch: yes
-- A retry after a lost reply finds the lock gone and answers lost: nothing else changes.
-- With a fence the decision is DELIFEQ's exactly (the stored value equals "<fence>:<token>"), so
-- the native path gives the same answers, and it is one comparison. An empty fence means any
-- lease of this token: only for the library's own give-back of an acquisition whose reply it
-- could not use (fewer replicas than asked acknowledged it). Flat on purpose.
local token, fence = ARGV[1], ARGV[2]
local current = redis.call('GET', KEYS[1])
if not current then return {'lost'} end
if fence ~= '' then
  if current ~= fence .. ':' .. token then return {'lost'} end
  redis.call('DEL', KEYS[1])
  return {'released', fence}
end
-- Any lease of this token: "<fence>:<token>" (see lock_value), split at its first ':'.
local sep = string.find(current, ':', 1, true)
if not sep or string.sub(current, sep + 1) ~= token then return {'lost'} end
redis.call('DEL', KEYS[1])
return {'released', string.sub(current, 1, sep - 1)}
