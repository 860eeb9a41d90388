#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Split DWARF through prefetch and perf's cache.  Two stripped programs
# built with -gsplit-dwarf are recorded with perf: pk by clang (DWARF 5),
# its units packaged by llvm-dwp into bin/pk.dwp (no .dwo left); dw by gcc
# (DWARF 4), its .dwo files where it was compiled, one of them deleted.  Their debuginfo (the skeleton units) is only on a server (our
# dsserver).  After one `dsostore prefetch --perf-cache`:
#   - the summary counts the split units where the store found them,
#     locally (debuginfod serves no .dwo), and names the missing one;
#   - the package is in perf's cache beside the installed debug file
#     (<entry>/debug.dwp), where llvm-symbolizer finds it: on that debug
#     file it answers as it does on the (unstripped) binary beside its
#     package, and not so without it;
#   - offline, with the package beside the binary moved away,
#     `dsostore symbolize` answers pk's addresses as it does on the same
#     sources built without -gsplit-dwarf (the oracle for split builds,
#     docs/oracles.md), which llvm-symbolizer confirms on that plain build
#     (clang's DWARF 5: docs/oracles.md); dw's unit with its .dwo too
#     (addr2line confirms, DWARF 4), and its missing unit gets the
#     skeleton's lines, as addr2line 2.40 prints them (it reads no split
#     DWARF).
# (llvm-symbolizer 14 names no inline frame of gcc's DWARF 4 split units,
# packaged or not: the peer is asked about clang's.)
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc clang llvm-dwp-14 objcopy strip readelf nm addr2line llvm-symbolizer-14 curl python3
tl_need_dsserver

tl_tmpdir dssplitperf
cd "$tmp" || exit 2
export HOME=$tmp # perf's ~/.debug and ~/.perfconfig: ours
unset PERF_BUILDID_DIR
tl_sanitizer_exitcodes
tl_perf_or_skip

# ---------------------------------------------------------- workload
mkdir -p bin plain srv obj pobj split
cat >common.h <<'EOF'
#include <time.h>
static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 3000; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}
/* (gcc 12's DWARF 4 gives a lone inlined mix() an empty range list: no
 * tool names it; twice's calls have ranges.) */
static inline __attribute__((always_inline)) unsigned long twice(unsigned long x)
{
	return mix(mix(x) + 3);
}
static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
EOF
for p in pk dw; do
	cat >${p}_spin.c <<EOF
#include "common.h"
__attribute__((noinline)) unsigned long ${p}_spin(unsigned long x)
{
	return twice(x) + 1;
}
EOF
	cat >${p}_main.c <<EOF
#include <stdio.h>
#include "common.h"
unsigned long ${p}_spin(unsigned long x);
EOF
	tl_spin_main $p >>${p}_main.c
done
# Every object compiled here, from the same names: the plain build's file
# names are the split build's.
build() { # PROG CC FLAGS...
	local p=$1 cc=$2
	shift 2
	for s in spin main; do
		$cc "$@" -gsplit-dwarf -c ${p}_$s.c -o obj/${p}_$s.o &&
			$cc "$@" -c ${p}_$s.c -o pobj/${p}_$s.o || return 1
	done
	$cc "$@" -Wl,--build-id=sha1 -o bin/$p obj/${p}_spin.o obj/${p}_main.o &&
		$cc "$@" -Wl,--build-id=sha1 -o plain/$p pobj/${p}_spin.o pobj/${p}_main.o
}
build pk clang -O2 -gdwarf-5 && build dw gcc -O2 -gdwarf-4 || {
	fail "could not build the programs"
	exit 1
}
(cd obj && llvm-dwp-14 -o ../bin/pk.dwp pk_spin.dwo pk_main.dwo && rm pk_spin.dwo pk_main.dwo) ||
	{ fail "llvm-dwp failed"; exit 1; }
rm obj/dw_main.dwo # dw_spin.dwo stays: its unit is found, main's is not
# split/: the unstripped split binaries, for llvm-symbolizer.
cp bin/pk bin/pk.dwp bin/dw split/
for p in pk dw; do
	objcopy --only-keep-debug bin/$p srv/$p.debug && strip --strip-all bin/$p ||
		{ fail "could not split $p"; exit 1; }
done
bid_of() { readelf -n "$1" | awk '/Build ID:/ {print $3; exit}'; }
pkbid=$(bid_of bin/pk)
[ -n "$pkbid" ] || { fail "no build ID"; exit 1; }

# ---------------------------------------------------------- record
perf record -N -e cpu-clock -F 2000 -o s.data -- sh -c "$tmp/bin/pk && $tmp/bin/dw" \
	>rec.out 2>&1 || { fail "perf record: $(tail -3 rec.out)"; exit 1; }

# ---------------------------------------------------------- prefetch
tl_start_dsserver DSP dsserver --max-runtime 300 "$tmp/srv" || exit 1
server_pid=${pids[-1]}
export DEBUGINFOD_URLS=http://127.0.0.1:$DSP DEBUGINFOD_CACHE_PATH=$tmp/cache
tl_prefetch first --perf-cache --perf-buildid-dir "$HOME/.debug" s.data
[ "$rc" -eq 0 ] || fail "first: exit $rc: $(cat first.err)"
[ "$(tl_summary_field first "fetched")" = 2 ] || fail "first: the debuginfo was not fetched: $(cat first.out)"
[ "$(tl_summary_field first "split DWARF units")" = 4 ] ||
	fail "first: $(tl_summary_field first "split DWARF units") split units, want 4: $(cat first.out)"
grep -q "(of 2 DSOs: 2 in .dwp, 1 in .dwo, 1 missing)" first.out ||
	fail "first: where the units are: $(cat first.out)"
grep -q "^missing  1 of 2 split units of $tmp/bin/dw " first.out ||
	fail "first: no line for dw's missing unit: $(cat first.out)"
[ "$(tl_summary_field first ".dwp files there")" = 1 ] ||
	fail "first: $(tl_summary_field first ".dwp files there") packages into perf's cache, want 1"
kill -TERM "$server_pid" 2>/dev/null
wait "$server_pid" 2>/dev/null

entry=$(readlink -f "$HOME/.debug/.build-id/${pkbid:0:2}/${pkbid:2}")
[ -s "$entry/debug.dwp" ] || fail "perf cache: no $entry/debug.dwp: $(ls -la "$entry")"
cmp -s "$entry/debug.dwp" bin/pk.dwp || fail "perf cache: $entry/debug.dwp is not bin/pk.dwp"

addrs_of() { # FILE FUNC: every address of FUNC, in hex
	read -r lo size < <(nm -S "$1" | awk -v f="$2" '$4 == f {print $1, $2}')
	[ -n "${lo:-}" ] || return 1
	python3 -c "import sys; lo, n = int(sys.argv[1], 16), int(sys.argv[2], 16); print(' '.join('0x%x' % a for a in range(lo, lo + n)))" "$lo" "$size"
}

# ---------------------------------------------------------- a peer
# llvm-symbolizer reads <file>.dwp beside the file it is given: on the
# cached debug file, what it answers on the binary beside its package.
pka=$(addrs_of plain/pk pk_spin) || fail "no pk_spin in plain/pk"
# shellcheck disable=SC2086
llvm-symbolizer-14 -f -i -e split/pk $pka >llvm.want
# shellcheck disable=SC2086
llvm-symbolizer-14 -f -i -e "$entry/debug" $pka >llvm.got
grep -q -x mix llvm.want || fail "llvm-symbolizer names no inlined mix beside split/pk.dwp: the test proves nothing"
cmp -s llvm.want llvm.got || fail "llvm-symbolizer on $entry/debug differs from split/pk beside its package: $(diff llvm.want llvm.got | head -6)"
mv "$entry/debug.dwp" "$tmp/moved.dwp"
# shellcheck disable=SC2086
llvm-symbolizer-14 -f -i -e "$entry/debug" $pka >llvm.without
cmp -s llvm.want llvm.without && fail "llvm-symbolizer answers the same without $entry/debug.dwp"
mv "$tmp/moved.dwp" "$entry/debug.dwp"

# ---------------------------------------------------------- offline
# The package beside the binary goes: the one in perf's cache answers.
mv bin/pk.dwp "$tmp/pk.dwp.away"
# shellcheck disable=SC2086
llvm-symbolizer-14 -f -i -e plain/pk $pka >pk.llvm
# shellcheck disable=SC2086
"$DSOSTORE" symbolize --output-style=LLVM -e plain/pk -f -i $pka >pk.ours 2>pk.want.err
cmp -s pk.llvm pk.ours || fail "the oracle: dsostore on plain/pk differs from llvm-symbolizer: $(diff pk.llvm pk.ours | head -6)"
# shellcheck disable=SC2086
"$DSOSTORE" symbolize -e plain/pk -f -i -a $pka >pk.want 2>pk.want.err
# shellcheck disable=SC2086
"$DSOSTORE" symbolize -e bin/pk -f -i -a --debug-dir "$tmp/none" $pka >pk.got 2>pk.err
cmp -s pk.want pk.got || fail "symbolize bin/pk offline differs from the plain build: $(diff pk.want pk.got | head -6) $(head -3 pk.err)"
grep -q -x mix pk.got || fail "symbolize bin/pk: no mix frame (it is in the package)"
mv "$tmp/pk.dwp.away" bin/pk.dwp

# dw: its spin unit from its .dwo, the plain build's; main's without one,
# the skeleton's lines and ELF names, as addr2line prints them.
dwa=$(addrs_of plain/dw dw_spin) || fail "no dw_spin in plain/dw"
dwm=$(addrs_of plain/dw main) || fail "no main in plain/dw"
# shellcheck disable=SC2086
addr2line -f -i -a -e plain/dw $dwa >dw.a2l
# shellcheck disable=SC2086
"$DSOSTORE" symbolize -e plain/dw -f -i -a $dwa >dw.want 2>/dev/null
cmp -s dw.a2l dw.want || fail "the oracle: dsostore on plain/dw differs from addr2line: $(diff dw.a2l dw.want | head -6)"
grep -q -x mix dw.want || fail "plain/dw: no inlined mix: the test proves nothing"
# shellcheck disable=SC2086
"$DSOSTORE" symbolize -e bin/dw -f -i -a --debug-dir "$tmp/none" $dwa >dw.got 2>dw.err
cmp -s dw.want dw.got || fail "symbolize bin/dw (dw_spin) differs from the plain build: $(diff dw.want dw.got | head -6)"
# (addr2line on the debuginfo: the skeletons and the symbols.)
# shellcheck disable=SC2086
addr2line -f -i -a -e srv/dw.debug $dwm >dwm.want
# shellcheck disable=SC2086
"$DSOSTORE" symbolize -e bin/dw -f -i -a --debug-dir "$tmp/none" $dwm >dwm.got 2>dwm.err
cmp -s dwm.want dwm.got || fail "symbolize bin/dw (main, no .dwo) differs from addr2line: $(diff dwm.want dwm.got | head -6)"
grep -q "split unit .* not found" dwm.err || fail "symbolize bin/dw: no warning for main's unit: $(cat dwm.err)"

tl_finish perf_split
