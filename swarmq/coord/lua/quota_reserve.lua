-- Reserve one slot of a daily quota, atomically, with Redis TIME as the clock.
-- KEYS[1]: `used` (integer) and KEYS[2]: `held` (zset token → lease end, ms) of the window the
--          client believes is current.
-- ARGV[1]: "<window start> <window end> <keys expire at> <max calls> <lease ms> <seed>", epoch ms;
--          seed is `used` for when its key is missing (-1: unknown, ask the caller). One packed
--          argument because each argument costs the client more than the server's parse.
-- ARGV[2]: token.
-- Returns {status, a, b}:
--   { 1, lease end, held}  reserved
--   { 0, used, held}       exhausted
--   { 2, 0, 0}             `used` is missing: call again with a seed from the disk mirror
--   {-2, now, 0}           the server's clock is outside this window: pick the window of `now`
--
-- The same reservation asked again after its answer was lost (a Redis killed between its AOF
-- fsync and its reply) finds its token still held and gets its lease back: one slot, not two.
--
-- Invariant: used + |held| <= max. Expired leases stay in `held` until a reserve finds the
-- window full and purges them, which is when their slots go back to the pool; a start removes
-- its token first, so a purged (re-granted) lease can never be started too.
local start, stop, expire_at, max, lease, seed =
  string.match(ARGV[1], '^(%d+) (%d+) (%d+) (%d+) (%d+) (%-?%d+)$')
start, stop, max, lease, seed = tonumber(start), tonumber(stop), tonumber(max), tonumber(lease), tonumber(seed)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now < start or now >= stop then return {-2, now, 0} end
local mine = redis.call('ZSCORE', KEYS[2], ARGV[2])
if mine then return {1, tonumber(mine), redis.call('ZCARD', KEYS[2])} end
local used = redis.call('GET', KEYS[1])
if not used then
  if seed < 0 then return {2, 0, 0} end
  redis.call('SET', KEYS[1], seed, 'NX', 'PXAT', expire_at)
  used = redis.call('GET', KEYS[1])
end
used = tonumber(used)
local held = redis.call('ZCARD', KEYS[2])
if used + held >= max and held > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)  -- dead holders give their slots back
  held = redis.call('ZCARD', KEYS[2])
end
if used + held >= max then return {0, used, held} end
local lease_until = now + lease
redis.call('ZADD', KEYS[2], lease_until, ARGV[2])
if held == 0 then redis.call('PEXPIREAT', KEYS[2], expire_at) end
return {1, lease_until, held + 1}
