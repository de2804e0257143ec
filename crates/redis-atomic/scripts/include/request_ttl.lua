-- request_ttl_arg(value): how long a request record lives (ms, 1 s ..= 1 day), or nil plus an error
-- reply. A request record is a retry-safe script's first answer to one request id, kept so a
-- resend after a lost reply returns it instead of acting again (quota_add_id, queue_claim_id);
-- one bound for every such record. Needs int_arg.
local function request_ttl_arg(value)
  return int_arg(value, 'request_ttl_ms', 1000, 86400000)
end
