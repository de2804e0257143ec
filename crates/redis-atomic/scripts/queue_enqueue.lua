#!lua
--- summary: add a job once per job id, due at at_ms when given (ordered by it even if past), else now + delay_ms on the server's clock
--- invariant: a job id exists at most once in the queue (due, in flight, dead, or acked within the dedup window)
--- keys: due meta payload
--- args: job_id payload delay_ms at_ms
--- returns: {'enqueued', due_in:ms} | {'exists', status:'queued'|'running'|'dead'|'acked'}
--- retry: safe
--- version: 2
--@include int_arg
--@include now_ms
--@include queue_types
--@include queue_meta
-- Retry safety: a second run finds the job and answers 'exists'; nothing is duplicated.
local id, payload = ARGV[1], ARGV[2]
if id == '' or #id > 256 then return redis.error_reply('ERR redis-atomic: job_id must be 1..256 bytes') end
if #payload > 1048576 then return redis.error_reply('ERR redis-atomic: payload must be at most 1048576 bytes') end
local delay, bad = int_arg(ARGV[3], 'delay_ms', 0, 31536000000)
if not delay then return bad end
local at, bad2 = int_arg(ARGV[4], 'at_ms', 0, 253402300799999)
if not at then return bad2 end
local wrong = queue_types({{KEYS[1], 'zset'}, {KEYS[2], 'hash'}, {KEYS[3], 'hash'}})
if wrong then return wrong end
local m = meta_parse(redis.call('HGET', KEYS[2], id))
if m == false then return redis.error_reply('WRONGTYPE redis-atomic: job record is not a queue record') end
if m then
  local names = {q = 'queued', r = 'running', d = 'dead', a = 'acked'}
  return {'exists', names[m.state]}
end
local now = now_ms()
local due = now + delay
if at > 0 then due = at end
redis.call('HSET', KEYS[2], id, meta_format('q', '0', 0, '')) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
redis.call('HSET', KEYS[3], id, payload) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
redis.call('ZADD', KEYS[1], due, id) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
return {'enqueued', math.max(0, due - now)}
