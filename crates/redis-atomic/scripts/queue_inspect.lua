#!lua flags=no-writes
--- summary: one job's state, read without changing it
--- invariant: reads only
--- keys: due inflight meta errors
--- args: job_id
--- returns: {'queued', due_in:ms, deliveries, last_fence:fence} | {'running', fence:fence, deliveries, ttl:ms, worker:text} | {'dead', deliveries, error:text} | {'acked', fence:fence} | {'unknown'}
--- retry: safe
--- version: 3
--@include now_ms
--@include queue_meta
local id = ARGV[1]
local m = meta_parse(redis.call('HGET', KEYS[3], id))
if not m then return {'unknown'} end
local now = now_ms()
if m.state == 'q' then
  local due = tonumber(redis.call('ZSCORE', KEYS[1], id) or now)
  return {'queued', math.max(0, due - now), m.deliveries, m.fence}
elseif m.state == 'r' then
  local deadline = tonumber(redis.call('ZSCORE', KEYS[2], id) or now)
  return {'running', m.fence, m.deliveries, math.max(0, deadline - now), m.worker}
elseif m.state == 'd' then
  return {'dead', m.deliveries, redis.call('HGET', KEYS[4], id) or ''}
end
return {'acked', m.fence}
