-- wrk script for the benchmark's 2026-07-28 `tools/call`s, every answer checked. Set by
-- bench/bench.py: BENCH_BODY (the call's JSON-RPC body), BENCH_TOOL, BENCH_TOKEN, BENCH_EXPECT
-- (text every final answer contains), and for the two-round call BENCH_RETRY (the retry's body, with
-- `%s` for the question's key, then the state). Prints one line "BENCH_RESULT {json}" at the end.
--
-- The plain call: each request is the call. The two-round call: round 1 is answered
-- `input_required` with a requestState; the answer to its question and the state go back in a
-- retry, whose text is checked. A connection asks for its next request when it is free: a retry
-- waiting (from any connection of the thread) goes first, else a new round 1. So at most one retry
-- a connection waits, and every call counted is one round 1 and its retry. Latencies are wrk's,
-- per request (per round).
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = os.getenv("BENCH_TOOL")
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")

local retry = os.getenv("BENCH_RETRY")
local expect = os.getenv("BENCH_EXPECT")
local threads = {}
local waiting, first, last = {}, 1, 0

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0 -- globals: read by done() through thread:get
  good = 0
  asked = 0
  sample = ""
end

local call -- the call's request, formatted once (wrk also asks its main state, where `init` never runs)

function request()
  if first <= last then
    local body = waiting[first]
    waiting[first] = nil
    first = first + 1
    return wrk.format(nil, nil, nil, body)
  end
  if call == nil then call = wrk.format() end
  return call
end

local function refuse(status, body)
  bad = bad + 1
  if sample == "" then -- kept JSON-safe for done()
    sample = string.gsub(status .. " " .. string.sub(body, 1, 200), '[%c"\\]', " ")
  end
end

function response(status, headers, body)
  if status ~= 200 then return refuse(status, body) end
  if retry and string.find(body, '"input_required"', 1, true) then
    local key = string.match(body, '"inputRequests"%s*:%s*{%s*"([^"\\]+)"')
    local state = string.match(body, '"requestState"%s*:%s*"([^"\\]+)"')
    if not key or not state then return refuse(status, body) end
    asked = asked + 1
    last = last + 1
    waiting[last] = string.format(retry, key, state)
  elseif string.find(body, expect, 1, true) then
    good = good + 1
  else
    refuse(status, body)
  end
end

function done(summary, latency, requests)
  local bad_total, good_total, asked_total, samples = 0, 0, 0, {}
  for _, thread in ipairs(threads) do
    bad_total = bad_total + thread:get("bad")
    good_total = good_total + thread:get("good")
    asked_total = asked_total + thread:get("asked")
    local s = thread:get("sample")
    if s ~= "" then table.insert(samples, '"' .. s .. '"') end
  end
  local e = summary.errors
  local points = {}
  for _, p in ipairs({50, 75, 90, 95, 99, 99.9}) do
    table.insert(points, string.format('"%s": %.1f', tostring(p), latency:percentile(p)))
  end
  io.write(string.format(
    'BENCH_RESULT {"requests": %d, "duration_us": %d, "calls": %d, "asked": %d, "bad": %d, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"latency_us": {%s}, "latency_max_us": %.1f, "latency_mean_us": %.1f, "bad_samples": [%s]}\n',
    summary.requests, summary.duration, good_total, asked_total, bad_total,
    e.connect, e.read, e.write, e.status, e.timeout,
    table.concat(points, ", "), latency.max, latency.mean, table.concat(samples, ", ")))
end
