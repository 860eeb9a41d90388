#!/usr/bin/env bash
# The seed scenario against the newest perf (issue 25): a workload of
# stripped DSOs whose debuginfo only a slow debuginfod server has,
# recorded with perf 6.12; the time to a report that names its functions.
#
#   bench/bench_seed612.sh [-q] [-n LIBS] [-l MS] [-r RUNS] [-k]
#     -q  smoke run: 5 libraries, 1 run
#     -n  libraries (20; and the program: LIBS + 1 DSOs)
#     -l  latency dsserver adds to every request, ms (50)
#     -r  runs of each row, median (3)
#     -k  keep the work directory
#
# The workload is tests/gen/seedwork.bash's (each DSO's code one static
# function, stripped, its debuginfo served by dsserver with the latency
# added).  Rows, each from an empty perf build-id cache (~/.debug: HOME is
# the work directory) and an empty debuginfod cache:
#   A  perf 6.12 alone: `perf report --stdio --sort dso,sym`, with
#      DEBUGINFOD_URLS naming the server (perf report asks it nothing:
#      docs/oracles.md);
#   B  `dsostore prefetch --perf-cache` of the recording, then perf 6.12
#      offline (no DEBUGINFOD_URLS): the same report; B1 and B2 are its
#      two parts;
#   C  perf 6.12's own way to the debuginfo: `perf buildid-cache
#      --debuginfod=URL --add FILE` for each DSO in turn (what `perf record
#      --debuginfod` does at the end of a recording), then the report.
# "named" counts the workload's DSOs whose rows in that report are all
# names (no 0x address): the goal is every one of them.  The time is wall
# time from the first process's start to the report's end.
set -euo pipefail

src=${DS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/bench/benchlib.bash"
build=${DS_BUILD:-$src/build}
dsostore=${DSOSTORE:-$build/dsostore}
dsserver=${DSSERVER:-$build/dsserver}
nlib=20 latency=50 runs=3 keep=''

while getopts qn:l:r:kh opt; do
	case $opt in
	q) nlib=5 runs=1 ;;
	n) nlib=$OPTARG ;;
	l) latency=$OPTARG ;;
	r) runs=$OPTARG ;;
	k) keep=1 ;;
	*)
		bl_usage
		;;
	esac
done

bl_need gcc objcopy strip curl
perf=$(bl_peer perf-6.12)
[ -n "$perf" ] || {
	echo "bench_seed612: no perf-6.12 (scripts/peers unpacks it): nothing measured" >&2
	exit 0
}
[ -x "$dsostore" ] && [ -x "$dsserver" ] || die "no $dsostore or $dsserver: run make first"
work=$(mktemp -d "${TMPDIR:-/tmp}/ds-bench-seed612.XXXXXX")
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	[ -n "$keep" ] && echo "work directory kept: $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE PERF_BUILDID_DIR \
	http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
load_at_start=$(cut -d' ' -f1 /proc/loadavg)

bash "$src/tests/gen/seedwork.bash" "$nlib" "$work" 2>build.err || die "cannot build: $(head -3 build.err)"
dsos=(w)
for ((k = 0; k < nlib; k++)); do
	dsos+=("libl$k.so")
done
HOME=$work/rechome "$perf" record -N -e cpu-clock -o w.data -- bin/w >rec.out 2>&1 ||
	die "perf-6.12 record: $(tail -3 rec.out)"

"$dsserver" --port-file port --die-with-parent --max-runtime 1800 --fault "*:latency=$latency" srv \
	2>server.err &
server_pid=$!
for ((i = 0; i < 200; i++)); do
	[ -s port ] && break
	kill -0 "$server_pid" 2>/dev/null || die "dsserver died: $(head -3 server.err)"
	sleep 0.05
done
[ -s port ] || die "dsserver did not start"
url=http://127.0.0.1:$(cat port)
requests() { curl -s --noproxy '*' "$url/control/stats" | awk '$1 == "requests" {print $2}'; }

# report HOME OUT [ENV...]: perf 6.12's table of w.data, HOME's ~/.debug.
report() {
	local home=$1 out=$2
	shift 2
	env "$@" HOME="$home" "$perf" report -i w.data --stdio --sort dso,sym >"$out" 2>"$out.err" ||
		die "perf-6.12 report: $(tail -3 "$out.err")"
}
# named OUT: how many of the workload's DSOs have rows, all of them names.
named() {
	awk -v list=" ${dsos[*]} " '/^#/ || NF < 4 || !index(list, " " $2 " ") {next}
		{seen[$2] = 1} $4 ~ /^0x[0-9a-f]+$/ {hex[$2] = 1}
		END {for (d in seen) n += !(d in hex); print n + 0}' "$1"
}
ms() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", (b - a) * 1000}'; }

for ((r = 0; r < runs; r++)); do
	for row in A B C; do
		home=$work/home.$row.$r
		mkdir -p "$home"
		before=$(requests)
		t0=$EPOCHREALTIME
		case $row in
		A)
			report "$home" A.out DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$home/cache"
			t1=$EPOCHREALTIME
			;;
		B)
			HOME=$home DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$home/cache \
				"$dsostore" prefetch --no-progress --perf-cache w.data >B.prefetch 2>&1 ||
				die "prefetch: $(tail -3 B.prefetch)"
			t1=$EPOCHREALTIME
			report "$home" B.out -u DEBUGINFOD_URLS
			;;
		C)
			for f in "${dsos[@]}"; do
				HOME=$home DEBUGINFOD_URLS="" DEBUGINFOD_CACHE_PATH=$home/cache \
					"$perf" buildid-cache --debuginfod="$url" --add "bin/$f" >C.add 2>&1 ||
					die "perf-6.12 buildid-cache --add bin/$f: $(tail -3 C.add)"
			done
			t1=$EPOCHREALTIME
			report "$home" C.out -u DEBUGINFOD_URLS
			;;
		esac
		t2=$EPOCHREALTIME
		echo "$(ms "$t0" "$t2") $(ms "$t0" "$t1") $(ms "$t1" "$t2") $(($(requests) - before)) $(named $row.out)" \
			>>"t.$row"
	done
done

n=${#dsos[@]}
printf "seed scenario, perf 6.12: %d stripped DSOs (%s), %d ms per request; %s CPUs, load %s at start; median of %d run(s)\n\n" \
	"$n" "$("$perf" --version)" "$latency" "$(nproc)" "$load_at_start" "$runs"
printf "%-58s %9s %9s %9s %8s %7s\n" row "total ms" "fetch ms" "report ms" requests named
line() { # ROW NAME
	local tot fetch rep
	tot=$(median_of "t.$1" 1) fetch=$(median_of "t.$1" 2) rep=$(median_of "t.$1" 3)
	[ "$1" != A ] || fetch=- rep=$tot
	printf "%-58s %9s %9s %9s %8s %4s/%s\n" "$2" "$tot" "$fetch" "$rep" "$(tail -1 "t.$1" | cut -d' ' -f4)" \
		"$(tail -1 "t.$1" | cut -d' ' -f5)" "$n"
	echo "BENCH seed612.$1 value=$tot unit=ms fetch_ms=$fetch report_ms=$rep requests=$(tail -1 "t.$1" | cut -d' ' -f4) named=$(tail -1 "t.$1" | cut -d' ' -f5) dsos=$n" >>bench.lines
}
line A "A  perf 6.12 report alone (DEBUGINFOD_URLS set)"
line B "B  dsostore prefetch --perf-cache + perf 6.12 report offline"
line C "C  perf 6.12 buildid-cache --debuginfod --add x $n + report"
echo
cat bench.lines
