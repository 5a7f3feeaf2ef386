-- wrk script of `pnpm bench`: one request source, every response checked, one JSON result line.
-- Usage: wrk -t <n> -c <n> -d <s> -s load.lua <url> -- <spec file>
--
-- The spec file (written by ../wrk.mjs) has one `key=value` per line:
--   method, path, body    the request; `{1}`, `{2}` in path or body are replaced by the fields of
--                         the current pool line (split on spaces) or by a generated token
--   header                `Name: value` (repeatable)
--   source                fixed | pool | cycle | refresh | forged | garbage
--     pool                lines of `file` from line `start`, each sent once: thread t of n takes the
--                         lines t, t+n, …; a thread whose share is used up stops (ran_out) rather
--                         than repeat one
--     cycle               the same, but a thread starts its share again when it is used up
--     refresh             a per-thread queue of `file`'s lines; the `refresh_token` of each
--                         expected response goes to its back (a refresh chain, as a client follows it)
--     forged              `forged_header`.<payload>.`forged_signature`, the payload being
--                         `forged_before` <fresh random jti> `forged_after`, base64url-encoded
--     garbage             a fresh random JWT-shaped string (`eyJ…`) that does not decode
--   expect_status         the only status that counts as a success
--   expect_body           text an expected response body must contain
--   collect_file          write what each expected response carries to `collect_file`.<thread>:
--   collect_field         … a JSON string field of its body, or
--   collect_location      … this query parameter of its Location header
--   collect_tag           and this one of the same Location after it, on the same line (the
--                         request's own `state`, echoed back: responses on 32 connections come in
--                         any order, so nothing else pairs a value with the request that got it)
--   collect_amount        stop each thread after its share of this many collected values
--
-- done() prints `BENCH-RESULT {json}` with wrk's counts, latency percentiles (µs), the
-- per-thread checks summed, the span in which requests were sent (µs) and wrk's own CPU time.
local ffi = require("ffi")
ffi.cdef([[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clock, bench_timespec *out);
]])
local timespec = ffi.new("bench_timespec")
local function now_us()
  ffi.C.clock_gettime(1, timespec) -- CLOCK_MONOTONIC: comparable across threads
  return tonumber(timespec.tv_sec) * 1e6 + tonumber(timespec.tv_nsec) / 1e3
end

local function read_spec(file)
  local spec = { header = {} }
  for line in io.lines(file) do
    local key, value = line:match("^([%w_]+)=(.*)$")
    if key == "header" then
      table.insert(spec.header, value)
    elseif key ~= nil then
      spec[key] = value
    end
  end
  return spec
end

local threads = {}
local thread_count = 0
function setup(thread)
  thread_count = thread_count + 1
  thread:set("thread_index", thread_count - 1)
  table.insert(threads, thread)
end

-- Thread state (each wrk thread has its own Lua state).
local spec, headers, items, next_item, queue
local b64chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
local collect_out
local collect_limit

-- Tells the orchestrator this thread is done (it ends wrk once every thread is): wrk itself
-- would wait out its duration.
local function stop_thread()
  ran_out = true
  stopped_at = now_us()
  local marker = io.open(spec_file .. ".stopped." .. thread_index, "w")
  if marker ~= nil then marker:close() end
  wrk.thread:stop()
end

local function split(line)
  local fields = {}
  local n = 0
  for field in line:gmatch("%S+") do
    n = n + 1
    fields[tostring(n)] = field
  end
  return fields
end

local function base64url(bytes)
  local out = {}
  for i = 1, #bytes, 3 do
    local a, b, c = bytes:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local chunk = 4
    if b == nil then chunk = 2 elseif c == nil then chunk = 3 end
    for j = 1, chunk do
      local index = math.floor(n / 2 ^ (6 * (4 - j))) % 64
      out[#out + 1] = b64chars:sub(index + 1, index + 1)
    end
  end
  return table.concat(out)
end

local function random_b64(length)
  local out = {}
  for i = 1, length do
    local index = math.random(1, 64)
    out[i] = b64chars:sub(index, index)
  end
  return table.concat(out)
end

local function urlencode(text)
  return (text:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
end

function init(args)
  spec_file = args[1]
  spec = read_spec(spec_file)
  math.randomseed(os.time() * 1000 + (thread_index or 0) * 7919)
  headers = {}
  for _, header in ipairs(spec.header) do
    local name, value = header:match("^([^:]+):%s*(.*)$")
    headers[name] = value
  end
  ok, bad_status, bad_body, sent, ran_out, pool_empty, collected = 0, 0, 0, 0, false, 0, 0
  statuses = {}
  first_sent, last_sent, stopped_at = 0, 0, 0
  items = {}
  next_item = 1
  queue = {}
  local source = spec.source or "fixed"
  if source == "pool" or source == "cycle" or source == "refresh" then
    local start = tonumber(spec.start or "0")
    local index = 0
    local threads_total = tonumber(spec.threads or "1")
    for line in io.lines(spec.file) do
      if line ~= "" then
        if index >= start and (source == "refresh" or (index - start) % threads_total == thread_index) then
          table.insert(items, line)
        end
        index = index + 1
      end
    end
    if source == "refresh" then
      -- Each thread takes its share of the chains: every threads_total-th line.
      local mine = {}
      for i = thread_index + 1, #items, threads_total do table.insert(mine, items[i]) end
      queue = mine
      items = {}
    end
  end
  if spec.collect_file ~= nil then
    collect_out = io.open(spec.collect_file .. "." .. thread_index, "w")
    collect_limit = math.ceil(tonumber(spec.collect_amount or "1e12") / tonumber(spec.threads or "1"))
  end
end

local function fill(template, fields)
  if template == nil then return nil end
  return (template:gsub("{(%d)}", fields))
end

local function build(fields)
  return wrk.format(spec.method, fill(spec.path, fields), headers, fill(spec.body, fields))
end

function request()
  local t = now_us()
  if first_sent == 0 then first_sent = t end
  last_sent = t
  sent = sent + 1
  local source = spec.source or "fixed"
  if source == "fixed" then
    return build({})
  elseif source == "pool" or source == "cycle" then
    if next_item > #items then
      if source == "cycle" and #items > 0 then
        next_item = 1
      else
        -- Used up: stop rather than send a token twice (this last request repeats one).
        if not ran_out then stop_thread() end
        sent = sent - 1
        return build(split(items[#items] or "none"))
      end
    end
    local line = items[next_item]
    next_item = next_item + 1
    return build(split(line))
  elseif source == "refresh" then
    local token = table.remove(queue, 1)
    if token == nil then
      pool_empty = pool_empty + 1
      token = "pool-empty"
    end
    return build({ ["1"] = urlencode(token) })
  elseif source == "forged" then
    local payload = spec.forged_before .. random_b64(22) .. spec.forged_after
    return build({ ["1"] = spec.forged_header .. "." .. base64url(payload) .. "." .. spec.forged_signature })
  elseif source == "garbage" then
    return build({ ["1"] = "eyJ" .. random_b64(32) .. "." .. random_b64(240) .. "." .. random_b64(342) })
  end
end

function response(status, response_headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if ran_out then return end
  if status ~= tonumber(spec.expect_status or "200") then
    bad_status = bad_status + 1
    return
  end
  if spec.expect_body ~= nil and (body == nil or not body:find(spec.expect_body, 1, true)) then
    bad_body = bad_body + 1
    return
  end
  if spec.source == "refresh" then
    local token = body:match('"refresh_token"%s*:%s*"([^"]+)"')
    if token == nil then
      bad_body = bad_body + 1
      return
    end
    table.insert(queue, token)
  end
  if collect_out ~= nil then
    local value, tag
    if spec.collect_field ~= nil then
      value = body:match('"' .. spec.collect_field .. '"%s*:%s*"([^"]+)"')
    else
      local location = response_headers["Location"] or response_headers["location"] or ""
      value = location:match("[?&]" .. spec.collect_location .. "=([^&]+)")
      if spec.collect_tag ~= nil then tag = location:match("[?&]" .. spec.collect_tag .. "=([^&]+)") end
    end
    if value == nil or (spec.collect_tag ~= nil and tag == nil) then
      bad_body = bad_body + 1
      return
    end
    collect_out:write(tag == nil and value or (value .. " " .. tag), "\n")
    collect_out:flush()
    collected = collected + 1
    if collected >= collect_limit and not ran_out then stop_thread() end
  end
  ok = ok + 1
end

local function json_number(n) return string.format("%.0f", n) end

function done(summary, latency, requests)
  local totals = { ok = 0, bad_status = 0, bad_body = 0, sent = 0, pool_empty = 0, collected = 0, threads_ran_out = 0 }
  local status_counts = {}
  local first, last = math.huge, 0
  for _, thread in ipairs(threads) do
    for key, _ in pairs(totals) do
      if key ~= "threads_ran_out" then totals[key] = totals[key] + (thread:get(key) or 0) end
    end
    if thread:get("ran_out") then totals.threads_ran_out = totals.threads_ran_out + 1 end
    for code, count in pairs(thread:get("statuses") or {}) do
      status_counts[code] = (status_counts[code] or 0) + count
    end
    local f = thread:get("first_sent")
    if f ~= nil and f > 0 and f < first then first = f end
    local stop = thread:get("stopped_at")
    if stop == nil or stop == 0 then stop = thread:get("last_sent") end
    if stop ~= nil and stop > last then last = stop end
  end
  local stat = io.open("/proc/self/stat")
  local cpu_ticks = -1
  if stat ~= nil then
    local text = stat:read("*a")
    stat:close()
    local after = text:sub(text:find(")", 1, true) + 2)
    local fields = {}
    for field in after:gmatch("%S+") do table.insert(fields, field) end
    cpu_ticks = tonumber(fields[12]) + tonumber(fields[13])
  end
  local parts = {}
  for code, count in pairs(status_counts) do table.insert(parts, '"' .. code .. '":' .. count) end
  local out = {
    '"requests":' .. summary.requests,
    '"duration_us":' .. summary.duration,
    '"span_us":' .. json_number(last > first and last - first or 0),
    '"errors":{"connect":' .. summary.errors.connect .. ',"read":' .. summary.errors.read ..
      ',"write":' .. summary.errors.write .. ',"timeout":' .. summary.errors.timeout .. "}",
    '"latency_us":{"p50":' .. latency:percentile(50) .. ',"p90":' .. latency:percentile(90) ..
      ',"p99":' .. latency:percentile(99) .. ',"max":' .. latency.max .. "}",
    '"statuses":{' .. table.concat(parts, ",") .. "}",
    '"cpu_ticks":' .. cpu_ticks,
  }
  for key, value in pairs(totals) do table.insert(out, '"' .. key .. '":' .. value) end
  io.write("BENCH-RESULT {" .. table.concat(out, ",") .. "}\n")
end
