#!lua
--- summary: claim an idempotency key for one execution, or say why not (in flight, replay, mismatch)
--- invariant: at most one live claim per key; fences strictly increase; a completed result is never replaced
--- keys: record
--- args: token fingerprint ttl_ms result_ttl_ms
--- returns: {'claimed', fence:fence, ttl:ms, takeover:bool} | {'in_progress', retry_after:ms} | {'replay', outcome:'completed'|'failed', payload:bytes} | {'mismatch'}
--- retry: safe
--- version: 5
--- batch: yes
--@include int_arg
--@include now_ms
--@include now_us
--@include idem_record
--@include next_fence
-- Retry safety: the same token that holds a live claim gets it back (same fence, lease reset).
-- Takeover: a claim whose lease ran out (server time) goes to the caller with a larger fence, so
-- the old executor's complete/fail/extend (old fence) is refused.
-- Fences follow next_fence (max(last + 1, server µs)): if a failover loses the record, the next
-- claim's fence is still larger than any issued before, so a downstream fenced by it rejects the
-- stale executor (assuming the new primary's clock is not behind).
local token, fp = ARGV[1], ARGV[2]
if token == '' or string.find(token, '\n', 1, true) then return redis.error_reply('ERR redis-atomic: token must be non-empty without newlines') end
if fp == '' or string.find(fp, '\n', 1, true) then return redis.error_reply('ERR redis-atomic: fingerprint must be non-empty without newlines') end
local lease, bad = int_arg(ARGV[3], 'ttl_ms', 1, 86400000)
if not lease then return bad end
local ttl, bad2 = int_arg(ARGV[4], 'result_ttl_ms', 1, 2592000000)
if not ttl then return bad2 end
local rec = idem_parse(redis.call('GET', KEYS[1]))
if rec == false then return redis.error_reply('WRONGTYPE redis-atomic: key does not hold an idempotency record') end
local now = now_ms()
if rec then
  if rec.fp ~= fp then return {'mismatch'} end
  if rec.state == 'c' then return {'replay', 'completed', rec.payload} end
  if rec.state == 'f' then return {'replay', 'failed', rec.payload} end
  if rec.state == 'p' then
    if rec.token == token then
      redis.call('SET', KEYS[1], idem_format('p', rec.gen, token, fp, now + lease, ''), 'PX', math.max(ttl, lease))
      return {'claimed', rec.gen, lease, 0}
    end
    if rec.lease > now then return {'in_progress', rec.lease - now} end
  end
end
local gen = next_fence(rec and rec.gen or 0, now_us())
redis.call('SET', KEYS[1], idem_format('p', gen, token, fp, now + lease, ''), 'PX', math.max(ttl, lease))
local takeover = 0
if rec and rec.state == 'p' then takeover = 1 end
return {'claimed', gen, lease, takeover}
