-- Fragment: the clock. In: local `clock`, the test_now_us argument ('' for the server's clock).
-- Out: assigns `now` (µs since the epoch), or the script returns an error reply. A test clock is
-- used only when the caller sent one (the library sends it only with its `test-clock` feature,
-- never by default).
do
  if clock == '' then
    local t = redis.call('TIME') -- digit strings: arithmetic converts them (tonumber would
    now = t[1] * 1000000 + t[2]  -- parse each twice, measurably slower on this hot path)
  else
    now = tonumber(clock)
    if not now or now % 1 ~= 0 or now < 0 or now > 9007199254740991 then
      return redis.error_reply('ERR redis-atomic: test_now_us must be an integer in 0..9007199254740991')
    end
  end
end
