-- Gives a host units of one key from the key's line, or takes units back, atomically, on
-- Redis' clock. O(1): nothing here reads what other hosts hold.
--
-- A crowded key (more hosts than its burst has requests) is not split into parts: its limits
-- are one line (GCRA) per dimension, a theoretical arrival time that every unit given moves on
-- by its amount over the rate, with the burst as the tolerance. A unit is valid at the moment
-- its line allows it; units given out never add up to more than one burst plus the limit
-- over the time they span, however many hosts ask, and a host that asks nothing holds
-- nothing. (The line keeps one unit of the burst back, so a unit a little early is still
-- taken.) A host asks for what its demand needs over a short look ahead (at least one unit),
-- and is given every unit valid within that look ahead, or, when none is, its place in the
-- line: the next unit and those within a window that shrinks as the line grows. A busy fleet
-- queues in the order it asked, a few units each while few hosts wait, one when many do.
--
-- A line begins (a dimension's first unit) with what the hosts may still send of the parts
-- they held taken as spent: each part as full as it was when its host last renewed, refilled
-- at its share of the rate since, and a part full enough for a request sends one however small
-- it is (a host's bucket lets a request above a full part go). Hosts that had just spent their
-- parts cost the line nothing; a line begun after a fault (part.lua's "fault") takes a burst
-- and its look ahead as spent: what the hosts not yet renewed may hold of the line before.
--
-- KEYS[1]  llmctl:{K}:line      hash: on ("1" once part.lua found the key crowded), t1..t4
--                               (each dimension's theoretical arrival time, Redis ms),
--                               given_seq, ~headers (the fleet's last headers), and what the
--                               hosts held when part.lua put the key on its line: held
--                               ("share f1 f2 f3 f4 renewed_ms" for each part, comma
--                               separated), fault ("1": begun while the parts were rebuilt)
-- KEYS[2]  llmctl:{K}:given     sorted set: units given back, by the Redis time they are
--                               valid at; member "id a1 a2 a3 a4" (their amounts)
-- KEYS[3]  llmctl:{K}:cooldown  string: reason, expiring when the cooldown ends
-- ARGV     host, count (units asked; 0: give back), ahead_ms (the look ahead), then for each
--          of the four dimensions (requests tokens input_tokens output_tokens) its rate (units
--          per ms; 0: not limited) and its burst, then the provider's last headers seen here
--          when they changed (JSON, or empty), the Redis time of the last headers this host
--          took from the fleet, how long the line is kept unused (ms), what requests settled
--          below their estimate left unused (four dimensions: back to the line, which moves
--          back by it, never before now); then, asking, each unit's four amounts in the order
--          the host's requests will use them (one request's needs each, less what it holds),
--          or, giving back, each unit's ms from now at which it is valid and its four amounts
--
-- Returns { on the line (0: the key is not on one: renew its part), units given, their ms
--           from now (space separated), cooldown ms left (0: none), cooldown reason, the
--           Redis time of the fleet's last headers when another host stored them after the
--           time given (0: nothing new), those headers }

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local host = ARGV[1]
local count = math.max(math.floor(tonumber(ARGV[2]) or 0), 0)
local ahead = math.max(tonumber(ARGV[3]) or 0, 0)
local rate, burst = {}, {}
for d = 1, 4 do
  rate[d] = math.max(tonumber(ARGV[2 + 2 * d]) or 0, 0)
  burst[d] = math.max(tonumber(ARGV[3 + 2 * d]) or 0, 0)
end
local headers = ARGV[12] or ''
local seen_ms = tonumber(ARGV[13]) or 0
local keep_ms = math.max(tonumber(ARGV[14]) or 0, 60000)
local returned = {}
for d = 1, 4 do
  returned[d] = math.max(tonumber(ARGV[14 + d]) or 0, 0)
end
local FIRST = 19
local units = {}
for i = 1, count do
  local u = {}
  for d = 1, 4 do
    u[d] = math.max(tonumber(ARGV[FIRST + 4 * (i - 1) + d - 1]) or 0, 0)
  end
  units[i] = u
end

local cooldown_ms = redis.call('PTTL', KEYS[3])
local cooldown_reason = ''
if cooldown_ms > 0 then
  cooldown_reason = redis.call('GET', KEYS[3]) or ''
else
  cooldown_ms = 0
end

if redis.call('HGET', KEYS[1], 'on') ~= '1' then
  return { 0, 0, '', cooldown_ms, cooldown_reason, 0, '' }
end

-- What the provider was not asked for after all is the line's again.
for d = 1, 4 do
  if returned[d] > 0 and rate[d] > 0 then
    local at = tonumber(redis.call('HGET', KEYS[1], 't' .. d) or '')
    if at and at > now then
      redis.call('HSET', KEYS[1], 't' .. d, string.format('%.3f', math.max(at - returned[d] / rate[d], now)))
    end
  end
end

local offsets = {}
if count == 0 then
  -- Units given back: kept for the next host that asks, while they are still to come.
  local seq = redis.call('HINCRBY', KEYS[1], 'given_seq', 1)
  for i = FIRST, #ARGV - 4, 5 do
    local off = tonumber(ARGV[i])
    if off and off > 0 then
      local member = string.format('%d:%d %.6f %.6f %.6f %.6f', seq, i, tonumber(ARGV[i + 1]) or 0,
        tonumber(ARGV[i + 2]) or 0, tonumber(ARGV[i + 3]) or 0, tonumber(ARGV[i + 4]) or 0)
      redis.call('ZADD', KEYS[2], now + off, member)
    end
  end
  redis.call('PEXPIRE', KEYS[2], keep_ms)
else
  -- Units given back and still to come go first, each to the next unit asked that it covers.
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  local back = redis.call('ZRANGEBYSCORE', KEYS[2], now, now + ahead, 'WITHSCORES', 'LIMIT', 0, count)
  for i = 1, #back, 2 do
    local u = units[#offsets + 1]
    if not u then break end
    local fits, d = true, 1
    for x in string.gmatch(string.match(back[i], '^%S+ (.*)$') or '', '%S+') do
      if d <= 4 and rate[d] > 0 and (tonumber(x) or 0) + 1e-9 < u[d] then fits = false end
      d = d + 1
    end
    if fits then
      redis.call('ZREM', KEYS[2], back[i])
      offsets[#offsets + 1] = math.max(tonumber(back[i + 1]) - now, 0)
    end
  end
  -- Then the line, unit by unit in the order asked: every unit valid within the look ahead,
  -- or one.
  local tat, tau = {}, {}
  -- Where a dimension's line begins (see above).
  local function begun(d, r)
    if redis.call('HGET', KEYS[1], 'fault') == '1' then
      return now + burst[d] / r + ahead
    end
    local spent = 0
    for part in string.gmatch(redis.call('HGET', KEYS[1], 'held') or '', '[^,]+') do
      local x = {}
      for y in string.gmatch(part, '%S+') do x[#x + 1] = tonumber(y) or 0 end
      if #x >= 6 and x[1] > 0 and burst[d] > 0 then
        local level = math.min(x[1 + d] + math.max(now - x[6], 0) * r / burst[d], 1)
        local holds = x[1] * burst[d] * level
        if d == 1 and level >= 1 then holds = math.max(holds, 1) end
        spent = spent + holds
      end
    end
    return now + spent / r
  end
  for d = 1, 4 do
    local biggest = 0
    for i = #offsets + 1, count do biggest = math.max(biggest, units[i][d]) end
    if rate[d] > 0 and biggest > 0 then
      local r = rate[d]
      tat[d] = math.max(tonumber(redis.call('HGET', KEYS[1], 't' .. d) or '') or begun(d, r), now)
      -- One unit of the burst (at most half) is never given: a unit that reaches the provider
      -- a little early (clocks, transit) still finds its bucket with room.
      tau[d] = math.max(burst[d] - math.min(biggest, burst[d] / 2), 0) / r
    end
  end
  -- Units valid within the look ahead; when the first is further off (the line is long), those
  -- within a window that shrinks as the line grows (ahead² / its wait): a busy host takes
  -- several at a time while few hosts queue, one at a time when many do.
  local from_line, last = 0, now + ahead
  while #offsets < count do
    local u = units[#offsets + 1]
    local valid = now
    for d = 1, 4 do
      -- (A unit larger than the burst less the unit kept back goes once the bucket is full:
      -- waiting longer adds nothing to it.)
      if tat[d] and u[d] > 0 then
        valid = math.max(valid, tat[d] + math.min(u[d] / rate[d] - tau[d], 0))
      end
    end
    if from_line == 0 and valid > last then last = valid + ahead * ahead / (valid - now) end
    if #offsets > 0 and valid > last then break end
    from_line = from_line + 1
    -- A unit counts in each dimension from the moment it is valid: one that another dimension
    -- held back finds this one's bucket fuller, never emptier, than the line had it (the
    -- refill in between is lost at the brim), so the units after it wait from its moment.
    for d = 1, 4 do
      if tat[d] and u[d] > 0 then
        tat[d] = math.max(tat[d], valid) + u[d] / rate[d]
      end
    end
    offsets[#offsets + 1] = math.ceil(valid - now)
  end
  for d = 1, 4 do
    if tat[d] then
      redis.call('HSET', KEYS[1], 't' .. d, string.format('%.3f', tat[d]))
    end
  end
end

-- The fleet's last headers: what this host saw, or what another host saw since it last took.
local headers_ms, headers_out = 0, ''
if headers ~= '' then
  redis.call('HSET', KEYS[1], '~headers', now .. ' ' .. host .. ' ' .. headers)
else
  local stored = redis.call('HGET', KEYS[1], '~headers')
  if stored then
    local at, from, json = string.match(stored, '^(%d+) (%S+) (.*)$')
    at = tonumber(at)
    if at and at > seen_ms and from ~= host then
      headers_ms, headers_out = at, json
    end
  end
end
redis.call('PEXPIRE', KEYS[1], keep_ms)
return { 1, #offsets, table.concat(offsets, ' '), cooldown_ms, cooldown_reason, headers_ms, headers_out }
