#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dwz alt files through prefetch and perf's cache.  Two stripped programs
# whose debuginfo went through `dwz -m` (their inlined helper's DIEs now in
# one alt file) are recorded with perf; their debuginfo and the alt file
# are only on a server (our dsserver, which counts requests).  After one
# `dsostore prefetch --perf-cache`, with the server stopped:
#   - the alt file was asked of the server once, in prefetch's second round;
#   - `dsostore symbolize` gives, offline, what addr2line gives on the
#     programs before dwz (the oracle: addr2line 2.40 misreads dwz'd files,
#     shared/REFERENCES.md), inline frames named in the alt file included;
#   - `perf report --sort dso,srcline` (Debian's perf runs binutils'
#     addr2line on the debug file in its cache, which reads the alt file by
#     its .gnu_debugaltlink name from that file's directory) gives what it
#     gives with the programs' plain debuginfo installed instead, the
#     oracle, and not that without the alt file.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc objcopy strip readelf dwz addr2line nm curl
tl_need_dsserver

tl_tmpdir dsalt
cd "$tmp" || exit 2
export HOME=$tmp # perf's ~/.debug and ~/.perfconfig: ours
unset PERF_BUILDID_DIR
tl_sanitizer_exitcodes
tl_perf_or_skip

# ---------------------------------------------------------- workload
mkdir -p bin plain srv
cat >common.h <<'EOF'
static inline __attribute__((always_inline)) unsigned long cm_mix(unsigned long x)
{
	for (int i = 0; i < 3000; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}
EOF
for p in a b; do
	cat >$p.c <<EOF
#include <stdio.h>
#include <time.h>
#include "common.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) unsigned long ${p}_spin(unsigned long x)
{
	return cm_mix(x) + 1;
}

EOF
	tl_spin_main $p >>$p.c
	gcc -O2 -g -Wl,--build-id=sha1 -o bin/$p $p.c && cp bin/$p plain/$p &&
		objcopy --only-keep-debug bin/$p srv/$p.debug && strip --strip-all bin/$p || {
		fail "could not build $p"
		exit 1
	}
done
# The name dwz records leads nowhere here: the alt file is found by its
# build ID, as on a machine where debug packages are not installed.
(cd srv && dwz -m common.debug -M /nonexistent/.dwz/common.debug a.debug b.debug) ||
	{ fail "dwz -m failed"; exit 1; }
bid_of() { readelf -n "$1" | awk '/Build ID:/ {print $3; exit}'; }
abid=$(bid_of bin/a) bbid=$(bid_of bin/b) altbid=$(bid_of srv/common.debug)
[ -n "$abid" ] && [ -n "$bbid" ] && [ -n "$altbid" ] || { fail "build IDs missing"; exit 1; }

# ---------------------------------------------------------- record
perf record -N -e cpu-clock -F 2000 -o s.data -- sh -c "$tmp/bin/a && $tmp/bin/b" \
	>rec.out 2>&1 || { fail "perf record: $(tail -3 rec.out)"; exit 1; }

# ---------------------------------------------------------- prefetch
tl_start_dsserver DSP dsserver --max-runtime 300 "$tmp/srv" || exit 1
server_pid=${pids[-1]}
requests() { # debuginfo requests dsserver saw for a build ID
	curl -s --max-time 5 "http://127.0.0.1:$DSP/control/stats?url=/buildid/$1/debuginfo"
}
export DEBUGINFOD_URLS=http://127.0.0.1:$DSP DEBUGINFOD_CACHE_PATH=$tmp/cache
tl_prefetch first --perf-cache --perf-buildid-dir "$HOME/.debug" s.data
[ "$rc" -eq 0 ] || fail "first: exit $rc: $(cat first.err)"
[ "$(tl_summary_field first "dwz alt files")" = 1 ] ||
	fail "first: $(tl_summary_field first "dwz alt files") dwz alt files, want 1: $(cat first.out)"
grep -q "(0 missing)" first.out || fail "first: the alt file is missing: $(cat first.out)"
[ "$(tl_summary_field first "alt files there")" = 1 ] ||
	fail "first: $(tl_summary_field first "alt files there") alt files in perf's cache, want 1"
[ "$(requests "$altbid")" = 1 ] || fail "first: the alt file was asked $(requests "$altbid") times, want 1"
for b in "$abid" "$bbid" "$altbid"; do
	[ -s "cache/$b/debuginfo" ] || fail "first: $b not in the debuginfod cache"
done

# Again: the alt file comes from the cache.
tl_prefetch again s.data
[ "$rc" -eq 0 ] || fail "again: exit $rc: $(cat again.err)"
[ "$(requests "$altbid")" = 1 ] || fail "again: the alt file was asked of the server again"
[ "$(tl_summary_field again "dwz alt files")" = 1 ] || fail "again: $(cat again.out)"

# report names its rows from ELF symbols: with caches of its own (perf's
# has the alt file now) it asks for the programs' debuginfo but not for
# the alt file, which only their DWARF names; --inline needs its names
# (cm_mix is defined there), and asks for it once.
rc=0
mkdir -p home-report
HOME=$tmp/home-report PERF_BUILDID_DIR=$tmp/home-report/.debug DEBUGINFOD_CACHE_PATH=$tmp/cache-report \
	"$DSOSTORE" report --no-progress s.data \
	>names.out 2>names.err || rc=$?
[ "$rc" = 0 ] || fail "report: exit $rc: $(head -3 names.err)"
grep -q 'a_spin' names.out || fail "report: no a_spin row: $(head -20 names.out)"
[ "$(requests "$altbid")" = 1 ] ||
	fail "report (dso,sym) asked for the alt file: $(requests "$altbid") requests in all, want still 1"
rc=0
HOME=$tmp/home-report PERF_BUILDID_DIR=$tmp/home-report/.debug DEBUGINFOD_CACHE_PATH=$tmp/cache-report \
	"$DSOSTORE" report --no-progress --inline s.data \
	>lines.out 2>lines.err || rc=$?
[ "$rc" = 0 ] || fail "report --inline: exit $rc: $(head -3 lines.err)"
grep -q 'cm_mix (inlined)' lines.out || fail "report --inline: no cm_mix frame: $(head -30 lines.out)"
[ "$(requests "$altbid")" = 2 ] ||
	fail "report --inline: $(requests "$altbid") requests of the alt file in all, want 2"

# Offline from here: the server stops (its port refuses).
kill -TERM "$server_pid" 2>/dev/null
wait "$server_pid" 2>/dev/null

# ---------------------------------------------------------- symbolize
for p in a b; do
	read -r lo size < <(nm -S plain/$p | awk -v f=${p}_spin '$4 == f {print $1, $2}')
	[ -n "${lo:-}" ] || { fail "no ${p}_spin in plain/$p"; continue; }
	addrs=$(python3 -c "import sys; lo, n = int(sys.argv[1], 16), int(sys.argv[2], 16); print(' '.join('%x' % a for a in range(lo, lo + n)))" "$lo" "$size")
	# shellcheck disable=SC2086
	addr2line -f -i -a -e plain/$p $addrs >$p.want
	# shellcheck disable=SC2086
	"$DSOSTORE" symbolize -e bin/$p -f -i -a --debug-dir "$tmp/none" $addrs >$p.got 2>$p.err
	cmp -s $p.want $p.got || fail "symbolize $p offline differs from addr2line before dwz: $(diff $p.want $p.got | head -6)"
	grep -q -x cm_mix $p.got || fail "symbolize $p: no cm_mix frame (it is named in the alt file)"
done

# ---------------------------------------------------------- perf
# Where prefetch put the alt file: its own entry and the name the debug
# file records, relative to the debug file's entry.
entry=$(readlink -f "$HOME/.debug/.build-id/${abid:0:2}/${abid:2}")
[ -e "$entry/nonexistent/.dwz/common.debug" ] ||
	fail "perf cache: no $entry/nonexistent/.dwz/common.debug: $(find "$HOME/.debug" | head -20)"
[ -s "$HOME/.debug/.build-id/${altbid:0:2}/${altbid:2}/debug" ] ||
	fail "perf cache: the alt file has no entry of its own"

srclines() { # HOME: perf report's (dso, srcline) rows of our programs
	HOME=$1 perf report -i s.data --stdio --sort dso,srcline 2>/dev/null |
		awk '$2 == "a" || $2 == "b"'
}
got=$(srclines "$tmp")
# The oracle: the same recording, the programs' plain debuginfo in another
# perf cache.
mkdir -p oracle
for p in a b; do
	HOME=$tmp/oracle "$DSOSTORE" perf-cache install --perf-buildid-dir "$tmp/oracle/.debug" \
		--path "$tmp/bin/$p" plain/$p >/dev/null 2>oracle.err ||
		fail "oracle: perf-cache install $p: $(cat oracle.err)"
done
want=$(srclines "$tmp/oracle")
grep -q "common.h:" <<<"$want" || fail "oracle: perf shows no common.h line: $want"
[ "$got" = "$want" ] || fail "perf report --sort dso,srcline after prefetch --perf-cache:
$got
differs from the plain build's:
$want"
# Without the alt file perf cannot read those lines: it is what counts.
mv "$entry/nonexistent" "$tmp/moved"
without=$(srclines "$tmp")
[ "$without" != "$want" ] || fail "perf gives the same lines without the alt file: the test proves nothing"
mv "$tmp/moved" "$entry/nonexistent"

tl_finish perf_alt
