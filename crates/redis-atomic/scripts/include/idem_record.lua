-- Idempotency record: ONE string per key, so a completed record with a 512-byte body stays small
-- (a hash with a large field leaves listpack encoding and costs ~25% more).
-- Layout: state \n generation \n token \n fingerprint \n lease_until_ms \n payload
-- state: p (in progress), c (completed), f (failed, final), r (released for retry)
local function idem_parse(raw)
  if not raw then return nil end
  local fields, pos = {}, 1
  for i = 1, 5 do
    local nl = string.find(raw, '\n', pos, true)
    if not nl then return false end
    fields[i] = string.sub(raw, pos, nl - 1)
    pos = nl + 1
  end
  local gen, lease = tonumber(fields[2]), tonumber(fields[5])
  if not gen or not lease or not string.find('pcfr', fields[1], 1, true) or #fields[1] ~= 1 then return false end
  return {state = fields[1], gen = gen, token = fields[3], fp = fields[4], lease = lease, payload = string.sub(raw, pos)}
end

local function idem_format(state, gen, token, fp, lease, payload)
  return state .. '\n' .. string.format('%.0f', gen) .. '\n' .. token .. '\n' .. fp .. '\n' .. string.format('%.0f', lease) .. '\n' .. payload
end
