-- queue_dead_bound(max_count, keep_ms): the dead-letter bound from two ARGV values (at most
-- max_count letters, none kept keep_ms or longer), or nil plus an error reply.
local function queue_dead_bound(max_count, keep_ms)
  local n, bad = int_arg(max_count, 'max_dead_letters', 1, 1000000000)
  if not n then return nil, bad end
  local keep, bad2 = int_arg(keep_ms, 'dead_letter_retention_ms', 1, 31536000000)
  if not keep then return nil, bad2 end
  return {max_count = n, keep_ms = keep}
end
