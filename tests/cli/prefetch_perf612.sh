#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The seed scenario against the newest perf (issue 25): a workload of
# stripped DSOs whose debuginfo only a debuginfod server has, recorded with
# perf 6.12 (scripts/peers' perf-6.12, built with debuginfod).
# - perf 6.12 alone, DEBUGINFOD_URLS naming the server and its build-id
#   cache empty: every row of the workload's DSOs is an address, and the
#   server is asked nothing (perf report's symbol loading does not use
#   debuginfod; docs/oracles.md, "Newer peers");
# - `dsostore prefetch --perf-cache`, then perf 6.12 offline (no
#   DEBUGINFOD_URLS, the server stopped): no row of those DSOs is an
#   address, and each has a row.
# Nothing here depends on where samples land (tests/gen/seedwork.bash):
# each DSO's own code is one static function, spin (no other symbol in its
# .text but the CRT's helpers, which run at load time and are named in the
# debuginfo too), run for a span of the process's CPU clock, so each DSO
# has at least one sample (a floor: 40 ms of CPU at perf's default 4000
# Hz), and every sample in one of them is in code only the debuginfo
# names.  The check is
# "no hex address in the rows of these DSOs", not which function got what.
# The server is the test server dsserver (127.0.0.1 only), which counts the
# requests it gets.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
tl_sanitizer_exitcodes
: "${DSOSTORE:?DSOSTORE must name the CLI}"
perf=$(tl_peer perf-6.12) || exit $?
tl_need gcc objcopy strip eu-readelf curl
tl_need_dsserver
tl_tmpdir dsprefetch612
cd "$tmp" || exit 2
export HOME=$tmp/home # perf's ~/.debug and ~/.perfconfig: ours
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
tl_perf_or_skip "$perf"

# ---------------------------------------------------------- workload
# tests/gen/seedwork.bash: bin/w and NLIB libraries, stripped, each one's
# code one static function, spin; srv/NAME.debug their debuginfo.
NLIB=4
libs=()
for ((k = 0; k < NLIB; k++)); do
	libs+=("libl$k.so")
done
bash "$DS_SRC/tests/gen/seedwork.bash" $NLIB "$tmp" 2>build.err || {
	fail "cannot build the workload: $(head -5 build.err)"
	tl_finish prefetch_perf612
}
dsos=(w "${libs[@]}")
declare -A bid
for f in "${dsos[@]}"; do
	bid[$f]=$(tl_build_id "bin/$f")
	[ -n "${bid[$f]}" ] || fail "no build ID in bin/$f"
	# spin is named in the debug file and nowhere in the binary
	eu-readelf -s "srv/$f.debug" | grep -qw spin || fail "srv/$f.debug has no spin"
	! eu-readelf -s "bin/$f" 2>/dev/null | grep -qw spin || fail "bin/$f still names spin"
done

# ---------------------------------------------------------- server
tl_start_dsserver DSP dsserver --max-runtime 300 "$tmp/srv" || tl_finish prefetch_perf612
url=http://127.0.0.1:$DSP
requests() { # debuginfo requests dsserver saw, all build IDs
	curl -s --max-time 5 "$url/control/stats?prefix=/buildid/" | awk '{print $1 + 0}'
}

# ------------------------------------------------------------ record
"$perf" record -N -e cpu-clock -o w.data -- bin/w >rec.out 2>rec.err ||
	fail "perf-6.12 record: $(tail -3 rec.err)"

# rows NAME: perf 6.12's report of w.data (--sort dso,sym; NAME.report,
# NAME.err) with the environment given; prints "DSO SYMBOL" for every row
# of the workload's DSOs.
rows() {
	local name=$1
	shift
	env "$@" "$perf" report -i w.data --stdio --sort dso,sym >"$name.report" 2>"$name.err"
	grep -q '^# Samples' "$name.report" || fail "$name: perf printed no table: $(head -3 "$name.err")"
	awk -v list=" ${dsos[*]} " '/^#/ || NF < 4 {next}
		index(list, " " $2 " ") {s = $4; for (i = 5; i <= NF; i++) s = s " " $i; print $2, s}' "$name.report"
}
# each_dso NAME: every DSO of the workload has a row in NAME.rows.
each_dso() {
	local f
	for f in "${dsos[@]}"; do
		grep -q "^$f " "$1.rows" || fail "$1: no row of $f (it ran 40 ms of CPU): $(grep -c . "$1.rows") rows"
	done
}

tl_case "perf 6.12 alone"
before=$(requests)
rows alone HOME="$HOME" DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$tmp/perfclient" >alone.rows
each_dso alone
# What perf 6.12 shows (6.12.x of bookworm-backports): each sample's
# address, e.g. "libl0.so [.] 0x000000000000110f"; no row names anything
# but a PLT stub (the program's clock_gettime@plt, should a sample land
# there: perf names stubs from the dynamic relocations, which stripping
# keeps) or the PLT's header (".plt": a sample during lazy binding).
named=$(awk '$2 !~ /^0x[0-9a-f]+$/ && $2 !~ /@plt$/ && $2 != ".plt"' alone.rows)
[ -z "$named" ] || fail "perf 6.12 named rows of stripped DSOs without their debuginfo: $named"
[ "$(requests)" = "$before" ] || fail "perf report asked the server ($(($(requests) - before)) requests)"
tl_case_end

tl_case "prefetch --perf-cache"
before=$(requests)
DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$tmp/cache \
	tl_prefetch pf --perf-cache --perf-buildid-dir "$HOME/.debug" w.data
[ "$rc" = 0 ] || fail "exit $rc: $(cat pf.err)"
[ "$(tl_summary_field pf fetched)" = ${#dsos[@]} ] ||
	fail "fetched $(tl_summary_field pf fetched), want ${#dsos[@]}: $(cat pf.out)"
[ "$(tl_summary_field pf "into perf's cache")" = ${#dsos[@]} ] ||
	fail "$(tl_summary_field pf "into perf's cache") into perf's cache, want ${#dsos[@]}: $(cat pf.out)"
for f in "${dsos[@]}"; do
	cmp -s "cache/${bid[$f]}/debuginfo" "srv/$f.debug" || fail "$f: the cached debuginfo is not the server's"
	[ "$(curl -s --max-time 5 "$url/control/stats?url=/buildid/${bid[$f]}/debuginfo")" = 1 ] ||
		fail "$f: not asked for once"
done
tl_case_end

tl_case "perf 6.12 offline"
tl_stop "${pids[-1]}" 5 || true # the server: offline means offline
rows offline -u DEBUGINFOD_URLS HOME="$HOME" >offline.rows
each_dso offline
hex=$(awk '$2 ~ /^0x[0-9a-f]+$/' offline.rows)
[ -z "$hex" ] || fail "after prefetch --perf-cache perf 6.12 still shows addresses: $(tr '\n' ';' <<<"$hex")"
# (the names: the workload's spin, or the CRT's helpers if a sample landed
# in one while the library was loaded: both from the debug files)
tl_case_end

tl_finish prefetch_perf612
