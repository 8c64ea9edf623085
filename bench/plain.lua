-- wrk script for the plain call: POST one 2026-07-28 tools/call, check every response.
-- Set by bench/bench.py: BENCH_BODY (JSON-RPC body), BENCH_TOKEN, BENCH_TOOL, BENCH_EXPECT
-- (text every good response contains). Prints one line "BENCH_RESULT {json}" at the end.
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = os.getenv("BENCH_TOOL")
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")

local expect = os.getenv("BENCH_EXPECT")
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0 -- global: read by done() through thread:get
  good = 0
end

function response(status, headers, body)
  if status == 200 and string.find(body, expect, 1, true) then
    good = good + 1
  else
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local bad_total, good_total = 0, 0
  for _, thread in ipairs(threads) do
    bad_total = bad_total + thread:get("bad")
    good_total = good_total + thread:get("good")
  end
  local e = summary.errors
  local points = {}
  for _, p in ipairs({50, 75, 90, 95, 99, 99.9}) do
    table.insert(points, string.format('"%s": %.1f', tostring(p), latency:percentile(p)))
  end
  io.write(string.format(
    'BENCH_RESULT {"requests": %d, "duration_us": %d, "good": %d, "bad": %d, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"latency_us": {%s}, "latency_max_us": %.1f, "latency_mean_us": %.1f}\n',
    summary.requests, summary.duration, good_total, bad_total,
    e.connect, e.read, e.write, e.status, e.timeout,
    table.concat(points, ", "), latency.max, latency.mean))
end
