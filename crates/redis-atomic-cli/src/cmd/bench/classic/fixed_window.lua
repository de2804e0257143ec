#!lua
-- The classic fixed window: INCR, EXPIRE on the first hit, compare (ARGV: seconds, limit).
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
if current > tonumber(ARGV[2]) then return 0 end
return 1
