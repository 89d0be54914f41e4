-- Release a lock, only for its owner (also a beat lease and a presence key: any key whose
-- value is its owner's token). KEYS[1]: lock. ARGV[1]: token.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
