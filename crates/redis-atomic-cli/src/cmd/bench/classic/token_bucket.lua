-- The common blog/StackOverflow token bucket (no redis-cell): a hash of tokens and last refill, floats, server TIME.
local capacity, rate = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME') local now = t[1] + t[2] / 1000000
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'timestamp')
local tokens, last = tonumber(bucket[1]), tonumber(bucket[2])
if tokens == nil then tokens, last = capacity, now end
tokens = math.min(capacity, tokens + math.max(0, now - last) * rate)
local allowed = 0
if tokens >= 1 then tokens, allowed = tokens - 1, 1 end
redis.call('HMSET', KEYS[1], 'tokens', tokens, 'timestamp', now)
redis.call('EXPIRE', KEYS[1], math.ceil(capacity / rate * 2)) return {allowed, tokens}
