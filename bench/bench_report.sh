#!/usr/bin/env bash
# Report benchmark: `dsostore report` beside `perf report --stdio`
# on the same real recordings, both reading the recording and naming its
# samples from local debuginfo (no network).
#
#   bench/bench_report.sh [-q] [-r RUNS] [-s SECONDS] [-o ROWS] [-k]
#     -q  smoke run: a 1 s recording, 1 run
#     -r  runs of each tool, median (3)     -s  seconds recorded (6)
#     -o  only these rows (words of: small nocache cc ccgraph flat gcc
#         dwarf dwarfgraph folded), e.g. -o 'dwarf dwarfgraph'
#     -k  keep the work directory
#
# Recordings: a -g -O2 -fno-omit-frame-pointer program of its own, sampled
# with `perf record -F 20000` (about 20,000 samples a second), once with
# callchains (-g: both tools print the Children table; 6 s: over 100k
# samples) and once without; a small 0.3 s one, where start-up and symbol
# loading dominate, also with dsostore's cache of derived data switched
# off (DSOSTORE_SYMINDEX=0: /proc/kallsyms read as perf reads it, not this
# boot's cached kernel symbols); the -g recording again with the call
# graph under each row (perf report's default there: --children, graph,
# 0.5, caller; both tools draw it, the others are timed with -g none); and a
# real multi-process workload, gcc
# compiling and linking stb_image and stb_truetype (Debian's libstb-dev):
# gcc, cc1, as, collect2, ld and their libraries; and the program built
# -fomit-frame-pointer, recorded with --call-graph dwarf (perf's default
# 8 KiB of stack a sample) at -F 4000 for 4 s (1 s with -q): ~16k samples
# whose user stacks both tools unwind (perf 6.1 with libunwind, we with
# libdwfl), compared with perf report --no-inline (perf's default expands
# inline frames in callchains, which we do not: docs/oracles.md), with the
# Children table (-g none) and with the call graphs drawn.
# Then folded stacks (`report --folded`) and a flame graph (`flamegraph`)
# of the gcc and -g recordings beside perf's way to them, `perf script |
# stackcollapse-perf.pl` (FlameGraph's script is not in Debian 12: with
# none on PATH, `perf script` alone, the pipeline's larger process), RSS
# the goal: at most the pipeline's.
# perf 6.12 (scripts/peers' perf-6.12, when there) reads the same
# recordings with the same options: columns "6.12 ms", "6.12/ours",
# "6.12 MB" and its own "differ".
# Wall time around each process, peak RSS from /usr/bin/time.  The tables
# are compared row by row (all rows, sorted): differing rows are printed
# and counted (known: PLT stubs, perf's "@plt" or address where we say
# NAME@plt), not treated as a failure of the bench.
set -euo pipefail

src=${DS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/bench/benchlib.bash"
build=${DS_BUILD:-$src/build}
dsostore=${DSOSTORE:-$build/dsostore}
runs=3 secs=6 keep='' only='' dwarf_secs=4

while getopts qr:s:o:kh opt; do
	case $opt in
	q) runs=1 secs=1 dwarf_secs=1 ;;
	r) runs=$OPTARG ;;
	s) secs=$OPTARG ;;
	o) only=$OPTARG ;;
	k) keep=1 ;;
	*)
		bl_usage
		;;
	esac
done

bl_need gcc perf /usr/bin/time
[ -x "$dsostore" ] || die "no $dsostore: run make first"
work=$(mktemp -d "${TMPDIR:-/tmp}/ds-bench-report.XXXXXX")
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
cd "$work"
# perf's ~/.debug and ~/.perfconfig are the bench's own; no network.
export HOME=$work DEBUGINFOD_URLS=
unset PERF_BUILDID_DIR

perf record -N -e cpu-clock -o probe.data -- true >probe.log 2>&1 ||
	die "perf record -e cpu-clock is not permitted here: $(tail -2 probe.log)"

cat >w.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define BURN(name, n)                                                        \
	__attribute__((noinline)) unsigned long name(unsigned long x)         \
	{                                                                    \
		for (int i = 0; i < (n); i++)                                \
			x = x * 6364136223846793005UL + 1442695040888963407UL; \
		return x;                                                    \
	}
BURN(burn_1, 100) BURN(burn_2, 200) BURN(burn_3, 300) BURN(burn_4, 400)

__attribute__((noinline)) unsigned long mid(unsigned long x, int k)
{
	switch (k & 3) {
	case 0: return burn_1(x);
	case 1: return burn_2(x);
	case 2: return burn_3(x);
	default: return burn_4(x);
	}
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1);
	unsigned long h = 1;
	int k = 0;

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			h = mid(h, k++);
	printf("%lx\n", h);
	return 0;
}
EOF
gcc -O2 -g -fno-omit-frame-pointer -o w w.c || die "cannot build the workload"
gcc -O2 -g -fomit-frame-pointer -o wdw w.c || die "cannot build the workload"

# wanted ROW: whether the row is measured (-o)
wanted() { [ -z "$only" ] || [[ " $only " == *" $1 "* ]]; }

record() { # name seconds [perf option...]
	local name=$1 s=$2
	shift 2
	perf record -N -e cpu-clock -F 20000 "$@" -o "$name.data" -- ./w "$s" >"$name.rec" 2>&1 ||
		die "perf record $*: $(tail -2 "$name.rec")"
}
recs=""
if wanted small || wanted nocache; then
	record small 0.3 -g
	cp small.data nocache.data
fi
if wanted cc || wanted ccgraph || wanted folded; then
	record cc "$secs" -g
	ln -s cc.data ccgraph.data
fi
! wanted flat || record flat "$secs"
for r in small nocache cc ccgraph flat; do
	! wanted $r || recs="$recs $r"
done
stb=/usr/include/stb
if ! wanted gcc && ! wanted folded; then
	:
elif [ -r $stb/stb_image.h ] && [ -r $stb/stb_truetype.h ]; then
	printf '#define STB_IMAGE_IMPLEMENTATION\n#include <stb/stb_image.h>\n' >img.c
	printf '#define STB_TRUETYPE_IMPLEMENTATION\n#include <stb/stb_truetype.h>\n' >ttf.c
	printf 'int main(void) { return 0; }\n' >main.c
	perf record -N -e cpu-clock -F 20000 -g -o gcc.data -- \
		gcc -O2 -g -o stbprog img.c ttf.c main.c -lm >gcc.rec 2>&1 ||
		die "perf record of gcc: $(tail -2 gcc.rec)"
	! wanted gcc || recs="$recs gcc"
else
	echo "bench_report: no libstb-dev headers: the gcc recording is left out" >&2
fi
if wanted dwarf || wanted dwarfgraph; then
	perf record -N -e cpu-clock -F 4000 --call-graph dwarf -o dwarf.data -- ./wdw "$dwarf_secs" \
		>dwarf.rec 2>&1 || die "perf record --call-graph dwarf: $(tail -2 dwarf.rec)"
	ln -s dwarf.data dwarfgraph.data
	for r in dwarf dwarfgraph; do
		! wanted $r || recs="$recs $r"
	done
fi


# measure NAME CMD...: prints "wall_ms rss_mb" (medians; wall time from
# bash's microsecond clock, /usr/bin/time's is 10 ms) and keeps stdout
# of the last run in NAME.out.
measure() {
	local name=$1 i t0 t1
	shift
	for ((i = 0; i < runs; i++)); do
		t0=$EPOCHREALTIME
		/usr/bin/time -f '%M' -o "$name.time" "$@" >"$name.out" 2>"$name.err" ||
			die "$name failed: $(tail -3 "$name.err")"
		t1=$EPOCHREALTIME
		echo "$t0 $t1 $(cat "$name.time")" >>"$name.times"
	done
	awk '{printf "%.1f\n", ($2 - $1) * 1000}' "$name.times" | median | tr '\n' ' '
	awk '{print $3 / 1024}' "$name.times" | median
}

# The rows, sorted: perf's order of rows tied on their share is not ours
# (docs/oracles.md; the gcc recording has thousands of tied [unknown] and
# small rows), and the tests check the order (tests/cli/report_callgraph.sh).
rows() { grep '%' "$1" | grep -v '^#' | sort; }
# The table after its column headers, a row and the graph under it a
# line, sorted: the rows that differ, with their graphs (perf's order of
# rows tied on their Children share is not ours: docs/oracles.md).
table() {
	sed -n '/^# \(Overhead\|Children\)/,$p' "$1" | grep -v '^#' |
		awk '/^ +[0-9.]+%  +[^ ]/ && b != "" {print b; b = ""} NF {b = b $0 "|"} END {print b}' |
		sort
}

printf "dsostore report benchmark: %d run(s) each, median; %s CPUs, load average %s\n\n" \
	"$runs" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
# perf 6.12 (scripts/peers), when there: the same report timed too, its
# columns after perf 6.1's (the recordings are perf 6.1's; 6.12 reads them).
perf612=$(bl_peer perf-6.12)
printf "%-34s %9s %9s %9s %9s %7s %7s %6s" recording samples "perf ms" "ours ms" \
	"perf/ours" "perf MB" "ours MB" differ
[ -z "$perf612" ] || printf " %9s %9s %8s %6s" "6.12 ms" "6.12/ours" "6.12 MB" differ
echo
for rec in $recs; do
	derived=1 graph="-g none" cmpf=rows perfopt=""
	[ "$rec" != nocache ] || derived=0
	[ "$rec" != ccgraph ] && [ "$rec" != dwarfgraph ] || graph="" cmpf=table
	[ "${rec#dwarf}" = "$rec" ] || perfopt=--no-inline
	# shellcheck disable=SC2086 # $graph: no word or two
	read -r p_ms p_mb < <(measure "$rec.perf" perf report -i "$rec.data" --stdio \
		--sort dso,sym $graph $perfopt)
	# shellcheck disable=SC2086
	read -r d_ms d_mb < <(measure "$rec.ours" env DSOSTORE_SYMINDEX=$derived "$dsostore" \
		report --no-fetch --no-progress --sort dso,sym $graph "$rec.data")
	differ=$(diff <($cmpf "$rec.perf.out") <($cmpf "$rec.ours.out") | grep -c '^[<>]' || true)
	samples=$(awk '/^# Samples:/ {print $3; exit}' "$rec.ours.out")
	case $rec in
	small) what="0.3 s, -g (start-up dominates)" ;;
	nocache) what="  the same, kallsyms not cached" ;;
	cc) what="$secs s, -g (Children table)" ;;
	ccgraph) what="  the same, call graphs drawn" ;;
	flat) what="$secs s, no callchains" ;;
	gcc) what="gcc -O2 -g: 2 files, link, -g" ;;
	dwarf) what="$dwarf_secs s, --call-graph dwarf (Children)" ;;
	dwarfgraph) what="  the same, call graphs drawn" ;;
	esac
	[ -n "$p_ms" ] && [ -n "$d_ms" ] || die "$rec: no timings"
	ratio=$(awk -v p="$p_ms" -v d="$d_ms" 'BEGIN {printf "%.2f", (d > 0) ? p / d : 0}')
	printf "%-34s %9s %9.0f %9.0f %8sx %7.1f %7.1f %6s" "$what" "$samples" "$p_ms" \
		"$d_ms" "$ratio" "$p_mb" "$d_mb" "$differ"
	more=
	if [ -n "$perf612" ]; then
		# shellcheck disable=SC2086
		read -r q_ms q_mb < <(measure "$rec.perf612" "$perf612" report -i "$rec.data" --stdio \
			--sort dso,sym $graph $perfopt)
		differ612=$(diff <($cmpf "$rec.perf612.out") <($cmpf "$rec.ours.out") | grep -c '^[<>]' || true)
		ratio612=$(awk -v p="$q_ms" -v d="$d_ms" 'BEGIN {printf "%.2f", (d > 0) ? p / d : 0}')
		printf " %9.0f %8sx %8.1f %6s" "$q_ms" "$ratio612" "$q_mb" "$differ612"
		more=$(printf " perf612_ms=%.1f perf612_ratio=%sx perf612_rss_mb=%.1f differ612=%s" \
			"$q_ms" "$ratio612" "$q_mb" "$differ612")
	fi
	echo
	printf "BENCH report.%s value=%.1f unit=ms ratio=%sx perf_ms=%.1f rss_mb=%.1f perf_rss_mb=%.1f differ=%s%s\n" \
		"$rec" "$d_ms" "$ratio" "$p_ms" "$d_mb" "$p_mb" "$differ" "$more" >>bench.lines
	# Known: perf names PLT stubs (func@plt), we show their addresses.
	if [ "$differ" != 0 ]; then
		echo "  $rec: lines that differ (perf <, ours >):" >&2
		diff <($cmpf "$rec.perf.out") <($cmpf "$rec.ours.out") | head -6 >&2 || true
	fi
	if [ -n "$perf612" ] && [ "$differ612" != 0 ]; then
		echo "  $rec: lines that differ (perf 6.12 <, ours >):" >&2
		diff <($cmpf "$rec.perf612.out") <($cmpf "$rec.ours.out") | head -6 >&2 || true
	fi
done

# Folded stacks and flame graphs, beside perf's pipeline to them.
if wanted folded; then
	collapse=$(command -v stackcollapse-perf.pl || true)
	echo
	printf "%-34s %9s %9s %9s %9s %7s %7s\n" "folded stacks of" samples "perf ms" "ours ms" \
		"perf/ours" "perf MB" "ours MB"
	for rec in gcc cc; do
		[ -f "$rec.data" ] || continue
		if [ -n "$collapse" ]; then
			read -r p_ms p_mb < <(measure "$rec.fperf" sh -c \
				'perf script -i "$1" | "$2"' sh "$rec.data" "$collapse")
			pname="perf script | stackcollapse-perf.pl"
		else
			read -r p_ms p_mb < <(measure "$rec.fperf" perf script -i "$rec.data")
			pname="perf script (no stackcollapse-perf.pl here)"
		fi
		read -r f_ms f_mb < <(measure "$rec.fold" "$dsostore" report --no-fetch --no-progress \
			--folded "$rec.data")
		read -r g_ms g_mb < <(measure "$rec.flame" "$dsostore" flamegraph --no-fetch "$rec.data")
		samples=$(awk '{ n += $NF } END { print n + 0 }' "$rec.fold.out")
		for k in folded flamegraph; do
			if [ $k = folded ]; then d_ms=$f_ms d_mb=$f_mb; else d_ms=$g_ms d_mb=$g_mb; fi
			ratio=$(awk -v p="$p_ms" -v d="$d_ms" 'BEGIN {printf "%.2f", (d > 0) ? p / d : 0}')
			printf "%-34s %9s %9.0f %9.0f %8sx %7.1f %7.1f\n" "$rec: $k" "$samples" "$p_ms" \
				"$d_ms" "$ratio" "$p_mb" "$d_mb"
			printf "BENCH report.%s.%s value=%.1f unit=MB goal_max=%.1f met=%s ms=%.1f perf_ms=%.1f perf=\"%s\"\n" \
				"$k" "$rec" "$d_mb" "$p_mb" "$(awk -v a="$d_mb" -v b="$p_mb" 'BEGIN { print (a <= b ? "yes" : "no") }')" \
				"$d_ms" "$p_ms" "$pname" >>bench.lines
		done
	done
fi
echo
cat bench.lines
[ -z "$keep" ] || echo "work directory kept: $work"
