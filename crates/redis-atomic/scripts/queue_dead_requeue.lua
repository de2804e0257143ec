#!lua
--- summary: move one dead letter back to due after delay_ms with its delivery count reset
--- invariant: only a dead job is requeued; its fence history is kept, so later fences stay larger
--- keys: dead due meta errors
--- args: job_id delay_ms
--- returns: {'requeued'} | {'not_dead'}
--- retry: safe
--- version: 2
--@include int_arg
--@include now_ms
--@include queue_types
--@include queue_meta
-- Retry safety: a second run finds the job no longer dead and answers 'not_dead'.
local delay, bad = int_arg(ARGV[2], 'delay_ms', 0, 31536000000)
if not delay then return bad end
local wrong = queue_types({{KEYS[1], 'zset'}, {KEYS[2], 'zset'}, {KEYS[3], 'hash'}, {KEYS[4], 'hash'}})
if wrong then return wrong end
local id = ARGV[1]
local m = meta_parse(redis.call('HGET', KEYS[3], id))
if not m or m.state ~= 'd' then return {'not_dead'} end
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', KEYS[4], id)
redis.call('ZADD', KEYS[2], now_ms() + delay, id) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
redis.call('HSET', KEYS[3], id, meta_format('q', m.fence, 0, '')) -- redis-atomic-lint: allow write-without-ttl (queue state is durable: jobs leave by ack or dead-letter trim)
return {'requeued'}
