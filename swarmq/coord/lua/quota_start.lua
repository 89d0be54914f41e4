-- Turn a reservation into a used call, just before the LLM request goes out.
-- KEYS[1]: used, KEYS[2]: held (of the window the token was reserved in). ARGV[1]: token.
-- Returns {status, used}: 1 started; 0 not held (released, or keys lost); -1 lease expired.
local lease = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not lease then return {0, 0} end
redis.call('ZREM', KEYS[2], ARGV[1])
local t = redis.call('TIME')
if tonumber(lease) <= tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then return {-1, 0} end
local used = redis.call('INCR', KEYS[1])
-- `used` is created with its expiry by the reservation. INCR on a vanished key would start
-- again from zero with no expiry: undo it and refuse instead.
if used == 1 and redis.call('PTTL', KEYS[1]) == -1 then
  redis.call('DEL', KEYS[1])
  return {0, 0}
end
return {1, used}
