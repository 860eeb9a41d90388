#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dsostore prefetch` on real perf recordings of stripped workloads whose
# debuginfo only a debuginfod server has: the real elfutils debuginfod for
# the main path (perf report shows hex before and the functions' names
# after `prefetch --perf-cache`, with no network), our dsserver for what a
# real server will not do on purpose (fail, 404 one build ID) and to count
# requests.  Expected names come from the workload's source (they are its
# functions), build IDs from readelf, what was fetched from the server's
# own counters.
#
# The real debuginfod 0.188 listens on every address: like
# tests/cli/debuginfod_real.sh, this script re-runs itself in a network
# namespace with only loopback up.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
export PATH=$PATH:/usr/sbin:/sbin

: "${DSOSTORE:?DSOSTORE must name the CLI}"
: "${DS_BUILD:?DS_BUILD must name the build dir}"
tl_need perf debuginfod gcc objcopy strip readelf curl unshare ip
tl_need_dsserver
tl_netns_reexec --skip "cannot create a network namespace for the real debuginfod" "$0" "$@"

tl_tmpdir dsprefetch
cd "$tmp" || exit 2
export HOME=$tmp # perf's ~/.debug and ~/.perfconfig: ours
tl_sanitizer_exitcodes
tl_perf_or_skip

# ---------------------------------------------------------- workload
# A program and a library it calls, each with static functions that burn
# CPU (so they get samples), plus a library that is mapped but never
# called (only --all asks for it).  Built with -g, the debuginfo split off
# and the binaries stripped: nothing on this machine can name the
# functions but the server.
mkdir -p bin srv
cat >libw.c <<'EOF'
static __attribute__((noinline)) unsigned long lib_spin(unsigned long x)
{
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

unsigned long lib_entry(unsigned long x)
{
	return lib_spin(x) ^ 1;
}
EOF
cat >libidle.c <<'EOF'
int idle_never_called(int x)
{
	return x * 3;
}
EOF
cat >w.c <<'EOF'
#include <stdio.h>
#include <time.h>

unsigned long lib_entry(unsigned long x);
int idle_never_called(int x);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) unsigned long main_spin(unsigned long x)
{
	for (int i = 0; i < 3000; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

int main(int argc, char **argv)
{
	double end = now() + 0.4;
	unsigned long h = 1;

	while (now() < end)
		h = lib_entry(main_spin(h));
	if (argc > 5)
		h += idle_never_called(argc);
	printf("%lx\n", h);
	return 0;
}
EOF
split() { # name: bin/name stripped, srv/name.debug its debuginfo
	objcopy --only-keep-debug "bin/$1" "srv/$1.debug" &&
		strip --strip-all "bin/$1"
}
gcc -O1 -g -fPIC -shared -o bin/libw.so libw.c &&
	gcc -O1 -g -fPIC -shared -o bin/libidle.so libidle.c &&
	gcc -O1 -g -o bin/w w.c -Lbin -lw -lidle -Wl,--no-as-needed -Wl,-rpath,"$tmp/bin" &&
	split w && split libw.so && split libidle.so || {
	fail "could not build the workload"
	exit 1
}
declare -A bid
for f in w libw.so libidle.so; do
	bid[$f]=$(readelf -n "bin/$f" | awk '/Build ID:/ {print $3}')
	[ -n "${bid[$f]}" ] || fail "no build ID in bin/$f"
done

# ---------------------------------------------------------- servers
P=8011
# Not ready within 15 s: it says so, and the checks below tell what broke.
tl_start_debuginfod $P "$tmp/srv" || true
served() { # debuginfo requests the real server got
	tl_metric $P 'http_requests_total{type="debuginfo"}'
}

# dsserver: the same files, misbehaving on request.
tl_start_dsserver DSP dsserver --max-runtime 300 "$tmp/srv" || exit 1
control() { curl -s --max-time 5 "http://127.0.0.1:$DSP/control/$1" >/dev/null; }
ds_requests() { # debuginfo requests dsserver saw for a build ID
	curl -s --max-time 5 "http://127.0.0.1:$DSP/control/stats?url=/buildid/$1/debuginfo"
}

# ------------------------------------------------------------ record
perf record -N -e cpu-clock -F 2000 -o s.data -- bin/w >s.rec 2>&1 ||
	fail "perf record: $(tail -3 s.rec)"
perf record -N -z -e cpu-clock -F 2000 -o z.data -- bin/w >z.rec 2>&1 ||
	fail "perf record -z: $(tail -3 z.rec)"
perf record -N -e cpu-clock -F 2000 -o - -- bin/w >pipe.data 2>pipe.rec ||
	fail "perf record -o -: $(tail -3 pipe.rec)"

report_syms() { # perf report's symbols of our DSOs, sorted
	perf report -i "$1" --stdio --sort dso,sym 2>/dev/null |
		awk '$2 == "w" || $2 == "libw.so" {print $2, $NF}' | sort -u
}
names_before=$(report_syms s.data)
# (lib_entry is exported: .dynsym names it even stripped.)
for fn in main_spin lib_spin; do
	if grep -q " $fn\$" <<<"$names_before"; then
		fail "before prefetch perf report already names $fn: the binaries were not stripped?"
	fi
done

# ------------------------------------------------- prefetch: real server
export DEBUGINFOD_URLS=http://127.0.0.1:$P DEBUGINFOD_CACHE_PATH=$tmp/cache
before=$(served)
tl_prefetch real --perf-cache --perf-buildid-dir "$HOME/.debug" s.data
[ "$rc" -eq 0 ] || fail "real: exit $rc: $(cat real.err)"
[ "$(tl_summary_field real fetched)" = 2 ] || fail "real: fetched $(tl_summary_field real fetched), want 2 (w, libw.so): $(cat real.out)"
[ "$(tl_summary_field real "into perf's cache")" = 2 ] ||
	fail "real: $(tl_summary_field real "into perf's cache") into perf's cache, want 2: $(cat real.out)"
# One request per build ID the machine lacks: the two, and what is missing
# (the vDSO, when it has samples).
[ $(($(served) - before)) -eq $((2 + $(tl_summary_field real missing))) ] ||
	fail "real: the server was asked $(($(served) - before)) times, want 2 + $(tl_summary_field real missing) missing"
grep -q "libidle" real.out && fail "real: libidle.so (no samples) was considered without --all"
for f in w libw.so; do
	grep -q "${bid[$f]}" real.out && fail "real: $f listed as missing or failed"
	[ -s "cache/${bid[$f]}/debuginfo" ] || fail "real: $f's debuginfo not in the cache"
done

# perf, offline now (no server in its environment, and Debian's perf has
# no debuginfod client anyway), names the functions.
names_after=$(env -u DEBUGINFOD_URLS perf report -i s.data --stdio --sort dso,sym 2>/dev/null |
	awk '$2 == "w" || $2 == "libw.so" {print $2, $NF}' | sort -u)
for want in "w main_spin" "libw.so lib_spin"; do
	grep -q -x -F "$want" <<<"$names_after" ||
		fail "after prefetch --perf-cache perf report lacks '$want'; it shows: $(tr '\n' ';' <<<"$names_after")"
done

# Again: everything from the cache, nothing asked of the server.
before=$(served)
tl_prefetch again s.data
[ "$rc" -eq 0 ] || fail "again: exit $rc"
[ "$(tl_summary_field again fetched)" = 0 ] || fail "again: fetched $(tl_summary_field again fetched), want 0"
[ "$(tl_summary_field again "debuginfod cache")" = 2 ] ||
	fail "again: $(tl_summary_field again "debuginfod cache") from the debuginfod cache, want 2: $(cat again.out)"
[ "$(served)" -eq "$before" ] || fail "again: the server was asked again"

# -z and pipe mode: no build-ID table; the build IDs are read from the
# files (same inodes): the same two come from the cache.
for r in z pipe; do
	tl_prefetch "$r" "$r.data"
	[ "$rc" -eq 0 ] || fail "$r: exit $rc: $(cat "$r.err")"
	[ "$(tl_summary_field "$r" "debuginfod cache")" = 2 ] ||
		fail "$r: $(tl_summary_field "$r" "debuginfod cache") from the cache, want 2: $(cat "$r.out")"
done

# ---------------------------------------------------- dsserver: faults
export DEBUGINFOD_URLS=http://127.0.0.1:$DSP DEBUGINFOD_RETRY_LIMIT=0
# --all: the unsampled library too; a 404 for libw.so is "missing" (exit
# 0), with its build ID and path.
export DEBUGINFOD_CACHE_PATH=$tmp/cache-all
control "fault?spec=${bid[libw.so]}:status=404"
tl_prefetch all --all s.data
[ "$rc" -eq 0 ] || fail "all: exit $rc: $(cat all.err)"
[ "$(ds_requests "${bid[libidle.so]}")" -eq 1 ] || fail "all: libidle.so not fetched once with --all"
[ -s "cache-all/${bid[libidle.so]}/debuginfo" ] || fail "all: libidle.so's debuginfo not cached"
grep -q -x -F "missing  ${bid[libw.so]} $tmp/bin/libw.so" all.out ||
	fail "all: no 'missing' line for libw.so: $(cat all.out)"
control "fault?bid=${bid[libw.so]}&kind=clear"

# A server error is a failure: exit 1, a 'failed' line.
export DEBUGINFOD_CACHE_PATH=$tmp/cache-fail
control "fault?spec=${bid[w]}:status=500"
before=$(ds_requests "${bid[w]}")
tl_prefetch failed s.data
[ "$rc" -eq 1 ] || fail "failed: exit $rc, want 1"
# One request (no retries here): the batch's answer is the DSO's, the
# server is not asked a second time for the summary.
[ $(($(ds_requests "${bid[w]}") - before)) -eq 1 ] ||
	fail "failed: the server was asked $(($(ds_requests "${bid[w]}") - before)) times for w, want 1"
grep -q -E "^failed   ${bid[w]} $tmp/bin/w: " failed.out || fail "failed: no 'failed' line for w: $(cat failed.out)"
[ "$(tl_summary_field failed failed)" = 1 ] || fail "failed: $(tl_summary_field failed failed) failed, want 1"
[ "$(tl_summary_field failed fetched)" = 1 ] || fail "failed: $(tl_summary_field failed fetched) fetched, want 1 (libw.so)"

# Not a recording: exit 2 with one message.
tl_prefetch bad /etc/passwd
[ "$rc" -eq 2 ] || fail "bad: exit $rc, want 2"
grep -q "^dsostore: /etc/passwd: " bad.err || fail "bad: $(cat bad.err)"

tl_finish perf_prefetch
