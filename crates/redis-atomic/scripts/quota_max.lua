#!lua
--- summary: raise a value to candidate unless it already holds at least that (monotonic max)
--- invariant: the stored value never decreases
--- keys: value
--- args: candidate
--- returns: {'raised', value:int} | {'kept', value:int}
--- retry: safe
--- version: 3
--@include int_arg
-- Why a script: no command keeps the max of a string (SET has no GT), and a GETSET loop both
-- writes smaller values for a moment and needs a client retry loop. One step here,
-- returning the current max; idempotent, so a resend after a lost reply is harmless.
local limit = 9007199254740991
local candidate, bad = int_arg(ARGV[1], 'candidate', -limit, limit)
if not candidate then return bad end
local raw = redis.call('GET', KEYS[1])
if raw then
  local current = tonumber(string.match(raw, '^-?%d+$'))
  if not current or math.abs(current) > limit then
    return redis.error_reply('WRONGTYPE redis-atomic: value does not hold a 53-bit integer')
  end
  if current >= candidate then return {'kept', current} end
end
redis.call('SET', KEYS[1], string.format('%.0f', candidate), 'KEEPTTL')
return {'raised', candidate}
