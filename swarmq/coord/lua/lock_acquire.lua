-- Take a store lock. KEYS[1]: lock, KEYS[2]: fencing counter. ARGV[1]: token, ARGV[2]: lease ms.
-- Returns the new fencing token, or 0 when another holder has it.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0
