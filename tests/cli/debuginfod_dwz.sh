#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dwz'd programs whose debuginfo and alt file are only behind the real
# elfutils debuginfod (Debian's 0.188), over a corpus built here: two
# stripped programs sharing an inlined header whose DIEs `dwz -m` moved
# into one alt file, once with the alt file's name pointing nowhere (`-M
# /nonexistent/...`: found by build ID only, as on a machine without the
# debug packages) and once with `dwz -r` (a .gnu_debugaltlink relative to
# the debug file's directory, ".dwz/common.debug", dwz 0.15's -r).
#   - What the server does with the alt file: it indexes it as debuginfo
#     and serves it by its own build ID, byte for byte (curl against the
#     file); as an executable it has nothing (404).
#   - `dsostore symbolize` of every byte of both programs' functions, in
#     one stream, from an empty cache: the answers of addr2line on the
#     programs before dwz and before stripping (the oracle: addr2line 2.40
#     misreads dwz'd files, docs/oracles.md), inline frames named in the
#     alt file included; the server is asked for 3 debuginfos (the two
#     programs' and the alt file's, once for both).
#   - The same under a memory budget of one byte, one program per batch
#     and the lines alternating between them: the alt file is closed with
#     its last reader and opened again (the store's debug log says so),
#     from the cache (no request), and every answer is the same.
#   - dwz -r in perf's cache: `prefetch --perf-cache` puts the alt file
#     where the relative name leads from the cached debug file, and
#     eu-addr2line on that file reads it.
#
# Debian's 0.188 server listens on every address and refuses -p 0, so this
# script re-runs itself inside a network namespace with only loopback up.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
export PATH=$PATH:/usr/sbin:/sbin

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need debuginfod gcc objcopy strip dwz addr2line eu-addr2line nm curl eu-readelf cmp unshare ip \
	python3
tl_netns_reexec --skip "cannot create a network namespace (unshare -n / -rn failed); the real \
debuginfod 0.188 listens on every address, so it is only run isolated" "$0" "$@"
tl_tmpdir dsdwz
tl_sanitizer_exitcodes
cd "$tmp" || exit 2
# The answers come from the DWARF each time (no saved index), so the alt
# file is read whenever an index is built.
export DSOSTORE_SYMINDEX=0
P=8004

# ---------------------------------------------------------- corpus
cat >common.h <<'EOF'
static inline __attribute__((always_inline)) unsigned long cm_mix(unsigned long x)
{
	for (int i = 0; i < 300; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}
static inline __attribute__((always_inline)) unsigned long cm_twice(unsigned long x)
{
	return cm_mix(cm_mix(x) + 3);
}
EOF
# set dwz-options...: programs $set/a and $set/b, unstripped in
# plain/$set, stripped in bin/$set, their debuginfo dwz'd in srv/$set.
build_set() {
	local set=$1 p
	shift
	mkdir -p "plain/$set" "bin/$set" "srv/$set"
	for p in a b; do
		cat >"$set-$p.c" <<EOF
#include <stdio.h>
#include "common.h"
__attribute__((noinline)) unsigned long ${p}_spin(unsigned long x)
{
	return cm_twice(x) + 1;
}
int main(int argc, char **argv)
{
	(void)argv;
	printf("%lx\n", ${p}_spin((unsigned long)argc));
	return 0;
}
EOF
		gcc -O2 -g -Wl,--build-id=sha1 -o "plain/$set/$p" "$set-$p.c" &&
			objcopy --only-keep-debug "plain/$set/$p" "srv/$set/$p.debug" &&
			strip --strip-all -o "bin/$set/$p" "plain/$set/$p" || return 1
	done
	mkdir -p "srv/$set/.dwz" && (cd "srv/$set" && dwz "$@" a.debug b.debug)
}
build_set m -m common.debug -M /nonexistent/.dwz/common.debug || {
	fail "building the dwz -m set failed"
	exit 1
}
build_set r -m .dwz/common.debug -r || {
	fail "building the dwz -r set failed"
	exit 1
}
declare -A alt=([m]=srv/m/common.debug [r]=srv/r/.dwz/common.debug)
link=$(readelf --string-dump=.gnu_debugaltlink srv/r/a.debug | awk '$1 == "[" && $2 == "0]" {print $3}')
[ "$link" = .dwz/common.debug ] || fail "dwz -r: .gnu_debugaltlink is '$link', want .dwz/common.debug"
for s in m r; do
	[ -n "$(tl_build_id "${alt[$s]}")" ] || fail "$s: the alt file has no build ID"
	readelf -S "srv/$s/a.debug" | grep -q gnu_debugaltlink || fail "$s: a.debug names no alt file"
done
[ "$fails" -eq 0 ] || exit 1

# ---------------------------------------------------------- server
tl_start_debuginfod $P "$tmp/srv" || exit 1
export DEBUGINFOD_URLS=http://127.0.0.1:$P
unset DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME \
	DEBUGINFOD_HEADERS_FILE DEBUGINFOD_RETRY_LIMIT DEBUGINFOD_TIMEOUT
requests() { tl_metric $P 'http_requests_total{type="debuginfo"}'; }

for s in m r; do
	b=$(tl_build_id "${alt[$s]}")
	code=$(curl -s -o "alt-$s.got" -w '%{http_code}' "$DEBUGINFOD_URLS/buildid/$b/debuginfo")
	[ "$code" = 200 ] || fail "$s: the server answers $code for the alt file's debuginfo"
	cmp -s "alt-$s.got" "${alt[$s]}" || fail "$s: the alt file served differs from ${alt[$s]}"
	code=$(curl -s -o /dev/null -w '%{http_code}' "$DEBUGINFOD_URLS/buildid/$b/executable")
	[ "$code" = 404 ] || fail "$s: the server answers $code for the alt file as an executable"
done

# ---------------------------------------------------------- symbolize
# lines SET ORDER: "bin/SET/PROG ADDR" for every byte of a_spin and
# b_spin, a's then b's (ORDER=seq) or alternating (ORDER=alt), into
# SET.ORDER.in; addr2line's answers on plain/SET/PROG, in the same order,
# into SET.ORDER.want.
lines() {
	python3 - "$1" "$2" <<'EOF' || fail "$1: cannot make the lines"
import subprocess, sys
s, order = sys.argv[1:3]
per = {}
for p in "ab":
    out = subprocess.run(["nm", "-S", "plain/%s/%s" % (s, p)], capture_output=True,
                         text=True, check=True).stdout
    lo, n = next((int(x[0], 16), int(x[1], 16)) for x in (l.split() for l in out.splitlines())
                 if len(x) == 4 and x[3] == p + "_spin")
    addrs = list(range(lo, lo + n))
    a2l = subprocess.run(["addr2line", "-f", "-i", "-a", "-e", "plain/%s/%s" % (s, p)],
                         input="".join("0x%x\n" % a for a in addrs), capture_output=True,
                         text=True, check=True).stdout
    blocks = []
    for line in a2l.splitlines(keepends=True):
        if line.startswith("0x"):
            blocks.append("")
        blocks[-1] += line
    assert len(blocks) == len(addrs)
    per[p] = [("bin/%s/%s 0x%x\n" % (s, p, a), blk) for a, blk in zip(addrs, blocks)]
if order == "seq":
    items = per["a"] + per["b"]
else:
    items = [x for pair in zip(per["a"], per["b"]) for x in pair]
    n = min(len(per["a"]), len(per["b"]))
    items += per["a"][n:] + per["b"][n:]
with open("%s.%s.in" % (s, order), "w") as f:
    f.write("".join(i for i, _ in items))
with open("%s.%s.want" % (s, order), "w") as f:
    f.write("".join(w for _, w in items))
EOF
}

# run NAME SET ORDER OPTIONS...: symbolize SET.ORDER.in into NAME.out
# (stderr NAME.err), compared with SET.ORDER.want.
run() {
	local name=$1 s=$2 order=$3 rc=0
	shift 3
	"$DSOSTORE" symbolize -f -i -a --debug-dir "$tmp/none" --perf-buildid-dir "" "$@" \
		<"$s.$order.in" >"$name.out" 2>"$name.err" || rc=$?
	[ "$rc" -eq 0 ] || fail "$name: exit $rc: $(grep -v '^dsostore: \(look\|found\|/\)' "$name.err" | head -3)"
	if grep -q -E 'Sanitizer|runtime error' "$name.err"; then
		fail "$name: sanitizer report: $(grep -m3 -E 'Sanitizer|runtime error' "$name.err")"
	fi
	cmp -s "$s.$order.want" "$name.out" ||
		fail "$name: differs from addr2line before dwz: $(diff "$s.$order.want" "$name.out" | head -6)"
	grep -q -x cm_mix "$name.out" || fail "$name: no cm_mix frame (its DIEs are in the alt file)"
}

for s in m r; do
	lines $s seq
	lines $s alt
	tl_case "$s: from the server"
	export DEBUGINFOD_CACHE_PATH=$tmp/cache-$s
	before=$(requests)
	run $s-first $s seq
	n=$(($(requests) - before))
	[ "$n" = 3 ] || fail "$s: $n debuginfo requests, want 3 (a, b and their alt file once)"
	for b in $(tl_build_id "bin/$s/a") $(tl_build_id "bin/$s/b") $(tl_build_id "${alt[$s]}"); do
		[ -s "cache-$s/$b/debuginfo" ] || fail "$s: $b not in the debuginfod cache"
	done
	tl_case_end "[$(grep -c '^0x' $s-first.out) addresses]" || true

	tl_case "$s: a budget of one byte"
	before=$(requests)
	run $s-budget $s alt --batch 1 --mem-budget 1 -v
	[ "$(requests)" = "$before" ] || fail "$s: the budget run asked the server again"
	opens=$(grep -c 'dwz alt file .*: open' $s-budget.err)
	evicted=$(grep -c 'evicted debuginfo' $s-budget.err)
	[ "$opens" -ge 2 ] && [ "$evicted" -ge 1 ] ||
		fail "$s: the alt file was opened $opens times and $evicted debuginfos evicted: want it closed and opened again"
	tl_case_end "[alt file opened $opens times, $evicted evictions]" || true
done

# dwz -r in perf's cache: `prefetch --perf-cache` of a recording of the
# r programs (tests/gen/perfgen.py: their build IDs in its header) puts the
# alt file where the relative name leads from the cached debug file, as
# libdw (and binutils, perf's addr2line) look for it; eu-addr2line on
# that file names cm_mix from the alt file, and does not once the link
# is moved away (so the link is what counts).
tl_case "r: prefetch --perf-cache"
export DEBUGINFOD_CACHE_PATH=$tmp/cache-pc
python3 "$DS_SRC/tests/gen/perfgen.py" --dsos-from bin/r --out r.data >perfgen.out 2>&1 ||
	fail "perfgen: $(tail -2 perfgen.out)"
tl_prefetch pc --perf-cache --perf-buildid-dir "$tmp/pc" r.data
[ "$rc" -eq 0 ] || fail "prefetch: exit $rc: $(head -3 pc.err)"
[ "$(tl_summary_field pc "dwz alt files")" = 1 ] ||
	fail "prefetch: $(tl_summary_field pc "dwz alt files") dwz alt files, want 1: $(cat pc.out)"
abid=$(tl_build_id bin/r/a)
entry=$(readlink -f "$tmp/pc/.build-id/${abid:0:2}/${abid:2}")
# The first byte of a_spin whose frames include cm_mix (addr2line -i on
# the plain build says which).
addr=$(awk '/^0x/ {a = $1} $0 == "cm_mix" {print a; exit}' r.seq.want)
[ -n "$addr" ] || fail "no address of r/a has a cm_mix frame"
if [ ! -e "$entry/.dwz/common.debug" ]; then
	fail "no $entry/.dwz/common.debug: $(find "$tmp/pc" | head -20)"
elif ! cmp -s "$entry/.dwz/common.debug" "${alt[r]}"; then
	fail "$entry/.dwz/common.debug is not the alt file"
else
	# (Without DEBUGINFOD_URLS: libdw would fetch the alt file itself.)
	with=$(env -u DEBUGINFOD_URLS eu-addr2line -f -i -e "$entry/debug" "$addr" 2>&1)
	mv "$entry/.dwz" "$tmp/moved-dwz"
	without=$(env -u DEBUGINFOD_URLS eu-addr2line -f -i -e "$entry/debug" "$addr" 2>&1)
	mv "$tmp/moved-dwz" "$entry/.dwz"
	grep -q "^cm_mix inlined" <<<"$with" || fail "eu-addr2line on the cached debug file: no cm_mix: $with"
	! grep -q "^cm_mix inlined" <<<"$without" || fail "eu-addr2line names cm_mix without the alt file: the case proves nothing"
fi
tl_case_end || true

tl_finish debuginfod_dwz
