-- Release a lock, only for its owner (also a beat lease and a presence key: any key whose
-- value is its owner's token). KEYS[1]: lock; KEYS[2], optional: the release's receipt.
-- ARGV[1]: token; ARGV[2], with KEYS[2]: how long the receipt lasts (ms).
-- Returns 1 when the owner released it. With a receipt, 2 when the same call comes again after
-- it released the lock (its answer was lost to a Redis killed between its AOF fsync and its
-- reply, and the caller asked again): that release found the lock still the caller's, which is
-- what a release that confirms a commit must tell, whoever took the lock since. Else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if KEYS[2] then redis.call('SET', KEYS[2], '1', 'PX', ARGV[2]) end
  return redis.call('DEL', KEYS[1])
end
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
return 0
