-- Fragment (rl_policy): with a request id (ARGV[2]), returns the decision recorded under
-- KEYS[1] while it lives. In: `now`. Record: "<expires_at>|<remaining>|<reset_at>|<remaining_1>,<reset_at_1>|...",
-- kept only for admitted requests (a refused one consumed nothing, so deciding it again is
-- harmless). A malformed or expired record is ignored: the request is decided afresh.
if ARGV[2] ~= '' then
  local raw = redis.call('GET', KEYS[1])
  local fields = {}
  if raw then
    for f in string.gmatch(raw, '[^|]+') do fields[#fields + 1] = f end
  end
  local exp = tonumber(fields[1])
  if exp and exp > now and #fields >= 4 then
    local out = {'replayed', tonumber(fields[2]), math.max(0, tonumber(fields[3]) - now), #fields - 3}
    for i = 4, #fields do
      local r, t = string.match(fields[i], '^(%d+),(%d+)$')
      if not r then
        out = nil
        break
      end
      out[#out + 1], out[#out + 2], out[#out + 3] = tonumber(r), math.max(0, tonumber(t) - now), 0
    end
    if out then return out end
  end
end
