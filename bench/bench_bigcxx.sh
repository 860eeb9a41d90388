#!/usr/bin/env bash
# A big C++ binary: googletest's gmock_all_test (-O2 -g, about 110 MB,
# built by the bench from Debian's googletest sources) symbolized at 1,
# 1k, 100k and 1M addresses, dsostore three ways beside addr2line and
# llvm-symbolizer, in one run:
#
#   noidx  DSOSTORE_SYMINDEX=0: the index built from the DWARF, not saved
#   cold   no saved index yet: built, answered, and saved when the
#          batch completed it (a few addresses build a few CUs, and
#          save nothing); the cost of saving is cold / noidx
#   warm   from the index `dsostore index` saved before the rows
#
#   bench/bench_bigcxx.sh [-q] [-r RUNS] [-c COUNTS] [-A N] [-L N] [-k]
#     -q  smoke run: 1, 1k and 10k addresses, 1 run
#     -r  timed runs of each row, in rotated order, median (3)
#     -c  the counts, comma-separated (1,1000,100000,1000000)
#     -A  addr2line only up to N addresses (10000: it takes about 1.4 ms
#         an address here, 25 minutes a run at 1M)
#     -L  llvm-symbolizer only up to N (100000)
#     -k  keep the work directory
#
# Addresses are uniform over the bytes of the binary's sized functions
# (gen_symbolize_bench.py realaddrs), the first N of one draw.  Every
# tool gets "-a -f -i" (GNU style, addresses on stdin; llvm-symbolizer
# --no-demangle too, as the others do not demangle) and writes to
# /dev/null while timed; wall, CPU (user + system: what a loaded machine
# distorts least) and peak RSS by /usr/bin/time.  A small program (one C
# file) is asked one warm address too: one address of any binary should
# cost what one of a small one costs.  The answers of every tool at the
# largest count addr2line is run at are compared with addr2line's
# (frames' function, file and line), and the differing addresses counted.
#
# At the largest count the warm output is also written to a file and read
# back by cat (BENCH bigcxx.output: the answers' wall beside moving their
# bytes).  Goals, as BENCH lines: one warm address of gmock_all_test
# within 2x the CPU of one of the small program, at most 30 MB RSS;
# saving (cold) at most 1.15x the wall of not saving (noidx), at the
# largest count, with the same peak RSS.  The binary is kept in
# $build/bench/bigcxx/ (rebuilt when the compiler or the sources change).
set -euo pipefail

src=${DS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/bench/benchlib.bash"
build=${DS_BUILD:-$src/build}
runs=3 counts=1,1000,100000,1000000 keep='' a2l_max=10000 llvm_max=100000

while getopts qr:c:A:L:kh opt; do
	case $opt in
	q) runs=1 counts=1,1000,10000 ;;
	r) runs=$OPTARG ;;
	c) counts=$OPTARG ;;
	A) a2l_max=$OPTARG ;;
	L) llvm_max=$OPTARG ;;
	k) keep=1 ;;
	*) bl_usage ;;
	esac
done

bl_need python3 g++ cc nm llvm-symbolizer addr2line
[ -x /usr/bin/time ] || die "/usr/bin/time not found (the time package)"
dsostore=${DSOSTORE:-$build/dsostore}
[ -x "$dsostore" ] || die "no $dsostore: run make first"
gm=${GMOCK_SRC:-/usr/src/googletest/googlemock}
gt=${GTEST_SRC:-/usr/src/googletest/googletest}
[ -f "$gm/test/gmock_all_test.cc" ] || die "no $gm/test/gmock_all_test.cc (the googletest package)"

# The binary, built once per compiler and sources.
cache=$build/bench/bigcxx
mkdir -p "$cache"
key=$( (g++ --version | head -1; cat "$gm/test/gmock_all_test.cc" "$gm/src/gmock-all.cc" \
	"$gt/src/gtest-all.cc"; echo O2g) | sha1sum | cut -c1-16)
bin=$cache/gmock_all_test
if [ "$(cat "$cache/key" 2>/dev/null)" != "$key" ] || [ ! -x "$bin" ]; then
	echo "building gmock_all_test (g++ -O2 -g, a few minutes)..." >&2
	rm -f "$bin" "$cache/key"
	# (The test has its own main(), in gmock-spec-builders_test.cc.)
	# Three compiler runs, two at a time: the test's alone is most of it.
	for f in "$gm/test/gmock_all_test.cc" "$gm/src/gmock-all.cc" "$gt/src/gtest-all.cc"; do
		while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
		g++ -O2 -g -I"$gm/include" -I"$gm" -I"$gt/include" -I"$gt" -pthread -c \
			-o "$cache/$(basename "$f" .cc).o" "$f" 2>"$cache/$(basename "$f" .cc).log" &
	done
	wait
	g++ -pthread -Wl,--build-id=sha1 -o "$bin.tmp" "$cache/gmock_all_test.o" \
		"$cache/gmock-all.o" "$cache/gtest-all.o" || die "gmock_all_test did not build"
	rm -f "$cache"/*.o
	mv "$bin.tmp" "$bin"
	echo "$key" >"$cache/key"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ds-bench-bigcxx.XXXXXX")
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
# no network, saved indexes only where the rows put them
export HOME=$work DEBUGINFOD_URLS=

printf '%s\n' '#include <stdio.h>' 'int work(int n) { return n * 7 + 1; }' \
	'int main(int c, char **v) { (void)v; printf("%d\n", work(c)); return 0; }' >"$work/small.c"
cc -O2 -g -Wl,--build-id=sha1 -o "$work/small" "$work/small.c"
nm "$work/small" | awk '$3 == "work" { print "0x" $1 }' >"$work/small.addr"

IFS=, read -r -a ns <<<"$counts"
max=0
for n in "${ns[@]}"; do [ "$n" -gt "$max" ] && max=$n; done
python3 "$src/bench/gen_symbolize_bench.py" realaddrs "$bin" "$max" 11 >"$work/addrs"
dwarf=$(python3 -c '
import subprocess, sys
out = subprocess.run(["readelf", "-SW", sys.argv[1]], capture_output=True, text=True).stdout
n = 0
for line in out.splitlines():
    f = line.replace("[ ", "[").split()
    if len(f) > 5 and f[1].startswith(".debug_"):
        n += int(f[5], 16)
print(round(n / 1048576))' "$bin")

# one ROW N [OUT]: a timed run; "wall_ms cpu_ms rss_kb" appended to
# $work/t.ROW.N.  OUT: where the answers go (/dev/null).
one() {
	local row=$1 n=$2 out=${3:-/dev/null} bin_=$bin in=$work/in.$2
	local -a cmd env_=()
	case $row in
	noidx) env_=(DSOSTORE_SYMINDEX=0) cmd=("$dsostore" symbolize -e "$bin" -a -f -i) ;;
	cold)
		rm -rf "$work/idx.cold"
		env_=(DSOSTORE_SYMINDEX_PATH="$work/idx.cold") cmd=("$dsostore" symbolize -e "$bin" -a -f -i)
		;;
	warm) env_=(DSOSTORE_SYMINDEX_PATH="$work/idx") cmd=("$dsostore" symbolize -e "$bin" -a -f -i) ;;
	small)
		in=$work/small.addr bin_=$work/small env_=(DSOSTORE_SYMINDEX_PATH="$work/idx")
		cmd=("$dsostore" symbolize -e "$work/small" -a -f -i)
		;;
	addr2line) cmd=(addr2line -a -f -i -e "$bin") ;;
	llvm) cmd=(llvm-symbolizer -a -f -i --no-demangle --obj="$bin") ;;
	esac
	: "$bin_"
	env "${env_[@]}" /usr/bin/time -o "$work/time" -f '%e %U %S %M' "${cmd[@]}" <"$in" >"$out" 2>/dev/null ||
		die "$row at $n failed"
	awk '{ printf "%.0f %.0f %d\n", $1 * 1000, ($2 + $3) * 1000, $4 }' "$work/time" >>"$work/t.$row.$n"
}

DSOSTORE_SYMINDEX_PATH=$work/idx "$dsostore" index "$bin" "$work/small" >/dev/null ||
	die "dsostore index failed"
rows=(noidx cold warm addr2line llvm)
for n in "${ns[@]}"; do
	head -n "$n" "$work/addrs" >"$work/in.$n"
	one cold "$n" # the page cache warmed
	rm -f "$work"/t.*."$n"
	for ((r = 0; r < runs; r++)); do
		for ((k = 0; k < ${#rows[@]}; k++)); do
			row=${rows[(r + k) % ${#rows[@]}]}
			[ "$row" = addr2line ] && [ "$n" -gt "$a2l_max" ] && continue
			[ "$row" = llvm ] && [ "$n" -gt "$llvm_max" ] && continue
			one "$row" "$n"
		done
	done
done
# One warm address of the small program.
for ((r = 0; r < runs; r++)); do one small 1; done

# The answers at the largest count addr2line is run at, against its.
cmp_n=0
for n in "${ns[@]}"; do [ "$n" -le "$a2l_max" ] && [ "$n" -gt "$cmp_n" ] && cmp_n=$n; done
declare -A differ
if [ "$cmp_n" -gt 0 ]; then
	cmp_rows=(noidx cold warm)
	[ "$cmp_n" -le "$llvm_max" ] && cmp_rows+=(llvm)
	for row in addr2line "${cmp_rows[@]}"; do
		one "$row" "$cmp_n" "$work/out.$row"
		sed -i '$d' "$work/t.$row.$cmp_n" # (not a timed run)
	done
	for row in "${cmp_rows[@]}"; do
		style=gnu
		[ "$row" = llvm ] && style=llvm
		differ[$row]=$(python3 "$src/bench/gen_symbolize_bench.py" compare "$work/out.addr2line" \
			"$work/out.$row" "$style" --show 0 | awk 'NR == 1 { print $1 }')
	done
	rm -f "$work"/out.*
fi

load=$(cut -d' ' -f1 /proc/loadavg)
echo "gmock_all_test: $(du -m "$bin" | cut -f1) MB, $dwarf MB of DWARF; $runs run(s), medians; load $load"
printf '%-9s %-10s %9s %9s %8s %9s %9s %8s %s\n' addrs row wall_ms cpu_ms rss_MB "wall/noidx" "cpu/noidx" "ns/addr" "differ"
for n in "${ns[@]}"; do
	bw=$(median_of "$work/t.noidx.$n" 1) bc=$(median_of "$work/t.noidx.$n" 2)
	for row in "${rows[@]}"; do
		[ -s "$work/t.$row.$n" ] || continue # (a peer not run at this count)
		w=$(median_of "$work/t.$row.$n" 1) c=$(median_of "$work/t.$row.$n" 2) m=$(median_of "$work/t.$row.$n" 3)
		d=-
		[ "$n" = "$cmp_n" ] && [ -n "${differ[$row]:-}" ] && d=${differ[$row]}
		[ "$n" = "$cmp_n" ] && [ "$row" = addr2line ] && d="(oracle)"
		awk -v n="$n" -v r="$row" -v w="$w" -v c="$c" -v m="$m" -v bw="$bw" -v bc="$bc" -v d="$d" 'BEGIN {
			printf "%-9s %-10s %9.0f %9.0f %8.1f %8.2fx %8.2fx %8.0f %s\n", n, r, w, c, m / 1024,
				w / (bw ? bw : 1), c / (bc ? bc : 1), w * 1e6 / n, d }'
	done
done
sw=$(median_of "$work/t.small.1" 1) sc=$(median_of "$work/t.small.1" 2) sm=$(median_of "$work/t.small.1" 3)
awk -v w="$sw" -v c="$sc" -v m="$sm" 'BEGIN {
	printf "%-9s %-10s %9.0f %9.0f %8.1f   (a one-file C program, warm)\n", 1, "small", w, c, m / 1024 }'

# Output at the largest count, warm: its bytes, and what reading them
# back through cat to /dev/null takes (the speed of moving those bytes:
# what writing the answers could approach).
DSOSTORE_SYMINDEX_PATH=$work/idx "$dsostore" symbolize -e "$bin" -a -f -i <"$work/in.$max" \
	>"$work/out.warm" 2>/dev/null || die "warm run at $max failed"
out_mb=$(du -m "$work/out.warm" | cut -f1)
for ((r = 0; r < runs; r++)); do
	t0=$EPOCHREALTIME
	cat "$work/out.warm" >/dev/null
	t1=$EPOCHREALTIME
	echo "$t0 $t1" | awk '{ printf "%.0f\n", ($2 - $1) * 1000 }' >>"$work/t.cat"
done
rm -f "$work/out.warm"
ww=$(median_of "$work/t.warm.$max" 1) cw=$(median_of "$work/t.cat" 1)
echo "warm output at $max: $out_mb MB in $ww ms; cat of the same bytes $cw ms"
echo "BENCH bigcxx.output value=$ww unit=ms mb=$out_mb cat_ms=$cw ratio=$(awk -v a="$ww" -v b="$cw" 'BEGIN { printf "%.1f", a / (b ? b : 1) }')x"

# The goals.
if [ -f "$work/t.warm.1" ]; then
	gc=$(median_of "$work/t.warm.1" 2) gr=$(median_of "$work/t.warm.1" 3)
	# CPU in ms is coarse at this size: the ratio floors both at 10 ms
	ratio=$(awk -v a="$gc" -v b="$sc" 'BEGIN { a = a < 10 ? 10 : a; b = b < 10 ? 10 : b; printf "%.2f", a / b }')
	echo "BENCH bigcxx.one_warm_cpu value=$gc unit=ms ratio=${ratio}x goal_max=2 met=$(awk -v r="$ratio" 'BEGIN { print (r <= 2 ? "yes" : "no") }')"
	echo "BENCH bigcxx.one_warm_rss value=$gr unit=KB goal_max=30720 met=$(awk -v a="$gr" 'BEGIN { print (a <= 30720 ? "yes" : "no") }')"
fi
cw=$(median_of "$work/t.cold.$max" 1) nw=$(median_of "$work/t.noidx.$max" 1)
cr=$(median_of "$work/t.cold.$max" 3) nr=$(median_of "$work/t.noidx.$max" 3)
ratio=$(awk -v a="$cw" -v b="$nw" 'BEGIN { printf "%.2f", a / b }')
echo "BENCH bigcxx.save_wall value=$cw unit=ms ratio=${ratio}x goal_max=1.15 met=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.15 ? "yes" : "no") }')"
ratio=$(awk -v a="$cr" -v b="$nr" 'BEGIN { printf "%.2f", a / b }')
echo "BENCH bigcxx.save_rss value=$cr unit=KB ratio=${ratio}x goal_max=1.05 met=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.05 ? "yes" : "no") }')"
