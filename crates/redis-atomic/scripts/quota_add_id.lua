#!lua
--- summary: quota_add with a request id: the first answer is recorded, and a repeat of the id returns it without adding again
--- invariant: the counter never leaves [min, max]; a request id is added at most once while its record lives
--- keys: counter request
--- args: delta min max mode ttl_ms request_ttl_ms
--- returns: {'applied', value:int} | {'refused', value:int}
--- retry: safe
--- version: 2
--- batch: yes
--@include int_arg
--@include request_ttl
-- Retry: safe. The first run records its answer under KEYS[2] ("a:<value>" applied, "r:<value>"
-- refused) for request_ttl_ms; a resend (a lost reply, a retry by the caller) returns that
-- answer and changes nothing, whatever the counter holds by then. Refusals are recorded too, so
-- a repeat answers what the first run did even if room was made since.
--@include quota_args
local request_ttl, bad_req = request_ttl_arg(ARGV[6])
if not request_ttl then return bad_req end
local recorded = redis.call('GET', KEYS[2])
if recorded then
  local word, was = string.match(recorded, '^([ar]):(-?%d+)$')
  if not word then return redis.error_reply('WRONGTYPE redis-atomic: request record is not a quota answer') end
  if word == 'r' then return {'refused', tonumber(was)} end
  return {'applied', tonumber(was)}
end
--@include quota_apply
redis.call('SET', KEYS[2], (applied and 'a:' or 'r:') .. string.format('%.0f', value), 'PX', request_ttl)
if not applied then return {'refused', value} end
return {'applied', value}
