-- int_arg(value, name, min, max): the integer in ARGV `value`, or nil plus an error reply.
local function int_arg(value, name, min, max)
  local n = tonumber(value)
  if not n or n % 1 ~= 0 or n < min or n > max then
    return nil, redis.error_reply('ERR redis-atomic: ' .. name .. ' must be an integer in ' .. min .. '..' .. max)
  end
  return n
end
