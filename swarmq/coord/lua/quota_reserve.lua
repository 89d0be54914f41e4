-- Reserve one slot of a daily quota, atomically, with Redis TIME as the clock.
-- KEYS[1..6]: used/held of the previous, current and next window (by the client's clock).
-- ARGV[1..4]: start of those three windows and end of the last one (epoch ms).
-- ARGV[5]: max calls per window. ARGV[6]: token. ARGV[7]: lease (ms).
-- ARGV[8..10]: seed for each window's `used` when its key is missing (-1: unknown, ask).
-- ARGV[11]: grace (ms) after a window's end before its keys expire.
-- Returns {status, window index (0-2), used, held, now_ms, lease_until_ms}:
--   status 1 reserved, 0 exhausted, 2 needs a seed from the disk mirror, -1 clock skew.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local bounds = {tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])}
local idx = -1
for i = 1, 3 do
  if bounds[i] <= now and now < bounds[i + 1] then idx = i end
end
if idx == -1 then return {-1, -1, 0, 0, now, 0} end
local used_key, held_key = KEYS[2 * idx - 1], KEYS[2 * idx]
local expire_at = bounds[idx + 1] + tonumber(ARGV[11])
local max = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', held_key, '-inf', now)
local used = redis.call('GET', used_key)
if not used then
  local seed = tonumber(ARGV[7 + idx])
  if seed < 0 then return {2, idx - 1, 0, 0, now, 0} end
  redis.call('SET', used_key, seed, 'NX', 'PXAT', expire_at)
  used = redis.call('GET', used_key)
end
used = tonumber(used)
local held = redis.call('ZCARD', held_key)
if used + held >= max then return {0, idx - 1, used, held, now, 0} end
local lease_until = now + tonumber(ARGV[7])
redis.call('ZADD', held_key, lease_until, ARGV[6])
redis.call('PEXPIREAT', held_key, expire_at)
return {1, idx - 1, used, held + 1, now, lease_until}
