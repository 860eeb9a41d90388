#!/usr/bin/env bash
# How `dsostore stack --list-modules --core` scales with the files a core
# maps: made-up cores (tests/gen/ntfile_core.py) with 10k and 40k NT_FILE
# entries (5k and 20k files, one PT_LOAD per mapping, as the kernel writes
# them), no servers.  Reports wall time (median) of each and the 40k/10k
# ratio: 4x is linear, 16x quadratic.  Every run's module list is checked
# against the generator's.
#
#   bench/bench_core_files.sh [-q] [-r RUNS] [-k]
#     -q  smoke run: 1 run       -r  runs of each, median (5)
#     -k  keep the work directory
set -euo pipefail

src=${DS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/bench/benchlib.bash"
build=${DS_BUILD:-$src/build}
dsostore=${DSOSTORE:-$build/dsostore}
runs=5 keep=''

while getopts qr:kh opt; do
	case $opt in
	q) runs=1 ;;
	r) runs=$OPTARG ;;
	k) keep=1 ;;
	*) bl_usage ;;
	esac
done

bl_need python3
"$dsostore" stack --help >/dev/null 2>&1 || die "$dsostore has no stack command"
work=$(mktemp -d "${DS_BENCH_TMPDIR:-${TMPDIR:-/tmp}}/dsbenchcorefiles.XXXXXX")
cleanup() { [ -n "$keep" ] || rm -rf "$work"; }
trap cleanup EXIT
export HOME=$work/home DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$work/cache
mkdir -p "$HOME"

declare -A ms
for n in 10000 40000; do
	python3 "$src/tests/gen/ntfile_core.py" "$n" "$work/$n.core" "$work/$n.want"
	: >"$work/$n.ms"
	for ((r = 0; r < runs; r++)); do
		t0=$(date +%s%N)
		"$dsostore" stack --no-progress -q --list-modules --core "$work/$n.core" \
			>"$work/$n.got" 2>/dev/null || true
		t1=$(date +%s%N)
		cmp -s "$work/$n.want" "$work/$n.got" || die "$n entries: modules differ from the generator's"
		echo $(((t1 - t0) / 1000000)) >>"$work/$n.ms"
	done
	ms[$n]=$(median <"$work/$n.ms")
done
ratio=$(awk -v a="${ms[40000]}" -v b="${ms[10000]}" 'BEGIN { printf "%.1f", a / b }')
met=$(awk -v r="$ratio" 'BEGIN { print (r <= 6) ? "yes" : "no" }')
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %10s %8s\n' "NT_FILE entries" "ms" "ratio"
printf '%-28s %10s %8s\n' "10000 (5000 files)" "${ms[10000]}" "1.0x"
printf '%-28s %10s %8s\n' "40000 (20000 files)" "${ms[40000]}" "${ratio}x"
echo "BENCH core_files.10k value=${ms[10000]} unit=ms ratio=1.0x goal_max=- met=-"
echo "BENCH core_files.40k value=${ms[40000]} unit=ms ratio=${ratio}x goal_max=6x met=$met"
