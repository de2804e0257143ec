-- now_us(): the server's clock in microseconds since the epoch (exact below 2^53).
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
