#!lua
--- summary: apply idempotent writes under one resource's hash tag only if the fence is at least the highest seen, and record it
--- invariant: once a fence has written to a resource, no smaller fence writes to it again
--- keys: fence target...
--- args: fence retention_ms spec...
--- returns: {'applied', fence:fence, writes} | {'stale', highest:fence}
--- retry: safe
--- version: 2
--@include int_arg
-- spec: for write i (its key is KEYS[i + 1]): op, argc, then argc arguments. Ops: set (value
-- [PX ms]), hset (field value ...), hdel (field ...), sadd (member ...), srem (member ...),
-- del (none), pexpire (ms). All idempotent, so a retried batch leaves what one run leaves.
-- The whole spec and every key's type are checked before the first write: a batch applies
-- entirely or not at all (a WRONGTYPE midway would otherwise leave half of it).
local fence, bad = int_arg(ARGV[1], 'fence', 1, 9007199254740991)
if not fence then return bad end
local retention, bad_retention = int_arg(ARGV[2], 'retention_ms', 1, 31536000000)
if not retention then return bad_retention end
local n = #KEYS - 1
if n < 1 or n > 64 then return redis.error_reply('ERR redis-atomic: a batch takes 1..64 writes') end
local want = {hset = 'hash', hdel = 'hash', sadd = 'set', srem = 'set'}
local function malformed(i) return redis.error_reply('ERR redis-atomic: malformed spec for write ' .. i) end
local function shape_ok(op, argc, first)
  if op == 'set' then return argc == 1 or (argc == 3 and ARGV[first + 1] == 'PX' and int_arg(ARGV[first + 2], 'ms', 1, 2592000000) ~= nil) end
  if op == 'hset' then return argc >= 2 and argc % 2 == 0 and argc <= 512 end
  if op == 'hdel' or op == 'sadd' or op == 'srem' then return argc >= 1 and argc <= 256 end
  if op == 'del' then return argc == 0 end
  if op == 'pexpire' then return argc == 1 and int_arg(ARGV[first], 'ms', 1, 2592000000) ~= nil end
  return false
end
local ops, types, pos = {}, {}, 3
for i = 1, n do
  local op, argc = ARGV[pos], tonumber(ARGV[pos + 1])
  if not op or not argc or argc % 1 ~= 0 or argc < 0 or pos + 1 + argc > #ARGV then return malformed(i) end
  if not shape_ok(op, argc, pos + 2) then return malformed(i) end
  local key = KEYS[i + 1]
  local t = types[key] or redis.call('TYPE', key)['ok']
  if want[op] and t ~= 'none' and t ~= want[op] then
    return redis.error_reply('WRONGTYPE redis-atomic: write ' .. i .. ' (' .. op .. ') meets a ' .. t)
  end
  if op == 'set' then t = 'string' elseif op == 'del' then t = 'none' elseif want[op] then t = want[op] end
  types[key] = t
  ops[i] = {op, pos + 2, argc}
  pos = pos + 2 + argc
end
if pos ~= #ARGV + 1 then return malformed(n) end
local highest_raw = redis.call('GET', KEYS[1])
local highest = 0
if highest_raw then
  highest = tonumber(highest_raw)
  if not highest then return redis.error_reply('WRONGTYPE redis-atomic: fence key does not hold an integer') end
end
if fence < highest then return {'stale', highest_raw} end
for i = 1, n do
  local op, first, argc = ops[i][1], ops[i][2], ops[i][3]
  local key = KEYS[i + 1]
  local args = {}
  for j = first, first + argc - 1 do args[#args + 1] = ARGV[j] end
  if op == 'set' then redis.call('SET', key, unpack(args))
  elseif op == 'hset' then redis.call('HSET', key, unpack(args))
  elseif op == 'hdel' then redis.call('HDEL', key, unpack(args))
  elseif op == 'sadd' then redis.call('SADD', key, unpack(args))
  elseif op == 'srem' then redis.call('SREM', key, unpack(args))
  elseif op == 'del' then redis.call('DEL', key)
  else redis.call('PEXPIRE', key, args[1]) end -- redis-atomic-lint: allow expire-can-shorten (Write::Expire is absolute by contract, and only the newest fence writes)
end
local recorded = string.format('%.0f', fence)
redis.call('SET', KEYS[1], recorded, 'PX', retention)
return {'applied', recorded, n}
