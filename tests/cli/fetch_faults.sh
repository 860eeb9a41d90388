#!/bin/bash
# Fault tests of the debuginfod client (lib/fetch, lib/cache) through
# `dsostore fetch`, against dsserver, the fault-injecting test server.
#
# Each case sets faults on one or two servers, runs one fetch with a fresh
# cache and checks: the exit status and the error text, how many requests
# each server saw (/control/stats, counted on arrival, so race-free), how
# long it took (bounded by DEBUGINFOD_TIMEOUT=2, never by a hang), and what
# the cache directory holds afterwards: the served file byte for byte on
# success, an empty miss file only when every server said 404, and never a
# partial file, an unverified file or a temporary "name.XXXXXX".  Last,
# SIGINT and SIGTERM sent to fetch, prefetch, report and annotate while a
# download is stalled mid-body: exit 128 + the signal, no temporary file,
# the progress line ended.
#
# Fixtures are compiled here; build IDs come from readelf, the expected
# bytes are the files the server serves.  Only 127.0.0.1 is used.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc readelf curl cmp awk
tl_need_dsserver

tl_tmpdir dsfaults
T=$tmp
# Small limits keep every hang short (see tl_client_env).
tl_client_env 2
# Time allowed on top of a timeout: process start-up under sanitizers,
# backoff, a loaded 2-core machine.
SLACK_MS=3000


# ------------------------------------------------------------- fixtures

S=$T/srv
mkdir -p "$S" "$T/local"
# a: 96 KiB of padding, so that stall/truncate/reset at 4096 bytes break
# the body in the middle, and gzip has something to squeeze.
cat >"$S/a.c" <<'EOF'
#include <stdio.h>
static const char pad[96 * 1024] = {1};
int main(int argc, char **argv) { return puts(argv[0]) + pad[argc]; }
EOF
cat >"$S/b.c" <<'EOF'
#include <stdio.h>
int main(int argc, char **argv) { (void)argv; return printf("%d\n", argc) < 0; }
EOF
: >"$S/empty"
gcc -g -O0 -o "$S/a" "$S/a.c" && gcc -g -O0 -o "$S/b" "$S/b.c" ||
	{ echo "SKIP: gcc cannot link" >&2; exit 77; }
rm -f "$S/a.c" "$S/b.c"
# A real ELF with a's build ID outside the served tree: the target of a
# file:// redirect, which must be refused even though it would verify.
cp "$S/a" "$T/local/a.copy"

build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3 }'; }
A=$(build_id "$S/a")
B=$(build_id "$S/b")
if [ -z "$A" ] || [ -z "$B" ] || [ "$A" = "$B" ]; then
	echo "FAIL: build IDs '$A' '$B'" >&2
	exit 1
fi
SIZE_A=$(stat -c %s "$S/a")
SIZE_B=$(stat -c %s "$S/b")
# Build IDs no server has.
unknown() { printf '%040x' $((0xdead0000 + $1)); }

# --------------------------------------------------------------- servers

# start_server NAME [dsserver options...]: sets PORT; the server's log is
# $T/NAME.log.
start_server()
{
	tl_start_dsserver PORT "$1" --max-runtime 400 "${@:2}" || exit 1
}

start_server s1 "$S"
P1=$PORT
U1=http://127.0.0.1:$P1
start_server s2 "$S"
P2=$PORT
U2=http://127.0.0.1:$P2
start_server hole --blackhole
HOLE=http://127.0.0.1:$PORT
# A port nobody listens on: a server's, once it has stopped.
start_server dead "$S"
DEAD=http://127.0.0.1:$PORT
kill -TERM "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null
unset 'pids[-1]'

ctl() # port endpoint [curl -G options...]: prints the answer's body
{
	local port=$1 ep=$2
	shift 2
	curl -q -sS --noproxy '*' -G "$@" "http://127.0.0.1:$port/control/$ep"
}
fault() # port spec
{
	local got
	got=$(ctl "$1" fault --data-urlencode "spec=$2")
	[ "$got" = ok ] || fail "fault '$2' on port $1: $got"
}
requests() # port build-id [artifact]: requests the server received for it
{
	ctl "$1" stats --data-urlencode "url=/buildid/$2/${3:-debuginfo}"
}
# The server's log line for a build ID's debuginfo (after /control/idle:
# a line is written when the server sees the request end).
log_lines() # name port build-id
{
	ctl "$2" idle -d timeout_ms=5000 >/dev/null
	grep " /buildid/$3/debuginfo " "$T/$1.log"
}

# ----------------------------------------------------------------- cases

CACHE=
# case_begin NAME: faults and counters cleared, a fresh cache, s1 the only
# server, no size limit, no headers file.
case_begin()
{
	tl_case "$1"
	MS=0
	# One curl for all six: each process start counts on a loaded machine.
	curl -q -sS --noproxy '*' -o /dev/null -o /dev/null -o /dev/null -o /dev/null \
		-o /dev/null -o /dev/null "$U1/control/idle?timeout_ms=5000" "$U1/control/reset" \
		"$U1/control/reset-stats" "$U2/control/idle?timeout_ms=5000" "$U2/control/reset" \
		"$U2/control/reset-stats" || fail "cannot reset the servers"
	: >"$T/s1.log"
	: >"$T/s2.log"
	CACHE=$T/cache/$(echo "$CASE" | tr -c 'a-zA-Z0-9\n' _)
	export DEBUGINFOD_CACHE_PATH=$CACHE DEBUGINFOD_URLS=$U1
	unset DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME DEBUGINFOD_HEADERS_FILE
}
case_end()
{
	tl_case_end "($MS ms)" || head -n 40 "$T/err" | sed 's/^/    | /' >&2
}

RC=0
MS=0
# fetch ARGS...: `dsostore fetch -v ARGS` (VERBOSE= to drop the -v),
# stdout in $T/out, stderr in $T/err, exit status in RC, wall time in MS.
fetch()
{
	local t0 t1
	t0=$(date +%s%N)
	"$DSOSTORE" fetch ${VERBOSE--v} "$@" >"$T/out" 2>"$T/err"
	RC=$?
	t1=$(date +%s%N)
	MS=$(((t1 - t0) / 1000000))
	if grep -q -E 'Sanitizer|runtime error:' "$T/err"; then
		fail "sanitizer report"
	fi
}

expect_rc() { [ "$RC" = "$1" ] || fail "exit status $RC, expected $1"; }
# The one-line error for a build ID: "dsostore: <hex>: <reason>".
expect_error() # build-id reason
{
	grep -q -x -F "dsostore: $1: $2" "$T/err" ||
		fail "no error line 'dsostore: $1: $2'"
	grep -q "^$1 " "$T/out" && fail "$1 printed as a success"
}
expect_requests() # port build-id count [artifact]
{
	local n
	n=$(requests "$1" "$2" "${4:-}")
	[ "$n" = "$3" ] || fail "$3 request(s) expected at port $1, got '$n'"
}
expect_ms_below() # ms what
{
	[ "$MS" -lt "$1" ] || fail "$2: took $MS ms, expected < $1 ms"
}
expect_ms_at_least() # ms what
{
	[ "$MS" -ge "$1" ] || fail "$2: took $MS ms, expected >= $1 ms"
}
# No temporary file (<name>.XXXXXX) anywhere in the cache.
expect_no_tmp()
{
	local left
	left=$(find "$CACHE" -mindepth 2 -regex '.*\.[a-z0-9][a-z0-9][a-z0-9][a-z0-9][a-z0-9][a-z0-9]$' 2>/dev/null)
	[ -z "$left" ] || fail "temporary files left: $left"
}
# Nothing at all cached for the build ID: no file, no miss.
expect_nothing() # build-id
{
	expect_no_tmp
	[ -e "$CACHE/$1/debuginfo" ] &&
		fail "cache has $1/debuginfo ($(stat -c %s "$CACHE/$1/debuginfo") bytes), expected none"
	return 0
}
# The miss entry: an empty file at the entry's name.
expect_miss() # build-id
{
	expect_no_tmp
	[ -f "$CACHE/$1/debuginfo" ] && [ ! -s "$CACHE/$1/debuginfo" ] ||
		fail "no empty miss file $1/debuginfo"
}
# Success: printed, cached, and byte for byte the file served.
expect_cached() # build-id file
{
	expect_no_tmp
	grep -q -x -F "$1 $CACHE/$1/debuginfo" "$T/out" || fail "no line '$1 $CACHE/$1/debuginfo'"
	cmp -s "$2" "$CACHE/$1/debuginfo" || fail "cached $1/debuginfo differs from $2"
}

# ---- transient server errors: retried, then an error, never a miss
for code in 500 502 504; do
	case_begin "status $code: retried, EIO, no miss"
	fault $P1 "$A:status=$code"
	fetch "$A"
	expect_rc 1
	expect_error "$A" "Input/output error"
	expect_requests $P1 "$A" 3 # 1 + DEBUGINFOD_RETRY_LIMIT
	expect_ms_at_least 300 "two retries with backoff (100 + 200 ms)"
	expect_nothing "$A"
	case_end
done

case_begin "status 502 once: succeeds on the retry"
fault $P1 "$A:status=502,times=1"
fetch "$A"
expect_rc 0
expect_cached "$A" "$S/a"
expect_requests $P1 "$A" 2
case_end

case_begin "404: an answer, not retried, cached as a miss"
X=$(unknown 1)
fetch "$X"
expect_rc 1
expect_error "$X" "not found"
expect_requests $P1 "$X" 1
expect_miss "$X"
# The miss is honoured: no second request.
fetch "$X"
expect_rc 1
expect_error "$X" "not found"
expect_requests $P1 "$X" 1
case_end

case_begin "503: the server's 'invalid request', not retried"
fault $P1 "$A:status=503"
fetch "$A"
expect_rc 1
expect_error "$A" "Protocol error"
expect_requests $P1 "$A" 1
expect_nothing "$A"
case_end

case_begin "404 from one server, 500 from the other: EIO, no miss"
export DEBUGINFOD_URLS="$U1 $U2"
fault $P1 "$A:status=404"
fault $P2 "$A:status=500"
fetch "$A"
expect_rc 1
expect_error "$A" "Input/output error"
expect_requests $P1 "$A" 1
expect_requests $P2 "$A" 3
expect_nothing "$A"
case_end

case_begin "404 from one server, connection refused from the other: no miss"
export DEBUGINFOD_URLS="$U1 $DEAD"
X=$(unknown 3)
fetch "$X"
expect_rc 1
expect_error "$X" "Connection refused"
expect_requests $P1 "$X" 1
expect_nothing "$X"
case_end

case_begin "404 from one server, the other hangs: timed out, no miss"
export DEBUGINFOD_URLS="$U1 $U2"
X=$(unknown 4)
fault $P2 "*:hang"
fetch "$X"
expect_rc 1
expect_error "$X" "Connection timed out"
expect_ms_below $((TIMEOUT * 1000 + SLACK_MS)) "hang"
expect_nothing "$X"
case_end

case_begin "200 with an empty body: rejected, not mistaken for a miss"
fault $P1 "$A:wrongfile=$S/empty"
fetch "$A"
expect_rc 1
expect_error "$A" "contents do not match"
expect_nothing "$A"
case_end

# ---- a body cut short: no partial file, retried as transient
for kind in truncate reset; do
	case_begin "$kind mid-body: error, no partial file"
	fault $P1 "$A:$kind=4096"
	fetch "$A"
	expect_rc 1
	expect_error "$A" "Connection reset by peer"
	expect_requests $P1 "$A" 3
	expect_nothing "$A"
	case_end

	case_begin "$kind mid-body once: succeeds on the retry"
	fault $P1 "$A:$kind=4096,times=1"
	fetch "$A"
	expect_rc 0
	expect_cached "$A" "$S/a"
	expect_requests $P1 "$A" 2
	case_end
done

case_begin "truncated section: not verifiable, so never kept partial"
fault $P1 "$A:truncate=4096,artifact=section"
fetch --section .rodata "$A"
expect_rc 1
expect_error "$A" "Connection reset by peer"
expect_requests $P1 "$A" 3 section/.rodata
[ -e "$CACHE/$A/section-.rodata" ] && fail "a truncated section-.rodata was cached"
expect_no_tmp
case_end

# ---- servers that never answer cost the timeout, once
case_begin "hang: fails after about DEBUGINFOD_TIMEOUT"
fault $P1 "*:hang"
fetch "$A"
expect_rc 1
expect_error "$A" "Connection timed out"
expect_ms_at_least $((TIMEOUT * 1000 - 300)) "hang"
expect_ms_below $((TIMEOUT * 1000 + SLACK_MS)) "hang"
expect_requests $P1 "$A" 1
expect_nothing "$A"
case_end

# 150, more than two rounds of the fetcher's concurrency (at most 64 in
# flight): were the server not marked down at the first timeout, the
# queued requests would wait for timeouts of their own (>= 3 rounds, 6 s)
# and all 150 would reach the server.
N=150
case_begin "hang, $N build IDs: one timeout in all, not one each"
fault $P1 "*:hang"
ids=()
for i in $(seq $N); do ids+=("$(unknown $((1000 + i)))"); done
fetch "${ids[@]}"
expect_rc 1
# What proves one timeout in all is the server's count and the one
# warning below; the time is a hang guard, wide enough for a sanitizer
# build on a loaded machine.
expect_ms_below $((3 * TIMEOUT * 1000 + SLACK_MS)) "$N build IDs on a hanging server"
n=$(ctl $P1 stats --data-urlencode "prefix=/buildid/")
[ "$n" -lt $N ] || fail "$n requests reached the hanging server: not marked down"
for x in "${ids[@]}"; do
	expect_error "$x" "Connection timed out"
	expect_nothing "$x"
done
# The server is marked down once, so said once (commit 2ad9520 warned for
# every transfer that timed out in the same round: up to 16 lines here).
n=$(grep -c -F "$U1: Connection timed out; not asked again" "$T/err")
[ "$n" = 1 ] || fail "'$U1 ... not asked again' logged $n times, expected once"
case_end

# A 30 s timeout: a client that waited for it instead of taking the
# refusal would take 30 s; anything well under says it did not, however
# loaded the machine.
case_begin "dead port: connection refused, fast"
export DEBUGINFOD_URLS=$DEAD DEBUGINFOD_TIMEOUT=30
fetch "$A"
expect_rc 1
expect_error "$A" "Connection refused"
expect_ms_below 15000 "connection refused"
expect_nothing "$A"
export DEBUGINFOD_TIMEOUT=$TIMEOUT
case_end

case_begin "blackhole: connect never completes, fails within the connect timeout"
export DEBUGINFOD_URLS=$HOLE
fetch "$A"
expect_rc 1
expect_error "$A" "Connection timed out"
expect_ms_below $((TIMEOUT * 1000 + SLACK_MS)) "blackhole"
expect_nothing "$A"
case_end

# ---- two servers
case_begin "first wins: slow server's transfer dropped"
export DEBUGINFOD_URLS="$U1 $U2"
# s1 answers after 20 s: a fetch that waited for it would take that long.
fault $P1 "$A:latency=20000"
fetch "$A"
expect_rc 0
expect_cached "$A" "$S/a"
expect_ms_below 10000 "first-wins with a 20000 ms server"
expect_requests $P1 "$A" 1
expect_requests $P2 "$A" 1
# s1 saw its client leave before it answered.
log_lines s1 $P1 "$A" | grep -q ' aborted$' || fail "s1's request not cancelled: $(cat "$T/s1.log")"
case_end

case_begin "fall back on stall: the winner stalls mid-body, the other server serves"
export DEBUGINFOD_URLS="$U1 $U2"
fault $P1 "$A:stall=4096"
fault $P2 "$A:latency=300"
fetch "$A"
expect_rc 0
expect_cached "$A" "$S/a"
expect_ms_at_least $((TIMEOUT * 1000 - 300)) "stall"
expect_ms_below $((TIMEOUT * 1000 + SLACK_MS)) "stall"
expect_requests $P1 "$A" 1
log_lines s1 $P1 "$A" | grep -q 'stall=4096 aborted$' || fail "s1 did not stall: $(cat "$T/s1.log")"
case_end

case_begin "one server 404, the other 200: success"
export DEBUGINFOD_URLS="$U1 $U2"
fault $P1 "$A:status=404"
fetch "$A"
expect_rc 0
expect_cached "$A" "$S/a"
case_end

# ---- lies: verified, rejected, never cached
case_begin "wrong build ID: rejected, server named, nothing cached"
fault $P1 "$A:wrongfile=$B"
fetch "$A"
expect_rc 1
expect_error "$A" "contents do not match"
grep -F "$U1" "$T/err" | grep -q -F "$B" || fail "-v log does not name $U1 and the build ID it sent"
expect_nothing "$A"
case_end

case_begin "wrong build ID for an executable: rejected"
fault $P1 "$A:wrongfile=$B"
fetch --executable "$A"
expect_rc 1
expect_error "$A" "contents do not match"
[ -e "$CACHE/$A/executable" ] && fail "the wrong executable was cached"
expect_no_tmp
case_end

case_begin "status=200 with a non-ELF body: rejected"
fault $P1 "$A:status=200"
fetch "$A"
expect_rc 1
expect_error "$A" "contents do not match"
grep -q -F "$U1" "$T/err" || fail "-v log does not name $U1"
expect_nothing "$A"
case_end

for lie in "wrongfile=$B" "status=200"; do
	case_begin "${lie%%=*} from one server, the other good: success"
	export DEBUGINFOD_URLS="$U1 $U2"
	fault $P1 "$A:$lie"
	fetch "$A"
	expect_rc 0
	expect_cached "$A" "$S/a"
	case_end
done

# ---- redirects
case_begin "redirect to another server: followed"
fault $P1 "*:redirect=http://127.0.0.1:$P2%p"
fetch "$A"
expect_rc 0
expect_cached "$A" "$S/a"
expect_requests $P2 "$A" 1
case_end

case_begin "wrong file behind a redirect: rejected, the sender named"
fault $P1 "*:redirect=http://127.0.0.1:$P2%p"
fault $P2 "$A:wrongfile=$B"
fetch "$A"
expect_rc 1
expect_error "$A" "contents do not match"
expect_nothing "$A"
# The file came from $U2, where $U1 redirected: the warning must say so
# (commit 2ad9520 named only $U1).
grep -F "sent a file with build ID $B" "$T/err" | grep -q -F "$U2" ||
	fail "the rejection does not name $U2, the server that sent the file"
case_end

for target in /etc/passwd "$T/local/a.copy"; do
	case_begin "redirect to file://$target: refused"
	fault $P1 "*:redirect=file://$target"
	fetch "$A"
	expect_rc 1
	expect_error "$A" "Protocol error"
	expect_nothing "$A"
	case_end
done

case_begin "redirect loop: an error, bounded"
fault $P1 "*:redirect=http://127.0.0.1:$P1%p"
fetch "$A"
expect_rc 1
expect_error "$A" "Protocol error"
n=$(requests $P1 "$A")
[ "$n" -ge 2 ] && [ "$n" -le 12 ] || fail "$n requests in the loop, expected a few"
expect_nothing "$A"
case_end

# ---- size limit
case_begin "MAXSIZE: the server honours X-DEBUGINFOD-MAXSIZE (406)"
export DEBUGINFOD_MAXSIZE=1000
fetch "$A"
expect_rc 1
expect_error "$A" "File too large"
expect_requests $P1 "$A" 1
ctl $P1 stats | grep -q -x 'status 406 1' || fail "s1 did not answer 406: $(ctl $P1 stats)"
expect_nothing "$A"
case_end

case_begin "MAXSIZE equal to the size: allowed"
export DEBUGINFOD_MAXSIZE=$SIZE_A
fetch "$A"
expect_rc 0
expect_cached "$A" "$S/a"
case_end

case_begin "MAXSIZE with gzip: the client limits what it writes"
export DEBUGINFOD_MAXSIZE=$((SIZE_A - 1))
fault $P1 "$A:gzip"
fetch "$A"
expect_rc 1
expect_error "$A" "File too large"
log_lines s1 $P1 "$A" | grep -q ' 200 [0-9]* gzip ' || fail "s1 did not send gzip: $(cat "$T/s1.log")"
expect_nothing "$A"
case_end

case_begin "MAXSIZE with a bigger wrong file: too large, not cached"
export DEBUGINFOD_MAXSIZE=$(((SIZE_A + SIZE_B) / 2))
fault $P1 "$B:wrongfile=$A"
fetch "$B"
expect_rc 1
expect_error "$B" "File too large"
expect_nothing "$B"
case_end

# ---- DEBUGINFOD_MAXTIME: a whole download, however steady
case_begin "MAXTIME: a slow but steady download stops at the limit"
# ~20 s for a at 5000 B/s, above the low-speed limit of a 30 s timeout
# (100 KiB in 30 s): only MAXTIME stops it, and well before.
export DEBUGINFOD_MAXTIME=1 DEBUGINFOD_TIMEOUT=30
fault $P1 "$A:bandwidth=5000"
fetch "$A"
expect_rc 1
expect_error "$A" "Connection timed out"
expect_ms_below 10000 "MAXTIME=1"
expect_nothing "$A"
export DEBUGINFOD_TIMEOUT=$TIMEOUT
unset DEBUGINFOD_MAXTIME
case_end

# ---- compression
case_begin "gzip: decompressed, byte-identical"
fault $P1 "$A:gzip"
fetch "$A"
expect_rc 0
expect_cached "$A" "$S/a"
sent=$(log_lines s1 $P1 "$A" | awk '$6 == "gzip" { print $5 }')
[ -n "$sent" ] && [ "$sent" -lt "$SIZE_A" ] || fail "s1 sent '$sent' gzip bytes for $SIZE_A"
case_end

# ---- DEBUGINFOD_HEADERS_FILE.  dsserver does not show request headers, so
# a few lines of python stand in for a server here: it records the headers
# and answers 404.
case_begin "DEBUGINFOD_HEADERS_FILE: the header reaches the server"
if command -v python3 >/dev/null; then
	python3 - "$T/hdr.port" "$T/hdr.got" <<'EOF' &
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[2], "a") as f:
            f.write(str(self.headers))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
s.timeout = 60
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % s.server_port)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.handle_request()
EOF
	pids+=($!)
	for _ in $(seq 100); do
		[ -s "$T/hdr.port" ] && break
		sleep 0.05
	done
	printf 'X-Dsostore-Test: fault-%s\n\n' $$ >"$T/headers"
	export DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$T/hdr.port") DEBUGINFOD_HEADERS_FILE=$T/headers
	X=$(unknown 2)
	fetch "$X"
	expect_rc 1
	expect_error "$X" "not found"
	grep -q -i -x -F "X-Dsostore-Test: fault-$$" <(tr -d '\r' <"$T/hdr.got" 2>/dev/null) ||
		fail "header not received: $(cat "$T/hdr.got" 2>/dev/null)"
	case_end
else
	echo "skip $CASE (no python3 for a header-recording server)"
fi

# ---- the progress bar
case_begin "--progress: [N/N] on stderr, exit 0"
VERBOSE= fetch --progress "$A" "$B"
expect_rc 0
grep -q -F '[2/2]' "$T/err" || fail "no [2/2] on stderr"
expect_cached "$A" "$S/a"
expect_cached "$B" "$S/b"
case_end

case_begin "--no-progress: no bar, whatever DEBUGINFOD_PROGRESS says"
DEBUGINFOD_PROGRESS=1 VERBOSE= fetch --no-progress "$A"
expect_rc 0
grep -q -F '[1/1]' "$T/err" && fail "a progress bar with --no-progress"
expect_cached "$A" "$S/a"
case_end

# ---- SIGINT, SIGTERM: the download in flight is dropped, its temporary
# file removed, the progress line ended, and the exit status a shell gives
# a command the signal ended (128 + 2, 128 + 15).  The server stalls after
# 70000 bytes (past the 64 KiB a download holds in memory, transfer.h), so
# the temporary file is there and partial until the signal;
# the timeout is long so that only the signal ends it.
# await_temporary: until the temporary file holding the first bytes of
# $A is there, the download in flight (a minute at most: a sanitizer
# build on a loaded machine starts slowly).
await_temporary()
{
	for _ in $(seq 1200); do
		compgen -G "$CACHE/$A/debuginfo.??????" >/dev/null && return
		sleep 0.05
	done
	fail "no temporary file appeared"
}

for sig in INT TERM; do
	case_begin "SIG$sig during a stalled download: exit $((128 + $(kill -l $sig))), no temporary file"
	fault $P1 "$A:stall=70000"
	# (env: a background job of a shell without job control starts with
	# SIGINT ignored, and keeps it so.)
	DEBUGINFOD_TIMEOUT=120 env --default-signal=INT "$DSOSTORE" fetch --progress "$A" >"$T/out" 2>"$T/err" &
	fpid=$!
	await_temporary # the download in flight
	kill -$sig $fpid
	t0=$(date +%s%N)
	wait $fpid
	RC=$?
	MS=$((($(date +%s%N) - t0) / 1000000))
	expect_rc $((128 + $(kill -l $sig)))
	expect_ms_below 30000 "the signal ends the fetch"
	expect_nothing "$A"
	[ -e "$CACHE/$A" ] && [ -n "$(ls -A "$CACHE/$A")" ] &&
		fail "the entry holds: $(ls -A "$CACHE/$A")"
	grep -q -F '[0/1]' "$T/err" || fail "no progress line drawn"
	# Ended: stderr ends with a newline, and the error is a line of its own.
	[ -s "$T/err" ] && [ -z "$(tail -c 1 "$T/err")" ] || fail "stderr does not end a line"
	grep -q '^dsostore: .*[Cc]ancel' <(tr '\r' '\n' <"$T/err") ||
		fail "no line saying the fetch was cancelled"
	grep -q '.dsostore: ' "$T/err" && fail "a message written on the progress line"
	grep -q -E 'Sanitizer|runtime error:' "$T/err" && fail "sanitizer report"
	case_end
done

# The same through the commands that fetch a recording's debuginfo first:
# a recording (tests/gen/perfgen.py) of a and b mapped from a directory
# that does not exist, so that their build IDs are all there is to go by.
if python3 "$DS_SRC/tests/gen/perfgen.py" --dsos-from "$S" --map-prefix /nonexistent/dsfaults \
	--out "$T/rec.data" >"$T/perfgen.out" 2>&1; then
	for run in "prefetch TERM" "report INT" "annotate INT"; do
		set -- $run
		case_begin "$1: SIG$2 during its fetch: exit $((128 + $(kill -l $2))), no temporary file"
		fault $P1 "$A:stall=70000"
		DEBUGINFOD_TIMEOUT=120 env --default-signal=INT "$DSOSTORE" "$1" --progress \
			"$T/rec.data" >"$T/out" 2>"$T/err" &
		fpid=$!
		await_temporary
		kill -$2 $fpid
		t0=$(date +%s%N)
		wait $fpid
		RC=$?
		MS=$((($(date +%s%N) - t0) / 1000000))
		expect_rc $((128 + $(kill -l $2)))
		expect_ms_below 30000 "the signal ends $1"
		expect_nothing "$A"
		[ -s "$T/err" ] && [ -z "$(tail -c 1 "$T/err")" ] || fail "stderr does not end a line"
		grep -q '.dsostore: ' "$T/err" && fail "a message written on the progress line"
		grep -q -E 'Sanitizer|runtime error:' "$T/err" && fail "sanitizer report"
		case_end
	done
else
	fail "perfgen: $(tail -3 "$T/perfgen.out")"
fi

if [ "$fails" -ne 0 ]; then
	echo "$case_fails case(s) failed ($fails check(s))" >&2
	exit 1
fi
echo "all fault cases passed"
