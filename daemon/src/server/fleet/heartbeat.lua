-- A host says it is alive, and learns how many are.
--
-- KEYS[1]  llmctl:hosts  sorted set: host by the time (Redis' clock, ms) its heartbeat lapses
-- ARGV     host, ttl_ms (0: the host leaves)
--
-- Returns the number of live hosts.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local ttl = tonumber(ARGV[2]) or 0
if ttl > 0 then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
return redis.call('ZCARD', KEYS[1])
