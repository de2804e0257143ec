#!lua
--- summary: extend a live claim's lease to ttl_ms from now, only for its token and fence
--- invariant: only the current claim's executor moves its lease; a superseded executor learns it is lost
--- keys: record
--- args: token fence ttl_ms
--- returns: {'extended', fence:fence, ttl:ms} | {'lost'}
--- retry: safe
--- version: 3
--@include int_arg
--@include now_ms
--@include idem_record
local ttl, bad = int_arg(ARGV[3], 'ttl_ms', 1, 86400000)
if not ttl then return bad end
local rec = idem_parse(redis.call('GET', KEYS[1]))
if rec == false then return redis.error_reply('WRONGTYPE redis-atomic: key does not hold an idempotency record') end
if not rec or rec.state ~= 'p' or rec.token ~= ARGV[1] or string.format('%.0f', rec.gen) ~= ARGV[2] then
  return {'lost'}
end
local kept = redis.call('PTTL', KEYS[1])
redis.call('SET', KEYS[1], idem_format('p', rec.gen, rec.token, rec.fp, now_ms() + ttl, ''), 'PX', math.max(kept, ttl))
return {'extended', ARGV[2], ttl}
