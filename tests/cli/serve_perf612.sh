#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf 6.12 (scripts/peers' perf-6.12, built with debuginfod) as a client
# of `dsostore serve`.  The workload, built here, spends nearly all its time
# in one static function, peers612_spin; its debuginfo is split off and the
# binary stripped of every symbol (strip --strip-all), the debug file only
# in the node's -F directory, so the name can come from nowhere else.  What
# perf 6.12 fetches through debuginfod, as seen here:
# - `perf report` never asks (DEBUGINFOD_URLS set, perf's build-id cache
#   empty): no request reaches the node, and the function has no name;
# - `perf buildid-cache --debuginfod=URL --add FILE` fetches
#   /buildid/ID/debuginfo and keeps it as the `debug` file of the build-id
#   cache, and `perf record --debuginfod=URL` does the same at the end of
#   recording (without --debuginfod perf record empties DEBUGINFOD_URLS);
#   perf report then names peers612_spin.
# Checked: the node's -v log line and /metrics count for each request, the
# bytes perf keeps (cmp with the -F file), the name in perf report's table
# (nothing about which samples landed where).
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
tl_sanitizer_exitcodes
: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
perf=$(tl_peer perf-6.12) || exit $?
tl_need gcc objcopy strip eu-readelf cmp curl
tl_tmpdir dsperf612
cd "$tmp" || exit 2
tl_perf_or_skip "$perf"
mkdir -p bin srv nodehome home-record

# ---- the workload: stripped, its debuginfo only in srv/.
{
	cat <<'EOF'
#include <stdio.h>
#include <time.h>
static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
__attribute__((noinline)) static unsigned long peers612_spin(unsigned long h)
{
	for (int i = 0; i < 200000; i++)
		h = h * 6364136223846793005UL + 1442695040888963407UL;
	return h;
}
EOF
	tl_spin_main peers612
} >w.c
if ! gcc -g -O2 -o bin/w612 w.c 2>gcc.err || ! objcopy --only-keep-debug bin/w612 srv/w612.debug ||
	! strip --strip-all bin/w612; then
	fail "cannot build the workload: $(cat gcc.err)"
	tl_finish serve_perf612
fi
bid=$(tl_build_id bin/w612)
[ -n "$bid" ] || fail "eu-readelf finds no build ID in the workload"
# The name is in the debug file's symbol table and nowhere in the binary.
eu-readelf -s srv/w612.debug | grep -qw peers612_spin || fail "w612.debug has no peers612_spin"
! eu-readelf -s bin/w612 2>/dev/null | grep -qw peers612_spin || fail "the stripped binary names peers612_spin"
size=$(stat -c %s srv/w612.debug)

# ---- the node: only srv/; its own HOME and cache (no perf cache of ours).
HOME=$tmp/nodehome "$DSOSTORE" serve -p 0 --port-file node.port -F srv --rescan 0 --upstream "" \
	--cache "$tmp/nodecache" -v 2>node.log &
node=$!
pids+=("$node")
for ((i = 0; i < 200; i++)); do
	[ ! -s node.port ] && kill -0 "$node" 2>/dev/null || break
	sleep 0.05
done
port=$(cat node.port 2>/dev/null) || port=
if [ -z "$port" ] || ! tl_wait_ready "$port" "$node"; then
	fail "dsostore serve did not start: $(tail -5 node.log)"
	tl_finish serve_perf612
fi
url=http://127.0.0.1:$port
debuginfo_requests() { tl_metric "$port" 'http_requests_total{type="debuginfo"}'; }
# served N: the node's log has N lines "127.0.0.1 GET /buildid/ID/debuginfo
# 200 SIZE ..." (the whole file to a local client).  The line is written
# once the answer is sent, which a loaded machine may run after perf has
# its file: up to 10 s for it (more than N lines never becomes fewer).
served() {
	local n i
	for i in $(seq 200); do
		n=$(grep -c "^dsostore serve: 127\.0\.0\.1 GET /buildid/$bid/debuginfo 200 $size " node.log)
		[ "$n" -lt "$1" ] || break
		sleep 0.05
	done
	[ "$n" = "$1" ] || fail "the node's log has $n answers of the debuginfo, not $1: $(grep ' GET ' node.log)"
}
# names DATA HOME: perf 6.12's table of DATA, with perf's build-id cache in
# HOME/.debug, names peers612_spin in w612.
names() {
	HOME=$2 DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$2/client \
		"$perf" report -i "$1" --stdio --sort dso,sym 2>"$2.report.err" >"$2.report"
	awk '$2 == "w612" && $4 == "peers612_spin" {f = 1} END {exit !f}' "$2.report"
}

# Recorded without the build-id cache (-N), so that no HOME has it yet.
HOME=$tmp/home-record "$perf" record -N -e cpu-clock -o w.data -- bin/w612 >record.out 2>record.err ||
	fail "perf-6.12 record: $(tail -3 record.err)"

tl_case "report asks nothing"
mkdir -p home-report
if names w.data "$tmp/home-report"; then
	fail "peers612_spin named without its debug file"
fi
grep -q '^# Samples' home-report.report || fail "perf printed no table: $(head -3 home-report.report.err)"
[ "$(debuginfo_requests)" = 0 ] || fail "perf report asked the node: $(grep ' GET ' node.log)"
served 0
tl_case_end

# fetched N NAME DATA: after perf's N-th fetch of the workload's
# debuginfo, with HOME=$tmp/NAME, the node has answered N requests for it
# and counts at least N (perf record may ask for the other DSOs it
# sampled too, where this machine has no debuginfo of them), perf's
# build-id cache there holds the node's file, and perf report of DATA
# names peers612_spin.
fetched() {
	local n=$1 home=$tmp/$2 data=$3 got

	got=$(debuginfo_requests)
	[ "$got" -ge "$n" ] || fail "the node counts $got debuginfo requests, not $n or more"
	served "$n"
	cmp -s "$home/.debug$tmp/bin/w612/$bid/debug" srv/w612.debug ||
		fail "perf's build-id cache has no copy of the node's file: $(find "$home/.debug" -type f)"
	names "$data" "$home" || fail "peers612_spin not named: $(grep w612 "$home.report" | head -3)"
}

tl_case "buildid-cache --debuginfod"
mkdir -p home-add
HOME=$tmp/home-add DEBUGINFOD_URLS='' DEBUGINFOD_CACHE_PATH=$tmp/home-add/client \
	"$perf" buildid-cache --debuginfod="$url" --add bin/w612 >add.out 2>&1 ||
	fail "perf-6.12 buildid-cache: $(cat add.out)"
fetched 1 home-add w.data
tl_case_end

tl_case "record --debuginfod"
mkdir -p home-rec2
HOME=$tmp/home-rec2 DEBUGINFOD_URLS='' DEBUGINFOD_CACHE_PATH=$tmp/home-rec2/client \
	"$perf" record --debuginfod="$url" -e cpu-clock -o w2.data -- bin/w612 >record2.out 2>record2.err ||
	fail "perf-6.12 record --debuginfod: $(tail -3 record2.err)"
fetched 2 home-rec2 w2.data
tl_case_end

# The node stops cleanly (SIGTERM: exit 0), with no sanitizer report.
kill -TERM "$node"
rc=0
wait "$node" || rc=$?
[ "$rc" = 0 ] || fail "dsostore serve exited $rc on SIGTERM: $(tail -5 node.log)"
! grep -qE 'Sanitizer|runtime error' node.log || fail "sanitizer report: $(grep -m3 -E 'Sanitizer|runtime error' node.log)"

tl_finish serve_perf612
