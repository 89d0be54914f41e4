-- Take a store lock. KEYS[1]: lock, KEYS[2]: fencing counter.
-- ARGV[1]: token, ARGV[2]: lease ms, ARGV[3]: how long the counter outlives its last holder (ms).
-- Returns the new fencing token, or 0 when another holder has it.
-- The counter may expire: files record the largest token that wrote them, and lock_validate
-- moves a restarted counter past it (for the lock's owner only), so Redis need not keep a
-- counter for every file ever locked.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local n = redis.call('INCR', KEYS[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return n
end
-- The same token again: this call already took the lock and its answer was lost (a Redis
-- killed between its AOF fsync and its reply, and the caller asked again once Redis was back).
-- The lock is the caller's: the same answer, never a wait for its own lease.
-- Nobody else took the lock since, so the counter is still the one this call set.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  local n = tonumber(redis.call('GET', KEYS[2]))
  if not n then n = redis.call('INCR', KEYS[2]) end
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return n
end
return 0
