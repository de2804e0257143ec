#!lua
--- summary: add delta to a counter only if it stays within [min, max] (or clamped to them); the first write sets its TTL once
--- invariant: the counter never leaves [min, max]; its TTL is set when it is created and never extended
--- keys: counter
--- args: delta min max mode ttl_ms
--- returns: {'applied', value:int} | {'refused', value:int}
--- retry: unsafe
--- version: 2
--@include int_arg
-- Why a script: the bound check and the write must not interleave. INCRBY then a compensating
-- DECRBY lets other clients see (and act on) the overshoot; a GET-check-INCRBY from the client races.
-- Values are integers of at most 53 bits (exact Lua numbers); mode: refuse | clamp.
local limit = 9007199254740991
local delta, bad = int_arg(ARGV[1], 'delta', -limit, limit)
if not delta then return bad end
local lo, bad_lo = int_arg(ARGV[2], 'min', -limit, limit)
if not lo then return bad_lo end
local hi, bad_hi = int_arg(ARGV[3], 'max', lo, limit)
if not hi then return bad_hi end
local mode = ARGV[4]
if mode ~= 'refuse' and mode ~= 'clamp' then return redis.error_reply('ERR redis-atomic: mode must be refuse or clamp') end
local ttl, bad_ttl = int_arg(ARGV[5], 'ttl_ms', 0, 31622400000)
if not ttl then return bad_ttl end
local raw = redis.call('GET', KEYS[1])
local value = 0
if raw then
  value = tonumber(string.match(raw, '^-?%d+$'))
  if not value or math.abs(value) > limit then
    return redis.error_reply('WRONGTYPE redis-atomic: counter does not hold a 53-bit integer')
  end
end
local target = value + delta
if target < lo or target > hi then
  if mode == 'refuse' then return {'refused', value} end
  target = math.min(math.max(target, lo), hi)
end
-- INCRBY keeps the TTL; PEXPIRE NX sets one only where there is none (the first write), so
-- later writes never stretch the counter's lifetime, unlike INCR + EXPIRE.
redis.call('INCRBY', KEYS[1], string.format('%.0f', target - value))
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl, 'NX') end
return {'applied', target}
