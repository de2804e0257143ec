-- Fragment (queue_claim, queue_claim_id): validates ARGV[1..6] = worker ttl_ms max_jobs
-- max_deliveries max_dead keep_dead_ms and the types of KEYS[1..6] (due inflight dead meta
-- payload errors). Out: locals `worker`, `ttl`, `n`, `maxd`, `bound`. Needs int_arg,
-- queue_dead_bound, queue_types.
local worker = ARGV[1]
if worker == '' or #worker > 128 then return redis.error_reply('ERR redis-atomic: worker must be 1..128 bytes') end
local ttl, bad = int_arg(ARGV[2], 'ttl_ms', 1, 86400000)
if not ttl then return bad end
local n, bad2 = int_arg(ARGV[3], 'max_jobs', 1, 1000)
if not n then return bad2 end
local maxd, bad3 = int_arg(ARGV[4], 'max_deliveries', 1, 1000000)
if not maxd then return bad3 end
local bound, bad4 = queue_dead_bound(ARGV[5], ARGV[6])
if not bound then return bad4 end
local wrong = queue_types({{KEYS[1], 'zset'}, {KEYS[2], 'zset'}, {KEYS[3], 'zset'}, {KEYS[4], 'hash'}, {KEYS[5], 'hash'}, {KEYS[6], 'hash'}})
if wrong then return wrong end
