-- Give a reserved, never started slot back. Idempotent; a started slot is never refunded.
-- KEYS[1]: held. ARGV[1]: token. Returns 1 if a reservation was removed, else 0.
return redis.call('ZREM', KEYS[1], ARGV[1])
