-- SPDX-License-Identifier: MIT
-- wrk's script for bench/bench_serve.sh: GET requests that rotate over the
-- URL paths of a file, one a line, given after wrk's `--` with the
-- thread count:
--   wrk -t T -c C -d D --latency -s bench/serve_wrk.lua URL -- PATHS_FILE T
-- (Not HEAD: wrk 4.1 then waits for the body that Content-Length names.)
-- Thread k starts k/T of the way into the list, so that the threads do not
-- ask for the same file at the same moment.  At the end one line that the
-- bench reads (latencies in microseconds, as wrk keeps them):
--   RESULT requests duration_us p50_us p99_us non2xx connect read write timeout bytes

local started = 0

function setup(thread)
	thread:set("first", started)
	started = started + 1
end

local paths, at

function init(args)
	paths = {}
	for line in io.lines(args[1]) do
		if line ~= "" then
			paths[#paths + 1] = line
		end
	end
	assert(#paths > 0, "no URL paths in " .. tostring(args[1]))
	at = math.floor(first * #paths / math.max(tonumber(args[2]) or 1, 1))
end

function request()
	at = at % #paths + 1
	return wrk.format("GET", paths[at])
end

function done(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("RESULT %d %d %d %d %d %d %d %d %d %d\n",
		summary.requests, summary.duration, latency:percentile(50),
		latency:percentile(99), e.status, e.connect, e.read, e.write, e.timeout,
		summary.bytes))
end
