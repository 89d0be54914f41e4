-- Reserve one slot of a daily quota, atomically, with Redis TIME as the clock.
-- KEYS[1]: `used` (integer) and KEYS[2]: `held` (zset token → lease end, ms) of the window the
--          client believes is current.
-- ARGV[1]: window start, ARGV[2]: window end, ARGV[3]: when its keys expire (all epoch ms).
-- ARGV[4]: max calls. ARGV[5]: lease (ms). ARGV[6]: token.
-- ARGV[7]: seed for `used` when its key is missing (-1: unknown, ask the caller).
-- Returns {status, a, b}:
--   { 1, lease end, held}  reserved
--   { 0, used, held}       exhausted
--   { 2, 0, 0}             `used` is missing: call again with a seed from the disk mirror
--   {-2, now, 0}           the server's clock is outside this window: pick the window of `now`
--
-- Invariant: used + |held| <= max. Expired leases stay in `held` until a reserve finds the
-- window full and purges them, which is when their slots go back to the pool; a start removes
-- its token first, so a purged (re-granted) lease can never be started too.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now < tonumber(ARGV[1]) or now >= tonumber(ARGV[2]) then return {-2, now, 0} end
local used = redis.call('GET', KEYS[1])
if not used then
  if tonumber(ARGV[7]) < 0 then return {2, 0, 0} end
  redis.call('SET', KEYS[1], ARGV[7], 'NX', 'PXAT', ARGV[3])
  used = redis.call('GET', KEYS[1])
end
used = tonumber(used)
local max = tonumber(ARGV[4])
local held = redis.call('ZCARD', KEYS[2])
if used + held >= max and held > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)  -- dead holders give their slots back
  held = redis.call('ZCARD', KEYS[2])
end
if used + held >= max then return {0, used, held} end
local lease_until = now + tonumber(ARGV[5])
redis.call('ZADD', KEYS[2], lease_until, ARGV[6])
if held == 0 then redis.call('PEXPIREAT', KEYS[2], ARGV[3]) end
return {1, lease_until, held + 1}
