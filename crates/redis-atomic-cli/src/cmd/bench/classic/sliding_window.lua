-- The common two-counter sliding window (current and previous fixed windows, weighted by overlap), server TIME.
local window, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)
local current = math.floor(now / window)
local current_key, previous_key = KEYS[1] .. ':' .. current, KEYS[1] .. ':' .. (current - 1)
local count = tonumber(redis.call('GET', current_key) or '0')
local previous = tonumber(redis.call('GET', previous_key) or '0')
local weighted = previous * (window - now % window) / window + count
if weighted + 1 > limit then return {0, count} end
redis.call('INCR', current_key) redis.call('PEXPIRE', current_key, window * 2) return {1, count + 1}
