-- Conditional, idempotent batch append to one game's event stream.
-- KEYS[1]  the event stream            KEYS[2]  the game's idempotency hash
-- ARGV[1]  expected version            ARGV[2]  expected head hash
-- ARGV[3]  idempotency key ('' = none) ARGV[4]  receipt stored under that key
-- ARGV[5]  seconds the game's receipts live from now on ('0' = as they are): given when
--          the append ends the game, so receipts expire while the log itself never does
-- KEYS[3]  (only with a mark) a sorted set the append marks the game in
-- KEYS[4]  (only with a mark and a stamp) the hash the mark's stamp is recorded in
-- KEYS[4 or 5..] (only with a mark) keys the append claims: each set to 1 unless set already
-- KEYS[#KEYS-q+1..] the quota windows (see ARGV[12]), after all of the above
-- ARGV[6]  the member the append adds to KEYS[3] ('' = no mark)
-- ARGV[7]  that member's score
-- ARGV[8]  'LT': the member keeps a lower score it has already; '': the score replaces it
-- ARGV[9]  milliseconds a claim lives
-- ARGV[10] the stamp recorded under the member in KEYS[4] ('' = none)
-- ARGV[11] how the news is published: 'PUBLISH' on one server, 'SPUBLISH' (sharded, heard
--          only on the stream's own shard) on a cluster
-- ARGV[12] how many quota windows the append counts in (q): the last q KEYS
-- ARGV[13..12+2q] (each window's amount, its seconds), in the order of those keys
-- ARGV[13+2q..] pairs of (canonical JSON of the event body, its SHA-256), one pair per event
-- The receipt is checked before the version: a request repeating a key whose first request
-- landed meanwhile gets that request's receipt, not a conflict. The quota windows are counted
-- once the version holds, before anything is written, each up to the first that the request
-- exceeds (a fixed window: an INCR, its EXPIRE from the first hit, its TTL), so that a move's
-- rate limit costs no round trip of its own.
-- Returns {'ok', version, claimed..., (hits, ttl)...} (1 for each claim it set, 0 for one it
--   found set; then each window's count and seconds left)
--   | {'limited', window (1-based), hits, ttl}: nothing was written
--   | {'duplicate', receipt} | {'conflict', version, head hash}: a
-- conflict reports where the stream really stands, so that a writer whose cached table is ahead
-- of it or has diverged from it (Redis lost its last writes, or was restored) can tell
local key = ARGV[3]
if key ~= '' then
  local receipt = redis.call('HGET', KEYS[2], key)
  if receipt then
    return {'duplicate', receipt}
  end
end

local version, head = 0, string.rep('0', 64)
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last > 0 then
  version = tonumber(string.match(last[1][1], '^(%d+)-'))
  local fields = last[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'h' then
      head = fields[i + 1]
    end
  end
end
if version ~= tonumber(ARGV[1]) or head ~= ARGV[2] then
  return {'conflict', tostring(version), head}
end

local quotas = tonumber(ARGV[12])
local counted = {}
for i = 1, quotas do
  local window = KEYS[#KEYS - quotas + i]
  local hits = redis.call('INCR', window)
  if hits == 1 then
    redis.call('EXPIRE', window, ARGV[12 + 2 * i])
  end
  local ttl = redis.call('TTL', window)
  if hits > tonumber(ARGV[11 + 2 * i]) then
    return {'limited', i, hits, ttl}
  end
  counted[#counted + 1] = hits
  counted[#counted + 1] = ttl
end

local first = 13 + 2 * quotas
local count = (#ARGV - first + 1) / 2
for i = 0, count - 1 do
  -- Stream ids are '<seq>-0', so a version is also a stream id and reads need no lookup.
  redis.call('XADD', KEYS[1], tostring(version + 1 + i) .. '-0',
    'e', ARGV[first + 2 * i], 'h', ARGV[first + 1 + 2 * i])
end
local reply = {'ok', tostring(version + count)}
if ARGV[6] ~= '' then
  if ARGV[8] == 'LT' then
    redis.call('ZADD', KEYS[3], 'LT', ARGV[7], ARGV[6])
  else
    redis.call('ZADD', KEYS[3], ARGV[7], ARGV[6])
  end
  local claims = 4
  if ARGV[10] ~= '' then
    redis.call('HSET', KEYS[4], ARGV[6], ARGV[10])
    claims = 5
  end
  for i = claims, #KEYS - quotas do
    reply[#reply + 1] = redis.call('SET', KEYS[i], 1, 'NX', 'PX', ARGV[9]) and 1 or 0
  end
end
for i = 1, #counted do
  reply[#reply + 1] = counted[i]
end
if key ~= '' then
  redis.call('HSET', KEYS[2], key, ARGV[4])
end
if tonumber(ARGV[5]) > 0 then
  redis.call('EXPIRE', KEYS[2], ARGV[5])
end
-- Live streams follow the stream's own name as a pub/sub channel (service/stream.py): one
-- reader per web process hears of each append, with its entries, so that it needs no read of
-- the stream: '<first version>' then ':<length>:<stored event><hash>' for each (events/news.py).
local news = {tostring(version + 1)}
for i = 0, count - 1 do
  local stored = ARGV[first + 2 * i]
  news[#news + 1] = ':' .. #stored .. ':' .. stored .. ARGV[first + 1 + 2 * i]
end
redis.call(ARGV[11], KEYS[1], table.concat(news))
return reply
