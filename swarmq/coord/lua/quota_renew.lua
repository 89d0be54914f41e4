-- Extend the lease of a live reservation. KEYS[1]: held. ARGV[1]: token, ARGV[2]: lease (ms).
-- Returns the new lease end (ms), or 0 when the reservation is gone or already expired.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not lease or tonumber(lease) <= now then return 0 end
local until_ms = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], 'XX', until_ms, ARGV[1])
return until_ms
