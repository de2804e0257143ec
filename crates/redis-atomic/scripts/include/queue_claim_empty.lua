-- Fragment (queue_claim, queue_claim_id): nothing was due; returns {'empty', ms until the
-- earliest due job or lease deadline}, or {'idle'} when the queue holds neither. In: `now`.
local next_due = nil
for _, key in ipairs({KEYS[1], KEYS[2]}) do
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if first[2] then
    local at = tonumber(first[2])
    if not next_due or at < next_due then next_due = at end
  end
end
if not next_due then return {'idle'} end
return {'empty', math.max(0, next_due - now)}
