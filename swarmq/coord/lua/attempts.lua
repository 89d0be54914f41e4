-- Count one more start of a message. KEYS[1]: counter. ARGV[1]: TTL ms. Returns the count.
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return n
