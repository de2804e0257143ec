#!lua
--- summary: delete at most limit dead letters that died older_than_ms or longer ago (oldest first), each with its record, payload and last error
--- invariant: only dead letters are deleted, and with them everything the queue kept of them; no other job changes
--- keys: dead meta payload errors
--- args: older_than_ms limit
--- returns: {'purged', purged, remaining}
--- retry: safe
--- version: 1
--@include int_arg
--@include now_ms
--@include queue_types
--@include queue_meta
-- Retry safety: a repeat deletes at most limit more letters of the same age, which the caller
-- asked to be rid of; nothing else changes. Bounded: at most limit letters per call.
local older, bad = int_arg(ARGV[1], 'older_than_ms', 0, 31536000000)
if not older then return bad end
local limit, bad2 = int_arg(ARGV[2], 'limit', 1, 1000)
if not limit then return bad2 end
local wrong = queue_types({{KEYS[1], 'zset'}, {KEYS[2], 'hash'}, {KEYS[3], 'hash'}, {KEYS[4], 'hash'}})
if wrong then return wrong end
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms() - older, 'LIMIT', 0, limit)
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[1], id)
  local m = meta_parse(redis.call('HGET', KEYS[2], id))
  if m and m.state == 'd' then
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    redis.call('HDEL', KEYS[4], id)
  end
end
return {'purged', #gone, redis.call('ZCARD', KEYS[1])}
