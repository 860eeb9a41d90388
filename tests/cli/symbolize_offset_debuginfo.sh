#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dsostore symbolize --file-offset` by build ID when this machine has only
# the debuginfo (a fixed bug): a debug file's PT_LOAD headers have
# p_filesz 0 and rewritten p_offset (objcopy --only-keep-debug), so file
# offsets must go through the executable's headers.  Before the fix every
# offset said "outside every loadable segment".
#
#   local: the debuginfo in a .build-id dir, the stripped binary gone: no
#          answer can be right (the offsets are unknowable) and none is
#          given; then the stripped executable put where a build-id dir
#          keeps it (.build-id/xx/rest): answers.
#   debuginfod: the real elfutils debuginfod serving only the debuginfo and
#          the stripped executable; no local file at all.  The executable
#          is fetched in the same batch as the debuginfo, once however
#          many offsets are asked (the server's /metrics count requests).
#
# Expected answers: binutils addr2line on the unstripped original at the
# virtual address that readelf's program headers give for each offset;
# the offsets of every function nm lists (PIE and non-PIE, whose offsets
# and addresses differ by 0x400000).
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
export PATH=$PATH:/usr/sbin:/sbin

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc objcopy strip nm readelf addr2line debuginfod curl unshare ip
tl_netns_reexec --skip "cannot create a network namespace for the real debuginfod" "$0" "$@"
tl_tmpdir dsoffdbg
tl_sanitizer_exitcodes
export HOME=$tmp/home PERF_BUILDID_DIR=
mkdir -p "$HOME" "$tmp/srv" "$tmp/dbg"
unset DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE

cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
static inline int sq(int x) { return x * x; }
__attribute__((noinline)) int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(i); return s; }
__attribute__((noinline)) int other(int n) { return work(n) + atoi("3"); }
int main(int argc, char **argv) { (void)argv; printf("%d\n", other(argc * 100)); return 0; }
EOF
gcc -O2 -g -fPIE -pie -o "$tmp/pie" "$tmp/prog.c" || fail "gcc -pie"
gcc -O2 -g -no-pie -o "$tmp/nopie" "$tmp/prog.c" || fail "gcc -no-pie"
[ "$fails" -eq 0 ] || exit 1

# vaddr_to_offset FILE VADDR (hex, no 0x): the file offset, by readelf -l.
vaddr_to_offset() {
	local a=$((16#$2)) t off va pa fsz rest
	while read -r t off va pa fsz rest; do
		[ "$t" = LOAD ] || continue
		if ((a >= va && a < va + fsz)); then
			printf '0x%x\n' $((a - va + off))
			return
		fi
	done < <(readelf -lW "$1")
}
# code_filesz FILE: p_filesz of its executable PT_LOAD.
code_filesz() {
	readelf -lW "$1" | while read -r t off va pa fsz msz flg rest; do
		[ "$t" = LOAD ] && [[ "$flg $rest" == *E* ]] && echo $((fsz)) && break
	done
}

# Per program: the addresses (function starts + 4, inside each function)
# as offsets, and addr2line's answers on the original.
for p in pie nopie; do
	bid=$(readelf -n "$tmp/$p" | awk '/Build ID/ {print $3}')
	eval "bid_$p=$bid"
	: >"$tmp/$p.offs"
	: >"$tmp/$p.vaddrs"
	nm "$tmp/$p" | awk '$2 == "T" || $2 == "t" {print $1}' | sort -u | while read -r v; do
		v=$(printf '%x' $((16#$v + 4)))
		o=$(vaddr_to_offset "$tmp/$p" "$v")
		[ -n "$o" ] || continue
		echo "$bid $o" >>"$tmp/$p.offs"
		echo "0x$v" >>"$tmp/$p.vaddrs"
	done
	[ -s "$tmp/$p.offs" ] || fail "$p: no function offsets"
	addr2line -f -i -e "$tmp/$p" <"$tmp/$p.vaddrs" >"$tmp/$p.want" || fail "addr2line $p"
	objcopy --only-keep-debug "$tmp/$p" "$tmp/$p.debug" || fail "objcopy $p"
	strip -o "$tmp/$p.stripped" "$tmp/$p" || fail "strip $p"
	# A regression test must be able to fail: the debug file's own
	# headers must not give these offsets.
	[ "$(code_filesz "$tmp/$p.debug")" = 0 ] ||
		fail "$p.debug: its code segment has file bytes; the test tests nothing"
done
[ "$fails" -eq 0 ] || exit 1
sym() { # expected-name options... (stdin: lines)
	"$DSOSTORE" symbolize -f -i --file-offset --perf-buildid-dir "" "${@:2}" >"$tmp/got" \
		2>"$tmp/err"
}

# ---- local: debuginfo alone, then with the executable beside it
for p in pie nopie; do
	eval "bid=\$bid_$p"
	d=$tmp/dbg/.build-id/${bid:0:2}
	mkdir -p "$d"
	cp "$tmp/$p.debug" "$d/${bid:2}.debug"
	tl_case "local $p: debuginfo alone"
	DEBUGINFOD_URLS= sym x --debug-dir "$tmp/dbg" <"$tmp/$p.offs"
	grep -q "outside every loadable segment" "$tmp/err" ||
		fail "no error for offsets nothing here can translate: $(head -2 "$tmp/err")"
	tl_case_end
	tl_case "local $p: debuginfo + executable in the build-id dir"
	cp "$tmp/$p.stripped" "$d/${bid:2}"
	DEBUGINFOD_URLS= sym x --debug-dir "$tmp/dbg" <"$tmp/$p.offs" ||
		fail "exit $?: $(head -3 "$tmp/err")"
	diff "$tmp/$p.want" "$tmp/got" >"$tmp/diff" || fail "differs from addr2line: $(head -6 "$tmp/diff")"
	tl_case_end
done

# ---- debuginfod: the server has the debuginfo and the stripped binary
cp "$tmp/pie.debug" "$tmp/pie.stripped" "$tmp/nopie.debug" "$tmp/nopie.stripped" "$tmp/srv/"
P=8011
tl_start_debuginfod $P "$tmp/srv" || exit 1
export DEBUGINFOD_URLS=http://127.0.0.1:$P DEBUGINFOD_CACHE_PATH=$tmp/cache
reqs() { tl_metric $P "http_requests_total{type=\"$1\"}"; }

tl_case "debuginfod: both programs, one run"
cat "$tmp/pie.offs" "$tmp/nopie.offs" "$tmp/pie.offs" >"$tmp/all.offs"
cat "$tmp/pie.want" "$tmp/nopie.want" "$tmp/pie.want" >"$tmp/all.want"
sym x --debug-dir "$tmp/empty" <"$tmp/all.offs" || fail "exit $?: $(head -3 "$tmp/err")"
diff "$tmp/all.want" "$tmp/got" >"$tmp/diff" || fail "differs from addr2line: $(head -6 "$tmp/diff")"
[ "$(reqs executable)" = 2 ] || fail "$(reqs executable) executable requests, want 2 (one per build ID)"
[ "$(reqs debuginfo)" = 2 ] || fail "$(reqs debuginfo) debuginfo requests, want 2"
tl_case_end

tl_case "debuginfod: a second run takes both from the cache"
sym x --debug-dir "$tmp/empty" <"$tmp/nopie.offs" || fail "exit $?: $(head -3 "$tmp/err")"
diff "$tmp/nopie.want" "$tmp/got" >"$tmp/diff" || fail "differs: $(head -6 "$tmp/diff")"
[ "$(reqs executable)" = 2 ] || fail "the executable was asked again"
tl_case_end

tl_case "debuginfod: vaddrs need no executable"
rm -rf "$tmp/cache"
P2=8012
mkdir -p "$tmp/srv2"
cp "$tmp/pie.debug" "$tmp/srv2/"
tl_start_debuginfod $P2 "$tmp/srv2" || exit 1
sed "s/^/$bid_pie /" "$tmp/pie.vaddrs" | DEBUGINFOD_URLS=http://127.0.0.1:$P2 \
	"$DSOSTORE" symbolize -f -i --perf-buildid-dir "" >"$tmp/got" 2>"$tmp/err" ||
	fail "exit $?: $(head -3 "$tmp/err")"
diff "$tmp/pie.want" "$tmp/got" >"$tmp/diff" || fail "differs: $(head -6 "$tmp/diff")"
[ "$(tl_metric $P2 'http_requests_total{type="executable"}')" = 0 ] ||
	fail "an executable was asked for virtual addresses"
tl_case_end

tl_finish symbolize_offset_debuginfo
