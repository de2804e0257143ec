redis.replicate_commands()
local rate, period, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local interval = period / rate local tolerance = interval * burst
local t = redis.call('TIME') local now = t[1] + t[2] / 1000000
local tat = redis.call('GET', KEYS[1]) tat = tat and tonumber(tat) or now
tat = math.max(tat, now) local new_tat = tat + interval
local allow_at = new_tat - tolerance
if now < allow_at then return {0, tostring(allow_at - now)} end
redis.call('SET', KEYS[1], tostring(new_tat), 'EX', math.ceil(new_tat - now)) return {1, 0}
