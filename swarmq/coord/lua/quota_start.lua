-- Turn a reservation into a used call, just before the LLM request goes out.
-- KEYS[1]: used, KEYS[2]: held (of the window the token was reserved in); KEYS[3]: this start's
-- receipt, kept 60 s (far beyond the gate's last ask, ASK_AGAIN_PAUSES; a constant here, since
-- each argument costs the client more than the server's work). ARGV[1]: token.
-- Returns {status, used}: 1 started; 0 no longer held (released, expired and given back to the
-- pool by a purge, or lost with Redis's keys).
-- A lease past its end that nobody purged still owns its slot (used + held <= max holds), so it
-- may start; one that was purged is gone from `held` and refused here.
-- The same start asked again after its answer was lost (a Redis killed between its AOF fsync
-- and its reply) finds its receipt and gets the first answer: counted once, and the call goes.
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  local first = redis.call('GET', KEYS[3])
  if first then return {1, tonumber(first)} end
  return {0, 0}
end
local used = redis.call('INCR', KEYS[1])
-- `used` is created with its expiry by the reservation. INCR on a vanished key would start
-- again from zero with no expiry: undo it and refuse instead.
if used == 1 and redis.call('PTTL', KEYS[1]) == -1 then
  redis.call('DEL', KEYS[1])
  return {0, 0}
end
redis.call('SET', KEYS[3], used, 'PX', 60000)
return {1, used}
