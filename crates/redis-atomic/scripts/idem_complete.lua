#!lua
--- summary: store the result of a claimed execution, only for its token and fence
--- invariant: a result is stored once, by the current claim; a stale executor cannot overwrite it
--- keys: record
--- args: token fence outcome payload result_ttl_ms
--- returns: {'stored'} | {'lost'}
--- retry: safe
--- version: 3
--@include int_arg
--@include idem_record
-- outcome: completed (replay it), failed (final failure: replay it) or retry (release the key so
-- the next attempt runs; fence kept so the next claim's is larger).
-- Retry safety: repeating the same call after the result is stored answers 'stored' again.
local ttl, bad = int_arg(ARGV[5], 'result_ttl_ms', 1, 2592000000)
if not ttl then return bad end
local states = {completed = 'c', failed = 'f', retry = 'r'}
local state = states[ARGV[3]]
if not state then return redis.error_reply('ERR redis-atomic: outcome must be completed|failed|retry') end
local rec = idem_parse(redis.call('GET', KEYS[1]))
if rec == false then return redis.error_reply('WRONGTYPE redis-atomic: key does not hold an idempotency record') end
if not rec or rec.token ~= ARGV[1] or string.format('%.0f', rec.gen) ~= ARGV[2] then return {'lost'} end
if rec.state == state then return {'stored'} end
if rec.state ~= 'p' then return {'lost'} end
local payload = ARGV[4]
if state == 'r' then payload = '' end
redis.call('SET', KEYS[1], idem_format(state, rec.gen, rec.token, rec.fp, 0, payload), 'PX', ttl)
return {'stored'}
