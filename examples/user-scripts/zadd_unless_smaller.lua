#!lua
--- summary: set members' scores in a sorted set unless that would lower them, for a bounded batch
--- invariant: a member's score never decreases; absent members are added
--- keys: board
--- args: ttl_s score_member...
--- returns: {'changed', count:uint}
--- retry: safe
--- version: 2
--@include int_arg
-- One command keeps the invariant (ZADD GT CH: the weakest mechanism). The script adds what a
-- command cannot: every pair checked before anything is written, a bounded batch, and the
-- key's TTL in the same atomic step.
-- Retry: a batch applied twice changes nothing the second time (scores only grow): safe.
local MAX_PAIRS = 100
local ttl, bad = int_arg(ARGV[1], 'ttl_s', 1, 31536000)
if not ttl then return bad end
local n = #ARGV - 1
if n == 0 or n % 2 ~= 0 or n > 2 * MAX_PAIRS then
  return redis.error_reply('ERR give 1 to ' .. MAX_PAIRS .. ' score member pairs')
end
local pairs_ = {}
for i = 2, math.min(#ARGV, 2 * MAX_PAIRS + 1), 2 do
  local score = tonumber(ARGV[i])
  if not score or score ~= score or score == math.huge or score == -math.huge then
    return redis.error_reply('ERR score ' .. (i / 2) .. ' is not a finite number')
  end
  pairs_[#pairs_ + 1] = ARGV[i]
  pairs_[#pairs_ + 1] = ARGV[i + 1]
end
local changed = redis.call('ZADD', KEYS[1], 'GT', 'CH', unpack(pairs_))
-- The board lives ttl_s after its latest batch: NX sets a first expiry, GT only extends it.
redis.call('EXPIRE', KEYS[1], ttl, 'NX')
redis.call('EXPIRE', KEYS[1], ttl, 'GT')
return {'changed', changed}
