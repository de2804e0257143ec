#!lua
--- summary: take units from an item's stock once per request id; a resent request is told it already reserved
--- invariant: stock never goes below zero, and one request id takes stock at most once
--- keys: stock request
--- args: qty ttl_s
--- returns: {'reserved', remaining:uint} | {'replay', remaining:uint} | {'mismatch', reserved:uint} | {'insufficient', available:uint} | {'unknown_item'}
--- retry: safe
--- version: 1
--@include int_arg
-- Keys share the item's hash tag: shop:stock:{sku-42} and shop:reservation:{sku-42}:<request id>.
-- The request record is the idempotency key: it holds the quantity taken and expires after
-- ttl_s, so a client that lost the reply resends within ttl_s and cannot reserve twice.
-- Retry: safe — the record answers a resend ('replay'); a different qty under the same id is
-- 'mismatch', never a second reservation.
local qty, bad = int_arg(ARGV[1], 'qty', 1, 1000000)
if not qty then return bad end
local ttl, bad_ttl = int_arg(ARGV[2], 'ttl_s', 1, 604800)
if not ttl then return bad_ttl end
local stock = redis.call('GET', KEYS[1])
local available = tonumber(stock or '0')
if not available or available % 1 ~= 0 or available < 0 then
  return redis.error_reply('WRONGTYPE the stock key does not hold a non-negative integer')
end
local prior = redis.call('GET', KEYS[2])
if prior then
  if prior ~= ARGV[1] then return {'mismatch', prior} end
  return {'replay', available}
end
if not stock then return {'unknown_item'} end
if available < qty then return {'insufficient', available} end
-- The stock record belongs to the catalogue (it sets and expires it); DECRBY runs only on an
-- existing record, so it creates nothing.
-- redis-atomic-lint: allow write-without-ttl
local remaining = redis.call('DECRBY', KEYS[1], qty)
redis.call('SET', KEYS[2], qty, 'EX', ttl)
return {'reserved', remaining}
