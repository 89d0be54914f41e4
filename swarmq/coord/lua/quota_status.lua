-- Read a quota's current window. KEYS[1..6]: used/held of three windows, ARGV[1..4]: their
-- starts and the end of the last (epoch ms).
-- Returns {window index or -1, used or -1 when missing, live held, the server's now (ms)}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local idx = -1
for i = 1, 3 do
  if tonumber(ARGV[i]) <= now and now < tonumber(ARGV[i + 1]) then idx = i break end
end
if idx == -1 then return {-1, -1, 0, now} end
local used = redis.call('GET', KEYS[2 * idx - 1])
local held = redis.call('ZCOUNT', KEYS[2 * idx], '(' .. now, '+inf')
return {idx - 1, used and tonumber(used) or -1, held, now}
