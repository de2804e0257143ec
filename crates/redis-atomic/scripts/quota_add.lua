#!lua
--- summary: add delta to a counter only if it stays within [min, max] (or clamped to them); the first write sets its TTL once
--- invariant: the counter never leaves [min, max]; its TTL is set when it is created and never extended
--- keys: counter
--- args: delta min max mode ttl_ms
--- returns: {'applied', value:int} | {'refused', value:int}
--- retry: unsafe
--- version: 4
--- batch: yes
--@include int_arg
-- Why a script: the bound check and the write must not interleave. INCRBY then a compensating
-- DECRBY lets other clients see (and act on) the overshoot; a GET-check-INCRBY from the client races.
-- Retry: unsafe (a resend adds twice); quota_add_id is the same add with a request id, retry-safe.
--@include quota_args
--@include quota_apply
if not applied then return {'refused', value} end
return {'applied', value}
