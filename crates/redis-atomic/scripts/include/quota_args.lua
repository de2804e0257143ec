-- Fragment (quota_add, quota_add_id): validates ARGV[1..5] = delta min max mode ttl_ms.
-- Out: locals `limit`, `delta`, `lo`, `hi`, `mode`, `ttl`. Values are integers of at most 53 bits
-- (exact Lua numbers); mode: refuse | clamp. Needs int_arg.
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
