-- int_arg(value, name, min, max): the integer in `value` (an ARGV string), or nil plus an error
-- reply naming the argument. Rejects fractions, NaN and infinities.
local function int_arg(value, name, min, max)
  local n = tonumber(value)
  if not n or n % 1 ~= 0 or n < min or n > max then
    return nil, redis.error_reply('ERR ' .. name .. ' must be an integer in ' .. min .. '..' .. max)
  end
  return n
end
