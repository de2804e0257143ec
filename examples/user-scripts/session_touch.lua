#!lua
--- summary: touch a session and index it under its user, both with TTLs, in one step
--- invariant: a session belongs to one user for its whole life, and that user's index lists it until it expires
--- keys: session user_sessions
--- args: session_id user_id ttl_s
--- returns: {'touched', sessions:uint} | {'other_user', owner:str}
--- retry: safe
--- version: 2
--@include int_arg
--@include now_ms
-- Keys share the user's hash tag (app:session:{u1}:s1, app:user-sessions:{u1}): one slot in a
-- cluster, and the shebang makes the server refuse keys from two slots.
-- The index is a sorted set scored by each session's expiry (server ms), pruned on every touch,
-- so it never lists a session long gone; readers take ZRANGEBYSCORE index <now> +inf.
-- Retry: a second touch is a later touch (same fields, fresh TTLs): safe to resend.
local session_id, user_id = ARGV[1], ARGV[2]
if session_id == '' or user_id == '' then
  return redis.error_reply('ERR session_id and user_id must not be empty')
end
local ttl, bad = int_arg(ARGV[3], 'ttl_s', 1, 2592000)
if not ttl then return bad end
local owner = redis.call('HGET', KEYS[1], 'userId')
if owner and owner ~= user_id then
  return {'other_user', owner}
end
local now = now_ms()
redis.call('HSET', KEYS[1], 'sessionId', session_id, 'userId', user_id, 'lastSeenAt', now)
-- redis-atomic-lint: allow expire-can-shorten -- a touch sets this session's own TTL
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[2], now + ttl * 1000, session_id)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
-- The index outlives its newest session by a minute: NX sets a first expiry, GT only extends.
redis.call('EXPIRE', KEYS[2], ttl + 60, 'NX')
redis.call('EXPIRE', KEYS[2], ttl + 60, 'GT')
return {'touched', redis.call('ZCARD', KEYS[2])}
