-- Just before a commit: is the caller still the owner, and which fencing token may it record?
-- KEYS[1]: lock, KEYS[2]: fencing counter.
-- ARGV[1]: token, ARGV[2]: the caller's fencing token, ARGV[3]: token recorded beside the file,
-- ARGV[4]: counter lifetime (ms).
-- Returns {status, fencing token}: 1 valid; 2 valid after the counter was moved past the
-- recorded token (Redis lost or expired the counter, yet the caller owns the lock); 0 not the
-- owner. The caller has already refused a record written under another lock name (see
-- swarmq.storage.atomic.check_fence): moving past a token issued for another name would let two
-- holders that do not exclude each other both write.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0, 0} end
local mine, recorded = tonumber(ARGV[2]), tonumber(ARGV[3])
if recorded <= mine then return {1, mine} end
local current = tonumber(redis.call('GET', KEYS[2]) or '0')
local next_token = math.max(current, recorded) + 1
redis.call('SET', KEYS[2], next_token, 'PX', ARGV[4])
return {2, next_token}
