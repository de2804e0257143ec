-- Job record, one field of the meta hash per job: "<state>:<fence>:<deliveries>:<worker>".
-- state: q queued (member of due), r running (member of inflight), d dead (member of dead),
-- a acked (member of done: a tombstone that keeps enqueue idempotent for the dedup window).
local function meta_parse(raw)
  if not raw then return nil end
  local state, fence, dl, worker = string.match(raw, '^([qrda]):(%d+):(%d+):(.*)$')
  if not state then return false end
  return {state = state, fence = fence, deliveries = tonumber(dl), worker = worker}
end

local function meta_format(state, fence, deliveries, worker)
  return state .. ':' .. fence .. ':' .. string.format('%.0f', deliveries) .. ':' .. worker
end
