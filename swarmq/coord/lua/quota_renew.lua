-- Extend the lease of a reservation still in `held`. KEYS[1]: held. ARGV[1]: token,
-- ARGV[2]: lease (ms). Returns the new lease end (ms), or 0 when the reservation is gone.
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local t = redis.call('TIME')
local until_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], 'XX', until_ms, ARGV[1])
return until_ms
