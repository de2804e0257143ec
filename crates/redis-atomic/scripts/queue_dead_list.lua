#!lua flags=no-writes
--- summary: list at most count dead letters from position start (oldest first), with deliveries and last error
--- invariant: reads only
--- keys: dead meta errors
--- args: start count
--- returns: {'listed', total, letters:[id:text, dead_at_ms, deliveries, error:text]}
--- retry: safe
--- version: 2
--@include int_arg
--@include queue_meta
local start, bad = int_arg(ARGV[1], 'start', 0, 4294967295)
if not start then return bad end
local count, bad2 = int_arg(ARGV[2], 'count', 1, 1000)
if not count then return bad2 end
local out = {'listed', redis.call('ZCARD', KEYS[1])}
local page = redis.call('ZRANGE', KEYS[1], start, start + count - 1, 'WITHSCORES')
for i = 1, #page, 2 do
  local id = page[i]
  local m = meta_parse(redis.call('HGET', KEYS[2], id))
  out[#out + 1] = id
  out[#out + 1] = tonumber(page[i + 1])
  out[#out + 1] = (m and m.deliveries) or 0
  out[#out + 1] = redis.call('HGET', KEYS[3], id) or ''
end
return out
