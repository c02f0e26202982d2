-- Compare and set: a claim record changes only if it is still what its reader saw.
--
-- KEYS[1]  llmctl:{job}:claim
-- ARGV     1 when a value was read (0: it was absent), the value read, the new value, ms kept
--
-- Returns 1 when written, 0 when someone changed it first.
local cur = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if cur ~= ARGV[2] then return 0 end
elseif cur then
  return 0
end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
return 1
