-- Gives one host its part of one key's limits, atomically, on Redis' clock.
--
-- KEYS[1]  llmctl:{K}:parts     hash: host -> "share slots expires_ms want want_slots f1 f2 f3
--                               f4 held renewed_ms" (how full its part of each burst was when
--                               it renewed, whether it held a part or a line's units then, and
--                               when), and
--                               "~bank" -> the burst given back and not yet taken, per dimension
--                               (requests tokens input_tokens output_tokens), as shares of
--                               each burst
-- KEYS[2]  llmctl:{K}:cooldown  string: reason, expiring when the cooldown ends
-- KEYS[3]  llmctl:{K}:epoch     string: the Redis time (ms) until which the parts are being
--                               rebuilt; set when it is missing (a new Redis, or one that lost
--                               its state), kept as long as the parts
-- KEYS[4]  llmctl:{K}:fault     string, expiring when a fault's requests are taken to be over:
--                               set when a host renews knowing no part while Redis still
--                               counts one as its (it restarted: its clients may have called
--                               unlimited meanwhile)
-- KEYS[5]  llmctl:{K}:line      hash: the key's line (line.lua), "on" once the key is crowded,
--                               and what the hosts held when it began (see below)
-- ARGV     host, want (share of the limits wanted, may exceed 1), want_slots, in_use (slots
--          in flight here), max_slots (-1: no concurrency limit), ttl_ms (0: give it all back),
--          then how full this host's part of each burst is (0 to 1, four dimensions), the
--          provider's last rate-limit headers seen here when they changed (JSON, or empty), the
--          Redis time of the last headers this host took from the fleet (0: none), the share this
--          host holds as it knows it (0: none), the live hosts it last counted (0: none), and
--          how long a host whose lease lapsed is still counted as holding its part (ms), and
--          the key's burst in requests (0: none known), and whether this host was on the key's
--          line (1: it may hold units a line gave)
--
-- A crowded key is not split: once more hosts hold or want a part than its burst has requests
-- (an even part of the burst would be less than one request, which every host could send at
-- once), the key goes on its line (line.lua) for good while it is used, and a host that renews
-- gives its part back and is told to take units from the line; the hosts holding parts are
-- asked to renew at once, and come to the line too. Until they come, they may still send
-- what their parts hold: the line begins with that taken as spent ("held": each part's share,
-- how full it was when last renewed and when, which line.lua refills at the line's rate; a
-- silent host's part as full). A line that begins while the parts are rebuilt after a fault
-- (a Redis that lost its state, when a host says it held a part or a line's units) cannot know
-- what the hosts not yet renewed hold: it begins with a burst and its look ahead spent
-- ("fault"). A fleet's very first line begins full.
--
-- A host whose lease lapsed has gone silent: crashed, or cut off from Redis while it still
-- serves (a host without Redis keeps its part until its lease lapses, then serves an even part
-- among the hosts it last counted). Until its grace has passed it is counted as holding the
-- larger of its last share and an even part, so that the hosts still connected never take what
-- it may still be using: the parts add up to no more than the whole at every moment. (One that
-- held and wanted nothing at its last renewal was idle and is not counted: an idle host cut off
-- later, and then given work, is the case this does not cover.)
--
-- A Redis without the epoch key has lost what the hosts hold (or never knew it): until one
-- lease has passed, so that every live host has renewed once, no host is given more than the
-- share it says it holds, or an even part among the hosts it last counted. So the first host to
-- renew after Redis restarted empty cannot take the whole key while the others still serve
-- theirs.
--
-- The whole of each limit is split max-min fairly by what the live hosts want; what nobody
-- wants is spread evenly over them (so an idle host holds a little of the burst). A host is
-- given at most what the others do not hold, so the parts never add up to more than the whole:
-- a host that holds more than its part gives it back at its next renewal (it is asked to).
-- A host whose part shrinks gives back the burst it held above its new part to the bank; a
-- host whose part grows takes from the bank up to its growth, counted from the part it holds
-- here as well as the one recorded. The bank never holds more than the share nobody holds, so
-- the burst is kept, never made.
--
-- Returns { share (string), slots (-1: no limit), live hosts, target share (string),
--           cooldown ms left (0: none), cooldown reason, asks others to renew (0 or 1),
--           ms until another host's lease lapses when this one got less than its part (0),
--           the part its burst was banked from (string: the lesser of the part recorded and
--           the part it holds here), burst taken from the bank (string, four dimensions,
--           space separated), the Redis time of the fleet's last headers when another host
--           stored them after the time given (0: nothing new), those headers, on the line
--           (1: the key is crowded and no part is given: its units come from line.lua) }
-- where "asks others to renew" also has 2 added when a fault may send requests nobody here
-- sees (a host gone silent or restarted, the parts being rebuilt in a new epoch after Redis
-- lost them).

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local host = ARGV[1]
local want = math.max(tonumber(ARGV[2]) or 0, 0)
local want_slots = math.max(tonumber(ARGV[3]) or 0, 0)
local in_use = math.max(tonumber(ARGV[4]) or 0, 0)
local max_slots = tonumber(ARGV[5]) or -1
local ttl = tonumber(ARGV[6]) or 0
local fill = {}
for d = 1, 4 do
  fill[d] = math.min(math.max(tonumber(ARGV[6 + d]) or 0, 0), 1)
end

local headers = ARGV[11] or ''
local seen_ms = tonumber(ARGV[12]) or 0
local held_here = math.max(tonumber(ARGV[13]) or 0, 0)
-- (A daemon older than the burst's moving from what a host holds sends none.)
local held_given = ARGV[13] ~= nil and ARGV[13] ~= ''
local hosts_seen = math.max(tonumber(ARGV[14]) or 0, 0)
local grace = math.max(tonumber(ARGV[15]) or 0, 0)
local burst_units = tonumber(ARGV[16]) or 0
local on_line = ARGV[17] == '1'

local keep_ms = math.max(ttl, 60000) * 4
local settle_until = tonumber(redis.call('GET', KEYS[3]) or '')
if not settle_until then
  settle_until = now + ttl
end
redis.call('SET', KEYS[3], settle_until, 'PX', keep_ms)

local others = {}
local silent = {}
local bank = { 0, 0, 0, 0 }
local stored_headers = nil
local raw = redis.call('HGETALL', KEYS[1])
local before, before_slots = 0, 0
for i = 1, #raw, 2 do
  local name, v = raw[i], raw[i + 1]
  if name == '~headers' then
    stored_headers = v
  elseif name == '~bank' then
    local d = 1
    for x in string.gmatch(v, '%S+') do
      if d <= 4 then bank[d] = tonumber(x) or 0 end
      d = d + 1
    end
  else
    local share, slots, exp, w, ws, rest = string.match(v, '^(%S+) (%S+) (%S+) (%S+) (%S+)(.*)$')
    exp = tonumber(exp)
    -- (A record from a daemon before fills were kept: its part taken as full.)
    local f, held_then, at = { 1, 1, 1, 1 }, false, now
    local x = {}
    for y in string.gmatch(rest or '', '%S+') do x[#x + 1] = tonumber(y) or 0 end
    if #x >= 6 then
      f = { x[1], x[2], x[3], x[4] }
      held_then, at = x[5] == 1, x[6]
    end
    if not (exp and exp > now) then
      -- (A host that held and wanted nothing had gone idle, not silent: it is not counted.)
      local used = (tonumber(share) or 0) > 0 or (tonumber(w) or 0) > 0
      if exp and name ~= host and used and exp + grace > now then
        silent[#silent + 1] = { share = tonumber(share) or 0, until_ms = exp + grace,
          held_then = held_then }
      else
        -- Lapsed past its grace: its part is free, its burst unknown, so not banked.
        redis.call('HDEL', KEYS[1], name)
      end
    elseif name == host then
      before = tonumber(share) or 0
      before_slots = tonumber(slots) or 0
      if ttl > 0 and held_here == 0 and before > 0 then
        redis.call('SET', KEYS[4], host, 'PX', math.max(ttl, 5000))
      end
    else
      others[#others + 1] = {
        name = name, share = tonumber(share) or 0, slots = tonumber(slots) or 0,
        want = tonumber(w) or 0, want_slots = tonumber(ws) or 0, fill = f,
        held_then = held_then, at = at,
      }
    end
  end
end

local cooldown_ms = redis.call('PTTL', KEYS[2])
local cooldown_reason = ''
if cooldown_ms > 0 then
  cooldown_reason = redis.call('GET', KEYS[2]) or ''
else
  cooldown_ms = 0
end

local hosts = { { name = host, want = want, want_slots = want_slots } }
local others_share, others_slots = 0, 0
for _, o in ipairs(others) do
  hosts[#hosts + 1] = o
  others_share = others_share + o.share
  others_slots = others_slots + o.slots
end
local n = #hosts
-- What the silent hosts may still be using of the rates: taken off the whole before it is
-- split. (Their concurrency slots come back when their lease lapses, as a crashed host's must.)
local silent_share = 0
for _, s in ipairs(silent) do
  silent_share = silent_share + math.max(s.share, 1.0 / (n + #silent))
end
silent_share = math.min(silent_share, 1.0)

-- A crowded key: on the line, with no part (see above).
-- (A caller that names no line key knows no lines.)
local line_on = KEYS[5] ~= nil and redis.call('HGET', KEYS[5], 'on') == '1'
if KEYS[5] ~= nil and (line_on
    or (ttl > 0 and max_slots < 0 and burst_units > 0 and n + #silent > burst_units)) then
  if not line_on then
    -- What the hosts may still send of their parts: this one's as it holds it now, the others'
    -- as they were when they renewed, a silent host's as full.
    local held = { string.format('%.6f %.6f %.6f %.6f %.6f %d', math.max(before, held_here), fill[1], fill[2],
      fill[3], fill[4], now) }
    local fault = now < settle_until and (held_here > 0 or on_line)
    for _, o in ipairs(others) do
      held[#held + 1] = string.format('%.6f %.6f %.6f %.6f %.6f %d', o.share, o.fill[1],
        o.fill[2], o.fill[3], o.fill[4], o.at)
      fault = fault or (now < settle_until and o.held_then)
    end
    for _, o in ipairs(silent) do
      held[#held + 1] = string.format('%.6f 1 1 1 1 %d', o.share, now)
      fault = fault or (now < settle_until and o.held_then)
    end
    redis.call('HSET', KEYS[5], 'held', table.concat(held, ','), 'fault', fault and '1' or '0')
  end
  redis.call('HDEL', KEYS[1], host)
  redis.call('HSET', KEYS[5], 'on', '1')
  redis.call('PEXPIRE', KEYS[5], keep_ms)
  redis.call('PEXPIRE', KEYS[1], keep_ms)
  -- The hosts holding parts hear at once that the key is on its line.
  local ask = 0
  if not line_on and #others > 0 then ask = 1 end
  if #silent > 0 or redis.call('PTTL', KEYS[4]) > 0 then ask = ask + 2 end
  return { '0.000000', -1, n + #silent, '0.000000', cooldown_ms, cooldown_reason, ask, 0,
    '0.000000', '0 0 0 0', 0, '', 1 }
end

-- Max-min fair split of `total` by `field`; `whole` rounds each part down to a whole number.
local function split(total, field, whole)
  table.sort(hosts, function(a, b)
    if a[field] == b[field] then return a.name < b.name end
    return a[field] < b[field]
  end)
  local left, parts = total, {}
  for i, h in ipairs(hosts) do
    local fair = left / (n - i + 1)
    if whole then fair = math.floor(fair) end
    local give = math.min(h[field], fair)
    parts[h.name] = give
    left = left - give
  end
  return parts, left
end

local share, target, slots, slot_target = 0, 0, -1, -1
if ttl > 0 then
  local parts, spare = split(1.0 - silent_share, 'want', false)
  target = parts[host] + spare / n
  share = math.max(0, math.min(target, 1.0 - silent_share - others_share))
  if max_slots >= 0 then
    local sparts, sleft = split(max_slots, 'want_slots', true)
    -- Slots nobody wants go one by one to the hosts that want the most, then to the rest.
    table.sort(hosts, function(a, b)
      if a.want_slots == b.want_slots then return a.name < b.name end
      return a.want_slots > b.want_slots
    end)
    while sleft > 0 do
      for _, h in ipairs(hosts) do
        if sleft > 0 then
          sparts[h.name] = sparts[h.name] + 1
          sleft = sleft - 1
        end
      end
    end
    slot_target = sparts[host]
    slots = math.max(0, math.min(slot_target, max_slots - others_slots))
  end
end
-- A new epoch: nobody takes more than it held (or an even part) until every host has renewed.
if ttl > 0 and now < settle_until then
  local cap = 1.0
  if held_here > 0 then
    cap = held_here
  elseif hosts_seen > 1 then
    cap = 1.0 / hosts_seen
  end
  share = math.min(share, cap)
end
-- Shares go out with six decimals: the bank works with what the host is told.
share = tonumber(string.format('%.6f', share))

-- The burst: what a shrinking part held above its new part is banked; a growing part takes.
-- The part Redis recorded and the part the host holds here are one, unless Redis was away
-- meanwhile: then the host served the even split or borrowed more, or its record lapsed. What
-- is banked is what it held within both (a part no longer held, or burst borrowed beyond its
-- record, is not the provider's to give again); what is taken is growth beyond either.
local held_part = before
if held_given then held_part = held_here end
local had = math.min(before, held_part)
local grew_from = math.max(before, held_part)
local taken = { 0, 0, 0, 0 }
for d = 1, 4 do
  bank[d] = bank[d] + math.max(0, math.min(fill[d] * held_part, had) - share)
  if share > grew_from then
    taken[d] = math.min(bank[d], share - grew_from)
    bank[d] = bank[d] - taken[d]
  end
  bank[d] = math.min(math.max(bank[d], 0), math.max(0, 1.0 - silent_share - others_share - share))
end
redis.call('HSET', KEYS[1], '~bank', string.format('%.6f %.6f %.6f %.6f', bank[1], bank[2], bank[3], bank[4]))

-- Slots in flight here stay counted until they come back.
local held_slots = math.max(slots, in_use)
if ttl <= 0 then
  redis.call('HDEL', KEYS[1], host)
else
  redis.call('HSET', KEYS[1], host, string.format('%.6f %d %d %.6f %d %.6f %.6f %.6f %.6f %d %d',
    share, held_slots, now + ttl, want, want_slots, fill[1], fill[2], fill[3], fill[4],
    (held_here > 0 or on_line) and 1 or 0, now))
end
-- The fleet's last headers: what this host saw, or what another host saw since it last took.
local headers_ms, headers_out = 0, ''
if headers ~= '' then
  redis.call('HSET', KEYS[1], '~headers', now .. ' ' .. host .. ' ' .. headers)
elseif stored_headers then
  local at, from, json = string.match(stored_headers, '^(%d+) (%S+) (.*)$')
  at = tonumber(at)
  if at and at > seen_ms and from ~= host then
    headers_ms, headers_out = at, json
  end
end
redis.call('PEXPIRE', KEYS[1], keep_ms)

-- Differences under 2 % of the whole wait for the next renewal.
local ask, short = 0, false
if ttl > 0 and (share < target - 0.02 or slots < slot_target) then ask, short = 1, true end
if share < before - 0.02 or (max_slots >= 0 and held_slots < before_slots) then ask = 1 end
-- A host short of its part renews when the next lease lapses (a crashed host's does).
local lapse = 0
if short then
  for _, o in ipairs(others) do
    local exp = tonumber(string.match(redis.call('HGET', KEYS[1], o.name) or '', '^%S+ %S+ (%S+)'))
    if exp and exp > now and (lapse == 0 or exp - now < lapse) then lapse = math.max(exp - now, 1) end
  end
  for _, s in ipairs(silent) do
    if lapse == 0 or s.until_ms - now < lapse then lapse = math.max(s.until_ms - now, 1) end
  end
end
-- (A new epoch is a fault only for a host that held a part when Redis lost it: a fleet's very
-- first renewals are not.)
if #silent > 0 or (now < settle_until and held_here > 0) or redis.call('PTTL', KEYS[4]) > 0 then
  ask = ask + 2
end
local answer = { string.format('%.6f', share), slots, n, string.format('%.6f', target),
  cooldown_ms, cooldown_reason, ask, lapse, string.format('%.6f', had),
  string.format('%.6f %.6f %.6f %.6f', taken[1], taken[2], taken[3], taken[4]),
  headers_ms, headers_out }
if KEYS[5] ~= nil then answer[13] = 0 end
return answer
