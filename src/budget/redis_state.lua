-- retry's budget state operations, run by Redis (or Valkey) as one atomic script: the same
-- read-modify-write the file store does under flock, in one round trip, without WATCH/MULTI/EXEC
-- (which aborts and retries under contention). A port of the Rust reference in
-- crates/backoff/src/{shared_state,throttle,breaker}.rs over the same stored JSON
-- (src/budget/codec.rs), written byte for byte as Rust writes it; a property test
-- (tests/budget/lua.rs) runs random operations through both and requires identical states.
--
-- Lua 5.1 has only doubles: every stored integer stays below 2^53 (times are at most the
-- last millisecond of year 9999; counts are 32-bit), probe ids are kept as decimal strings,
-- and each product that could pass 2^53 is computed in parts (see scale and align).
--
-- KEYS[1]: the state's key. ARGV: 1 operation (begin, cooldown, attempt_end, finish), 2 now
-- (epoch ms), 3 maxTokens and 4 tokenRatio (thousandths), 5 refill interval (ms, or empty),
-- 6 breaker threshold (empty: no breaker), 7 breaker cooldown (ms), 8 probe lease (ms), 9 the
-- run's id (begin) or its probe id (others; empty when not probing), 10 the attempt's outcome
-- (success, failure, neutral) or the run's end (succeeded, gave_up, abandoned), 11 a server's
-- hint (epoch ms, or empty), 12 the idle expiry (ms), 13 the largest state read (bytes).
-- Returns {'ok', the state as it was} (the caller computes the answer from it with the Rust
-- code), {'corrupt', why, the value} (nothing written), or {'large', its length} (nothing
-- read or written).

local MAX_TIME = 253402300799999 -- 9999-12-31T23:59:59.999Z
local MAX_U32 = 4294967295
local MAX_U64 = '18446744073709551615'
local NULL = {}

local function num(n)
  return string.format('%.0f', n)
end

-- Decoding: a strict JSON reader for the state's shape (objects, null, non-negative
-- integers), numbers kept as their digits until their field says what they are.
local function parse(text)
  local pos, len = 1, #text
  local function fail(what)
    error('not JSON: ' .. what .. ' at byte ' .. pos, 0)
  end
  local function ws()
    local _, e = string.find(text, '^[ \t\n\r]*', pos)
    pos = e + 1
  end
  local value
  local function object()
    pos = pos + 1
    local obj = {}
    ws()
    if string.sub(text, pos, pos) == '}' then
      pos = pos + 1
      return obj
    end
    while true do
      ws()
      local key = string.match(text, '^"([^"]*)"', pos)
      if not key then fail('expected a field name') end
      if string.find(key, '[^%w_]') then error('bad state: unknown field', 0) end
      pos = pos + #key + 2
      ws()
      if string.sub(text, pos, pos) ~= ':' then fail("expected ':'") end
      pos = pos + 1
      ws()
      if obj[key] ~= nil then error('bad state: duplicate field `' .. key .. '`', 0) end
      obj[key] = value()
      ws()
      local c = string.sub(text, pos, pos)
      pos = pos + 1
      if c == '}' then return obj end
      if c ~= ',' then fail("expected ',' or '}'") end
    end
  end
  value = function()
    local c = string.sub(text, pos, pos)
    if c == '{' then return object() end
    if string.sub(text, pos, pos + 3) == 'null' then
      pos = pos + 4
      return NULL
    end
    local token = string.match(text, '^[-+.%deE]+', pos)
    if not token then fail('expected a value') end
    pos = pos + #token
    if not string.find(token, '^%d+$') or (#token > 1 and string.sub(token, 1, 1) == '0') then
      error('bad state: ' .. token .. ' is not a non-negative integer', 0)
    end
    return token
  end
  ws()
  if string.sub(text, pos, pos) ~= '{' then error('no format version', 0) end
  local top = object()
  ws()
  if pos <= len then fail('trailing characters') end
  return top
end

local function fields(obj, allowed, where)
  if type(obj) ~= 'table' or obj == NULL then
    error('bad state: ' .. where .. ' is not an object', 0)
  end
  for k in pairs(obj) do
    if not allowed[k] then error('bad state: unknown field `' .. k .. '`', 0) end
  end
end

-- An integer field at most `max` (a number), or nil when absent or null and optional.
local function int(obj, name, max, optional)
  local v = obj[name]
  if v == nil or v == NULL then
    if optional then return nil end
    error('bad state: missing field `' .. name .. '`', 0)
  end
  if type(v) ~= 'string' then error('bad state: `' .. name .. '` is not an integer', 0) end
  if #v > 16 or tonumber(v) > max then
    if max == MAX_TIME then
      error(name .. ' ' .. v .. ' is past 9999-12-31T23:59:59.999Z (' .. num(MAX_TIME) .. ')', 0)
    end
    error('bad state: `' .. name .. '` ' .. v .. ' is out of range', 0)
  end
  return tonumber(v)
end

local function object_field(obj, name, optional)
  local v = obj[name]
  if v == nil or v == NULL then
    if optional then return nil end
    error('bad state: missing field `' .. name .. '`', 0)
  end
  return v
end

-- The state as Rust's codec writes it, read with a few patterns: nearly every stored value. Nil
-- for anything else (spaces, a count to clamp, an older or hand-edited form, a number not in
-- range...), which the strict reader below then reads (or refuses). Returns the state and
-- whether `raw` is exactly what encode writes for it.
local FAST_HEAD = '^{"version":1,"updated_ms":(%d+),"tokens":(.-),"breaker":{"consecutive":(%d+),'
  .. '"open_until_ms":(.-),"probe":(.-)},"not_before_ms":'
local FAST_HINT = FAST_HEAD .. '(%d+),"hint_len_ms":(%d+)}$'
local FAST_PLAIN = FAST_HEAD .. '(.-)}$'

local function canonical(token, max)
  if token == nil or (#token > 1 and string.sub(token, 1, 1) == '0') or #token > 16 then
    return nil
  end
  local n = tonumber(token)
  if n == nil or n > max or not string.find(token, '^%d+$') then return nil end
  return n
end

local function fast(raw)
  local updated, tokens, consecutive, open, probe, nb, hint = string.match(raw, FAST_HINT)
  if not updated then
    updated, tokens, consecutive, open, probe, nb = string.match(raw, FAST_PLAIN)
    if not updated then return nil end
  end
  local s = { updated_ms = canonical(updated, MAX_TIME), breaker = {} }
  if tokens ~= 'null' then
    local m, max, stamp = string.match(tokens, '^{"milli":(%d+),"max_milli":(%d+),"stamp_ms":(%d+)}$')
    m, max, stamp = canonical(m, MAX_U32), canonical(max, MAX_U32), canonical(stamp, MAX_TIME)
    if not (m and max and stamp) or max == 0 or m > max then return nil end
    s.bucket = { milli = m, max_milli = max, stamp_ms = stamp }
  end
  s.breaker.consecutive = canonical(consecutive, MAX_U32)
  if open ~= 'null' then
    s.breaker.open_until_ms = canonical(open, MAX_TIME)
    if not s.breaker.open_until_ms then return nil end
  end
  if probe ~= 'null' then
    local pid, expires = string.match(probe, '^{"id":(%d+),"expires_ms":(%d+)}$')
    expires = canonical(expires, MAX_TIME)
    if not (pid and expires) or #pid > 20 or (#pid == 20 and pid > MAX_U64)
      or (#pid > 1 and string.sub(pid, 1, 1) == '0') then
      return nil
    end
    s.breaker.probe = { id = pid, expires_ms = expires }
  end
  if nb ~= 'null' then
    s.not_before_ms = canonical(nb, MAX_TIME)
    if not s.not_before_ms then return nil end
  end
  if hint then
    s.hint_len_ms = canonical(hint, MAX_TIME)
    if not s.hint_len_ms then return nil end
  end
  if not (s.updated_ms and s.breaker.consecutive) then return nil end
  return s
end

local function decode(raw)
  if string.find(raw, '^[ \t\n\r\f]*$') then
    return { breaker = { consecutive = 0 }, updated_ms = 0 }
  end
  local top = parse(raw)
  if type(top.version) ~= 'string' then error('no format version', 0) end
  if top.version ~= '1' then error('format version ' .. tostring(top.version) .. ', expected 1', 0) end
  fields(top, { version = 1, updated_ms = 1, tokens = 1, breaker = 1, not_before_ms = 1,
    hint_len_ms = 1 }, 'the state')
  local s = { updated_ms = int(top, 'updated_ms', MAX_TIME) }
  local t = object_field(top, 'tokens', true)
  if t then
    fields(t, { milli = 1, max_milli = 1, stamp_ms = 1 }, 'tokens')
    local max = math.max(int(t, 'max_milli', MAX_U32), 1)
    s.bucket = { milli = math.min(int(t, 'milli', MAX_U32), max), max_milli = max,
      stamp_ms = int(t, 'stamp_ms', MAX_TIME) }
  end
  local b = object_field(top, 'breaker')
  fields(b, { consecutive = 1, open_until_ms = 1, probe = 1 }, 'breaker')
  s.breaker = { consecutive = int(b, 'consecutive', MAX_U32),
    open_until_ms = int(b, 'open_until_ms', MAX_TIME, true) }
  local p = object_field(b, 'probe', true)
  if p then
    fields(p, { id = 1, expires_ms = 1 }, 'probe')
    local id = p.id
    if type(id) ~= 'string' or (#id == 20 and id > MAX_U64) or #id > 20 then
      error('bad state: probe id is not a 64-bit integer', 0)
    end
    s.breaker.probe = { id = id, expires_ms = int(p, 'expires_ms', MAX_TIME) }
  end
  s.not_before_ms = int(top, 'not_before_ms', MAX_TIME, true)
  s.hint_len_ms = int(top, 'hint_len_ms', MAX_TIME, true)
  return s
end

local function opt(n)
  if n == nil then return 'null' end
  return num(n)
end

-- The state as Rust's codec writes it (field order, no spaces, null for absent values,
-- hint_len_ms only when present).
local function encode(s)
  local tokens = 'null'
  if s.bucket then
    tokens = '{"milli":' .. num(s.bucket.milli) .. ',"max_milli":' .. num(s.bucket.max_milli)
      .. ',"stamp_ms":' .. num(s.bucket.stamp_ms) .. '}'
  end
  local b = s.breaker
  local probe = 'null'
  if b.probe then
    probe = '{"id":' .. b.probe.id .. ',"expires_ms":' .. num(b.probe.expires_ms) .. '}'
  end
  local hint = ''
  if s.hint_len_ms then hint = ',"hint_len_ms":' .. num(s.hint_len_ms) end
  return '{"version":1,"updated_ms":' .. num(s.updated_ms) .. ',"tokens":' .. tokens
    .. ',"breaker":{"consecutive":' .. num(b.consecutive) .. ',"open_until_ms":'
    .. opt(b.open_until_ms) .. ',"probe":' .. probe .. '},"not_before_ms":'
    .. opt(s.not_before_ms) .. hint .. '}'
end

-- The policy of the run performing the operation.
local function arg_num(i)
  if ARGV[i] == nil or ARGV[i] == '' then return nil end
  return tonumber(ARGV[i])
end

local op = ARGV[1]
local now = math.min(arg_num(2), MAX_TIME)
local T = { max = arg_num(3), ratio = arg_num(4), every = arg_num(5) }
local BP = nil
if arg_num(6) then
  BP = { threshold = arg_num(6), cooldown = arg_num(7), lease = arg_num(8) }
end
local id = ARGV[9]
if id == '' then id = nil end

local function later(ms)
  return math.min(now + ms, MAX_TIME)
end

-- The token bucket (throttle.rs).

-- floor(milli * new_max / old_max) for milli <= old_max < 2^32 and new_max <= 10^9, exactly:
-- new_max = qn old_max + rn, milli = mh 2^16 + ml, mh rn = qx old_max + rx; every product
-- and sum below stays under 2^50.
local function scale(milli, new_max, old_max)
  local qn = math.floor(new_max / old_max)
  local rn = new_max - qn * old_max
  local mh = math.floor(milli / 65536)
  local ml = milli - mh * 65536
  local x = mh * rn
  local qx = math.floor(x / old_max)
  local rx = x - qx * old_max
  return milli * qn + qx * 65536 + math.floor((rx * 65536 + ml * rn) / old_max)
end

local function align(bucket)
  if bucket.max_milli ~= T.max then
    bucket.milli = math.min(scale(bucket.milli, T.max, bucket.max_milli), T.max)
    bucket.max_milli = T.max
  end
  if not T.every or now < bucket.stamp_ms or bucket.milli >= bucket.max_milli then
    bucket.stamp_ms = now
    return
  end
  local elapsed = now - bucket.stamp_ms
  local room = bucket.max_milli - bucket.milli
  -- gained = floor(elapsed * 1000 / every): elapsed = q1 every + r1, and r1 * 1000 < 2^52
  -- since every < 2^42; a q1 this large gains more than any room (2^32 thousandths).
  local q1 = math.floor(elapsed / T.every)
  local gained = room
  if q1 < 4294968 then
    gained = q1 * 1000 + math.floor((elapsed - q1 * T.every) * 1000 / T.every)
  end
  if gained >= room then
    bucket.milli = bucket.max_milli
    bucket.stamp_ms = now
  else
    -- stamp += floor(gained * every / 1000), with every = 1000 qe + re.
    local qe = math.floor(T.every / 1000)
    local re = T.every - qe * 1000
    bucket.milli = bucket.milli + gained
    bucket.stamp_ms = bucket.stamp_ms + gained * qe + math.floor(gained * re / 1000)
  end
end

-- The circuit breaker (breaker.rs).

local function clamp(b)
  if b.open_until_ms then b.open_until_ms = math.min(b.open_until_ms, later(BP.cooldown)) end
  if b.probe then b.probe.expires_ms = math.min(b.probe.expires_ms, later(BP.lease)) end
end

local function admit(b)
  clamp(b)
  if not b.open_until_ms or now < b.open_until_ms then return end
  local p = b.probe
  if p and p.expires_ms > now and p.id ~= id then return end
  b.probe = { id = id, expires_ms = later(BP.lease) }
end

local function renew(b)
  clamp(b)
  if b.probe and b.probe.id == id and b.open_until_ms then
    b.probe.expires_ms = later(BP.lease)
  end
end

local function finish(b, run_end)
  clamp(b)
  local holds_lease = id ~= nil and b.probe ~= nil and b.probe.id == id
  if run_end == 'succeeded' then
    b.consecutive = 0
    b.open_until_ms = nil
    b.probe = nil
  elseif run_end == 'gave_up' then
    b.consecutive = math.min(b.consecutive + 1, MAX_U32)
    if holds_lease then
      b.probe = nil
      b.open_until_ms = later(BP.cooldown)
    elseif b.open_until_ms == nil and b.consecutive >= BP.threshold then
      b.open_until_ms = later(BP.cooldown)
    end
  elseif holds_lease then
    b.probe = nil
  end
  if b.open_until_ms == nil then b.probe = nil end
end

-- The shared state (shared_state.rs).

local function live_cooldown(s)
  if s.not_before_ms == nil or s.not_before_ms <= now then
    s.not_before_ms = nil
    s.hint_len_ms = nil
  end
end

local function cooldown(s)
  if BP and id then renew(s.breaker) end
  live_cooldown(s)
end

local function attempt_end(s, outcome, hint)
  s.updated_ms = now
  if not s.bucket then s.bucket = { milli = T.max, max_milli = T.max, stamp_ms = now } end
  if outcome == 'success' then
    align(s.bucket)
    s.bucket.milli = math.min(s.bucket.milli + T.ratio, s.bucket.max_milli)
  elseif outcome == 'failure' then
    align(s.bucket)
    s.bucket.milli = math.max(s.bucket.milli - 1000, 0)
  end
  if hint then
    hint = math.min(hint, MAX_TIME)
    if hint > now and (s.not_before_ms == nil or hint > s.not_before_ms) then
      s.not_before_ms = hint
      s.hint_len_ms = hint - now
    end
  end
  cooldown(s)
end

local function expiry(s)
  local horizon = s.not_before_ms or 0
  local b = s.breaker
  if b.open_until_ms and b.open_until_ms > horizon then horizon = b.open_until_ms end
  if b.probe and b.probe.expires_ms > horizon then horizon = b.probe.expires_ms end
  return arg_num(12) + math.max(horizon - now, 0)
end

local key = KEYS[1]
local size = redis.call('STRLEN', key)
if size > arg_num(13) then return { 'large', size } end
local raw = redis.call('GET', key)
if not raw then raw = '' end
local s = fast(raw)
local before = raw
if not s then
  local decoded
  decoded, s = pcall(decode, raw)
  if not decoded then return { 'corrupt', tostring(s), raw } end
  before = encode(s)
end
local touch = false
if op == 'begin' then
  if BP then admit(s.breaker) end
  live_cooldown(s)
  touch = true
elseif op == 'cooldown' then
  cooldown(s)
elseif op == 'attempt_end' then
  attempt_end(s, ARGV[10], arg_num(11))
elseif op == 'finish' then
  if BP then
    finish(s.breaker, ARGV[10])
    touch = true
  end
else
  return redis.error_reply('ERR unknown budget operation')
end
local after = encode(s)
-- begin and finish mark a state they changed with the time (Rust's `touch`).
if touch and after ~= before then
  s.updated_ms = now
  after = encode(s)
end
if after ~= before then
  redis.call('SET', key, after, 'PX', num(expiry(s)))
end
return { 'ok', raw }
