-- lock_value(raw): the fence and owner token stored at a lock key ("<fence>:<token>").
-- A value that is not in that form is someone else's data: callers treat it as held, never overwrite it.
local function lock_value(raw)
  if not raw then return nil, nil end
  local sep = string.find(raw, ':', 1, true)
  if not sep then return nil, nil end
  return string.sub(raw, 1, sep - 1), string.sub(raw, sep + 1)
end
