-- Extend a lock's lease, only for its owner (also the beat's lease). KEYS[1]: lock.
-- ARGV[1]: token, ARGV[2]: lease ms.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
