-- Turn a reservation into a used call, just before the LLM request goes out.
-- KEYS[1]: used, KEYS[2]: held (of the window the token was reserved in).
-- ARGV[1]: token, ARGV[2]: absolute expiry of the window's keys (epoch ms).
-- Returns {status, used}: 1 started; 0 not held (released, or keys lost); -1 lease expired.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not lease then return {0, 0} end
redis.call('ZREM', KEYS[2], ARGV[1])
if tonumber(lease) <= now then return {-1, 0} end
if redis.call('EXISTS', KEYS[1]) == 0 then
  -- `used` vanished while `held` survived: refuse rather than count from zero.
  return {0, 0}
end
local used = redis.call('INCR', KEYS[1])
redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[2]))
return {1, used}
