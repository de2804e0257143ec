-- queue_types(pairs): nil when each {key, kind} key is absent or of that type, else a WRONGTYPE
-- error reply. Checked before any write, so a foreign value never leaves a half-done move.
local function queue_types(list)
  for _, p in ipairs(list) do
    local t = redis.call('TYPE', p[1]).ok
    if t ~= 'none' and t ~= p[2] then
      return redis.error_reply('WRONGTYPE redis-atomic: a queue key holds a ' .. t .. ', not a ' .. p[2])
    end
  end
  return nil
end
