#!lua
--- summary: consume cost units of one fixed window anchored at its first request, all or nothing, without reading the clock
--- invariant: at most limit units per window; a window opens at the first request after the last one closed and lasts period_ms; a refused request changes nothing
--- keys: state
--- args: cost limit period_ms
--- returns: {'allowed', remaining, reset:us} | {'limited', retry:us, reset:us, remaining}
--- retry: unsafe
--- version: 2
--- batch: yes
-- The lean variant of the fixed window (docs/ratelimit.md "Anchored window"): the state is a
-- plain counter and the window is the key's expiry, so no TIME, no state to parse and no number
-- to format: INCRBY, then PTTL (or PEXPIRE on a window's first request), arguments handed to
-- Redis as the strings they came in as (period_ms is parsed only to open a window). Windows
-- are not aligned: each identity's window opens at its own first request. The key's expiry is
-- on the server's clock, so no test clock drives it (the script takes none; the library refuses
-- one). Retry: unsafe (a resend charges twice); with a request id, rl_policy records the
-- decision. Flat on purpose.
local key, cost, limit, ms = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3]
-- cost and period_ms go on to INCRBY and PEXPIRE as sent, so they must be what those parse:
-- plain decimal digits (tonumber alone would let '0x10' or '1e3' through).
local n = cost == '1' and 1 or string.find(cost, '^[1-9]%d*$') and tonumber(cost)
if not limit or limit % 1 ~= 0 or limit < 1 or limit > 1000000000 then
  return redis.error_reply('ERR redis-atomic: limit must be an integer in 1..1000000000')
end
if not n or n > limit then
  return redis.error_reply('ERR redis-atomic: cost must be an integer in 1..limit')
end
local count = redis.pcall('INCRBY', key, cost)
if type(count) ~= 'number' then
  return redis.error_reply('WRONGTYPE redis-atomic: ' .. key .. ' does not hold rate-limit state')
end
-- The window's first request (a refusal never leaves the counter at 0) opens it; so does a
-- counter found without expiry (not ours, or persisted). period_ms is parsed only then, and a
-- bad one takes the charge back.
local ttl = count == n and -1 or redis.call('PTTL', key)
if ttl < 0 then
  local period = string.find(ms, '^[1-9]%d*$') and tonumber(ms)
  if not period or period > 31622400000 then
    if count == n then redis.call('DEL', key) else redis.call('DECRBY', key, cost) end
    return redis.error_reply('ERR redis-atomic: period_ms must be an integer in 1..31622400000')
  end
  redis.call('PEXPIRE', key, ms, 'NX') -- no expiry yet (new, or found without one): set it once
  ttl = period
elseif ttl == 0 then
  ttl = 1 -- expires within the millisecond: never tell a caller to retry after 0
end
if count > limit then
  redis.call('DECRBY', key, cost)
  return {'limited', ttl * 1000, ttl * 1000, limit - count + n}
end
return {'allowed', limit - count, ttl * 1000}
