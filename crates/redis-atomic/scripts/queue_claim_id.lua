#!lua
--- summary: queue_claim with a claim id: the leases are recorded, and a repeat of the id returns those still live instead of claiming again
--- invariant: a claim id leases jobs at most once while its record lives; a repeat returns the same jobs with the same fences and delivery counts
--- keys: due inflight dead meta payload errors claim
--- args: worker ttl_ms max_jobs max_deliveries max_dead keep_dead_ms request_ttl_ms
--- returns: {'claimed', now_ms, replayed:bool, count, jobs:[id:str, fence:fence, deliveries, payload:bytes, ttl:ms] * count} | {'empty', retry_after:ms} | {'idle'}
--- retry: safe
--- version: 3
--@include int_arg
--@include now_us
--@include queue_types
--@include queue_meta
--@include queue_bury
--@include queue_dead_bound
--@include queue_reap
--@include next_fence
--@include request_ttl
-- Retry: safe. A claim that leases jobs records them under KEYS[7] (a string of length-prefixed
-- items "<len>:<bytes>": the worker, then job id and fence per job) for max(request_ttl_ms,
-- ttl_ms). A repeat of the id while the
-- record lives claims nothing: it returns, in the first claim's order, each recorded job whose
-- lease from that claim is still live (running, same fence, same worker, deadline not passed),
-- with its delivery count and the ms left on its lease; jobs acked, nacked, reaped or expired
-- since are left out (all gone: 'claimed' with count 0). A claim that found nothing records
-- nothing (it leased nothing; a repeat claims afresh). Bounded: the record holds at most 1000 jobs.
--@include queue_claim_args
local request_ttl, bad_req = request_ttl_arg(ARGV[7])
if not request_ttl then return bad_req end
local wrong_claim = queue_types({{KEYS[7], 'string'}})
if wrong_claim then return wrong_claim end
local us = now_us()
local now = math.floor(us / 1000)
local record, raw = {}, redis.call('GET', KEYS[7])
if raw then
  local pos = 1
  while pos <= #raw and #record <= 2001 do
    local colon = string.find(raw, ':', pos, true)
    local len = colon and tonumber(string.sub(raw, pos, colon - 1))
    if not len then return redis.error_reply('WRONGTYPE redis-atomic: claim record is malformed') end
    record[#record + 1] = string.sub(raw, colon + 1, colon + len)
    pos = colon + len + 1
  end
end
if #record > 0 then
  local out = {'claimed', now, 1, 0}
  for i = 2, #record - 1, 2 do
    local id, fence = record[i], record[i + 1]
    local m = meta_parse(redis.call('HGET', KEYS[4], id))
    local deadline = tonumber(redis.call('ZSCORE', KEYS[2], id))
    if record[1] == worker and m and m.state == 'r' and m.fence == fence and m.worker == worker and deadline and deadline > now then
      out[#out + 1] = id
      out[#out + 1] = fence
      out[#out + 1] = m.deliveries
      out[#out + 1] = redis.call('HGET', KEYS[5], id) or ''
      out[#out + 1] = deadline - now
    end
  end
  out[4] = (#out - 4) / 5
  return out
end
local out, job_ttl = {'claimed', now, 0, 0}, ttl
--@include queue_claim_take
if #ids > 0 then
  out[4] = #ids
  local entries = {#worker .. ':' .. worker}
  for i = 5, #out, 5 do
    entries[#entries + 1] = #out[i] .. ':' .. out[i]
    entries[#entries + 1] = #out[i + 1] .. ':' .. out[i + 1]
  end
  redis.call('SET', KEYS[7], table.concat(entries), 'PX', math.max(request_ttl, ttl))
  return out
end
--@include queue_claim_empty
