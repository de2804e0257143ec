#!lua
--- summary: return expired leases, then lease up to max_jobs due jobs (due order) to a worker, each with a new fence
--- invariant: a job is in exactly one of due, inflight, dead; a claim takes only due jobs; every claim of a job gets a fence larger than all before it
--- keys: due inflight dead meta payload errors
--- args: worker ttl_ms max_jobs max_deliveries max_dead keep_dead_ms
--- returns: {'claimed', now_ms, count, jobs:[id:str, fence:fence, deliveries, payload:bytes] * count} | {'empty', retry_after:ms} | {'idle'}
--- retry: unsafe
--- version: 5
--@include int_arg
--@include now_us
--@include queue_types
--@include queue_meta
--@include queue_bury
--@include queue_dead_bound
--@include queue_reap
--@include next_fence
-- Not retry-safe: a second run would lease other jobs (queue_claim_id is the retry-safe claim).
-- After a lost reply the jobs of the first run stay leased to nobody until ttl_ms passes;
-- then a claim (or reap) returns them.
-- Bounded: at most max_jobs leases are reaped and at most max_jobs jobs claimed per call.
--@include queue_claim_args
local us = now_us()
local now = math.floor(us / 1000)
local out, job_ttl = {'claimed', now, 0}, nil
--@include queue_claim_take
if #ids > 0 then
  out[3] = #ids
  return out
end
--@include queue_claim_empty
