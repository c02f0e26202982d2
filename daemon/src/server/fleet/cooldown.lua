-- Shares a cooldown with the fleet: kept until it ends (Redis' clock), and published.
--
-- KEYS[1]  llmctl:{K}:cooldown
-- ARGV     ms left, reason, channel, message (published only when the cooldown grew),
--          PUBLISH or SPUBLISH (a cluster: the key's sharded channel, on this node; absent:
--          PUBLISH)
--
-- Returns the ms left of the key's cooldown after this one.
local ms = tonumber(ARGV[1]) or 0
local left = redis.call('PTTL', KEYS[1])
if ms > left then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ms)
  redis.call(ARGV[5] == 'SPUBLISH' and 'SPUBLISH' or 'PUBLISH', ARGV[3], ARGV[4])
  return ms
end
return math.max(left, 0)
