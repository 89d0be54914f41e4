-- Token bucket shared by the cluster. KEYS[1]: bucket hash.
-- ARGV[1]: capacity (tokens), ARGV[2]: refill per second, ARGV[3]: tokens requested.
-- Returns {granted 0|1, ms to wait before enough tokens exist}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local capacity, rate, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate / 1000)
local granted, wait = 0, 0
if tokens >= want then
  tokens = tokens - want
  granted = 1
else
  wait = math.ceil((want - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity * 1000 / rate) + 1000)
return {granted, wait}
