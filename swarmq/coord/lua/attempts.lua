-- Count one more start of a message, once per start however often that start is asked.
-- KEYS[1]: the set of its starts. ARGV[1]: TTL ms. ARGV[2]: this start's id, chosen by the
-- caller and kept when it asks again after an answer was lost (a Redis killed between its AOF
-- fsync and its reply): the second ask finds its id already in and counts nothing more.
-- Returns how many starts the set holds, this one included.
redis.call('SADD', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return redis.call('SCARD', KEYS[1])
