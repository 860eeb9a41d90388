#!/usr/bin/env bash
# Big binaries symbolized at 1, 1k, 100k and 1M addresses, dsostore three
# ways beside addr2line and llvm-symbolizer, in one run, for each target:
#
#   gmock   googletest's gmock_all_test (C++, -O2 -g, about 110 MB, built
#           by the bench from Debian's googletest sources)
#   python  /usr/bin/python3.11d from Debian's python3.11-dbg (C, -Og -g,
#           not PIE): its DWARF is in the binary itself; were it stripped,
#           dsostore would find its debuginfo by build ID in
#           /usr/lib/debug/.build-id/ and the peers (which do not follow
#           build-id links for -e) would be given that file, as
#           bench_symbolize.sh does for libc
#
# The rows:
#
#   noidx  DSOSTORE_SYMINDEX=0: the index built from the DWARF, not saved
#   cold   no saved index yet: built, answered, and saved when the
#          batch completed it (a few addresses build a few CUs, and
#          save nothing); the cost of saving is cold / noidx
#   warm   from the index `dsostore index` saved before the rows
#
#   bench/bench_bigcxx.sh [-q] [-t TARGETS] [-r RUNS] [-c COUNTS] [-A N] [-L N] [-k]
#     -q  smoke run: 1, 1k and 10k addresses, 1 run
#     -t  targets, comma-separated (gmock,python); a target whose
#         package is missing is skipped with a message
#     -r  timed runs of each row, in rotated order, median (3)
#     -c  the counts, comma-separated (1,1000,100000,1000000)
#     -A  addr2line only up to N addresses (10000: it takes about 1.4 ms
#         an address on gmock_all_test, 25 minutes a run at 1M)
#     -L  llvm-symbolizer only up to N (100000)
#     -k  keep the work directory
#
# Addresses are uniform over the bytes of the binary's sized functions
# (gen_symbolize_bench.py realaddrs; the symbol table of the debug file
# when the binary has none), the first N of one draw.  Every
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
# bytes).  Goals, as BENCH lines (gmock's named bigcxx.*, python's
# bigcxx.python.*): one warm address of the target within 2x the CPU of
# one of the small program, at most 30 MB RSS; saving (cold) at most 1.15x
# the wall of not saving (noidx), at the largest count, with the same
# peak RSS; and for python3.11d at most 150 ns of CPU per address warm
# at 1M (bigcxx.python.warm_ns_per_addr; met=- at a smaller largest
# count, where starting the process weighs more).  gmock_all_test is kept
# in $build/bench/bigcxx/ (rebuilt when the compiler or the sources change).
set -euo pipefail

src=${DS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/bench/benchlib.bash"
build=${DS_BUILD:-$src/build}
runs=3 counts=1,1000,100000,1000000 keep='' a2l_max=10000 llvm_max=100000
targets_opt=gmock,python

while getopts qt:r:c:A:L:kh opt; do
	case $opt in
	q) runs=1 counts=1,1000,10000 ;;
	t) targets_opt=$OPTARG ;;
	r) runs=$OPTARG ;;
	c) counts=$OPTARG ;;
	A) a2l_max=$OPTARG ;;
	L) llvm_max=$OPTARG ;;
	k) keep=1 ;;
	*) bl_usage ;;
	esac
done
IFS=, read -r -a targets <<<"$targets_opt"
for t in "${targets[@]}"; do
	case $t in gmock | python) ;; *)
		echo "bench_bigcxx: no target $t (gmock, python)" >&2
		exit 2
		;;
	esac
done

bl_need python3 g++ cc nm readelf llvm-symbolizer addr2line
[ -x /usr/bin/time ] || die "/usr/bin/time not found (the time package)"
dsostore=${DSOSTORE:-$build/dsostore}
[ -x "$dsostore" ] || die "no $dsostore: run make first"

# ------------------------------------------------------------- the targets
# Each setup_T sets, for target T: T_BIN (what dsostore is given), T_PEER
# (what addr2line and llvm-symbolizer are given: the file with the
# DWARF), T_SYMTAB (the file with the symbol table), T_NAME, T_KEY (the
# BENCH prefix) and T_DESC; or says why it is skipped and sets nothing
# (called plainly, not in a condition, so that set -e holds inside).
declare -A T_BIN T_PEER T_SYMTAB T_NAME T_KEY T_DESC

# has_section FILE NAME
has_section() {
	readelf -SW "$1" 2>/dev/null | awk -v s="$2" '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 == s { f = 1 } END { exit !f }'
}

setup_gmock() {
	local gm=${GMOCK_SRC:-/usr/src/googletest/googlemock}
	local gt=${GTEST_SRC:-/usr/src/googletest/googletest}
	local cache=$build/bench/bigcxx key bin f
	if [ ! -f "$gm/test/gmock_all_test.cc" ]; then
		echo "bench_bigcxx: gmock skipped: no $gm/test/gmock_all_test.cc (the googletest package)" >&2
		return 0
	fi
	# The binary, built once per compiler and sources.
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
	T_BIN[gmock]=$bin T_PEER[gmock]=$bin T_SYMTAB[gmock]=$bin
	T_NAME[gmock]=gmock_all_test T_KEY[gmock]=bigcxx T_DESC[gmock]="g++ -O2 -g"
}

setup_python() {
	local bin=${PYTHON_DBG:-/usr/bin/python3.11d} id dbg peer symtab desc
	if [ ! -x "$bin" ]; then
		echo "bench_bigcxx: python skipped: no $bin (python3.11-dbg; scripts/install-deps bench)" >&2
		return 0
	fi
	id=$(readelf -n "$bin" | awk '/Build ID:/ { print $3 }')
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	peer=$bin symtab=$bin desc="DWARF in the binary"
	[ -n "$id" ] && [ -r "$dbg" ] || dbg=''
	if ! has_section "$bin" .debug_info; then
		if [ -z "$dbg" ]; then
			echo "bench_bigcxx: python skipped: $bin has no DWARF and no debug file by build ID" >&2
			return 0
		fi
		peer=$dbg desc="the peers given $dbg"
	fi
	if ! has_section "$bin" .symtab; then
		if [ -z "$dbg" ] || ! has_section "$dbg" .symtab; then
			echo "bench_bigcxx: python skipped: no symbol table in $bin nor a debug file" >&2
			return 0
		fi
		symtab=$dbg
	fi
	T_BIN[python]=$bin T_PEER[python]=$peer T_SYMTAB[python]=$symtab
	T_NAME[python]=$(basename "$bin") T_KEY[python]=bigcxx.python
	T_DESC[python]="python3.11-dbg $(dpkg-query -W -f='${Version}' python3.11-dbg 2>/dev/null), $desc"
}

active=()
for t in "${targets[@]}"; do
	"setup_$t"
	[ -z "${T_BIN[$t]:-}" ] || active+=("$t")
done
[ ${#active[@]} -gt 0 ] || die "no target to measure"

work=$(mktemp -d "${TMPDIR:-/tmp}/ds-bench-bigcxx.XXXXXX")
if [ -n "$keep" ]; then
	echo "bench_bigcxx: keeping $work" >&2
else
	trap 'rm -rf "$work"' EXIT
fi
# no network, saved indexes only where the rows put them
export HOME=$work DEBUGINFOD_URLS=

printf '%s\n' '#include <stdio.h>' 'int work(int n) { return n * 7 + 1; }' \
	'int main(int c, char **v) { (void)v; printf("%d\n", work(c)); return 0; }' >"$work/small.c"
cc -O2 -g -Wl,--build-id=sha1 -o "$work/small" "$work/small.c"
nm "$work/small" | awk '$3 == "work" { print "0x" $1 }' >"$work/small.addr"

IFS=, read -r -a ns <<<"$counts"
max=0
for n in "${ns[@]}"; do [ "$n" -gt "$max" ] && max=$n; done
cmp_n=0
for n in "${ns[@]}"; do [ "$n" -le "$a2l_max" ] && [ "$n" -gt "$cmp_n" ] && cmp_n=$n; done

# one TARGET ROW N [OUT]: a timed run; "wall_ms cpu_ms rss_kb" appended
# to $work/t.TARGET.ROW.N.  OUT: where the answers go (/dev/null).
one() {
	local t=$1 row=$2 n=$3 out=${4:-/dev/null} in=$work/$1.in.$3
	local bin=${T_BIN[$1]:-} peer=${T_PEER[$1]:-}
	local -a cmd env_=()
	case $row in
	noidx) env_=(DSOSTORE_SYMINDEX=0) cmd=("$dsostore" symbolize -e "$bin" -a -f -i) ;;
	cold)
		rm -rf "$work/idx.cold"
		env_=(DSOSTORE_SYMINDEX_PATH="$work/idx.cold") cmd=("$dsostore" symbolize -e "$bin" -a -f -i)
		;;
	warm) env_=(DSOSTORE_SYMINDEX_PATH="$work/idx") cmd=("$dsostore" symbolize -e "$bin" -a -f -i) ;;
	small)
		in=$work/small.addr env_=(DSOSTORE_SYMINDEX_PATH="$work/idx")
		cmd=("$dsostore" symbolize -e "$work/small" -a -f -i)
		;;
	addr2line) cmd=(addr2line -a -f -i -e "$peer") ;;
	llvm) cmd=(llvm-symbolizer -a -f -i --no-demangle --obj="$peer") ;;
	esac
	env "${env_[@]}" /usr/bin/time -o "$work/time" -f '%e %U %S %M' "${cmd[@]}" <"$in" >"$out" 2>/dev/null ||
		die "$t: $row at $n failed"
	awk '{ printf "%.0f %.0f %d\n", $1 * 1000, ($2 + $3) * 1000, $4 }' "$work/time" >>"$work/t.$t.$row.$n"
}

# met VALUE GOAL_MAX: yes or no
met() { awk -v a="$1" -v g="$2" 'BEGIN { print (a <= g ? "yes" : "no") }'; }

idx_bins=("$work/small")
for t in "${active[@]}"; do idx_bins+=("${T_BIN[$t]}"); done
DSOSTORE_SYMINDEX_PATH=$work/idx "$dsostore" index "${idx_bins[@]}" >/dev/null ||
	die "dsostore index failed"
# One warm address of the small program.
for ((r = 0; r < runs; r++)); do one small small 1; done
sw=$(median_of "$work/t.small.small.1" 1) sc=$(median_of "$work/t.small.small.1" 2)
sm=$(median_of "$work/t.small.small.1" 3)

rows=(noidx cold warm addr2line llvm)
# bench_target T: the rows, the comparison, the table and the BENCH lines.
bench_target() {
	local t=$1 bin=${T_BIN[$1]} key=${T_KEY[$1]} n r k row dwarf style d load
	local bw bc w c m ww cw out_mb ratio gc gr nw cr nr wc
	python3 "$src/bench/gen_symbolize_bench.py" realaddrs "${T_SYMTAB[$t]}" "$max" 11 >"$work/$t.addrs"
	dwarf=$(python3 -c '
import subprocess, sys
out = subprocess.run(["readelf", "-SW", sys.argv[1]], capture_output=True, text=True).stdout
n = 0
for line in out.splitlines():
    f = line.replace("[ ", "[").split()
    if len(f) > 5 and f[1].startswith(".debug_"):
        n += int(f[5], 16)
print(round(n / 1048576))' "${T_PEER[$t]}")

	for n in "${ns[@]}"; do
		head -n "$n" "$work/$t.addrs" >"$work/$t.in.$n"
		one "$t" cold "$n" # the page cache warmed
		rm -f "$work/t.$t".*."$n"
		for ((r = 0; r < runs; r++)); do
			for ((k = 0; k < ${#rows[@]}; k++)); do
				row=${rows[(r + k) % ${#rows[@]}]}
				[ "$row" = addr2line ] && [ "$n" -gt "$a2l_max" ] && continue
				[ "$row" = llvm ] && [ "$n" -gt "$llvm_max" ] && continue
				one "$t" "$row" "$n"
			done
		done
	done

	# The answers at the largest count addr2line is run at, against its.
	local -A differ=()
	local -a cmp_rows=(noidx cold warm)
	if [ "$cmp_n" -gt 0 ]; then
		[ "$cmp_n" -le "$llvm_max" ] && cmp_rows+=(llvm)
		for row in addr2line "${cmp_rows[@]}"; do
			one "$t" "$row" "$cmp_n" "$work/out.$row"
			sed -i '$d' "$work/t.$t.$row.$cmp_n" # (not a timed run)
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
	echo "${T_NAME[$t]}: $(du -mL "$bin" | cut -f1) MB, $dwarf MB of DWARF (${T_DESC[$t]}); $runs run(s), medians; load $load"
	printf '%-9s %-10s %9s %9s %8s %9s %9s %8s %s\n' addrs row wall_ms cpu_ms rss_MB "wall/noidx" "cpu/noidx" "ns/addr" "differ"
	for n in "${ns[@]}"; do
		bw=$(median_of "$work/t.$t.noidx.$n" 1) bc=$(median_of "$work/t.$t.noidx.$n" 2)
		for row in "${rows[@]}"; do
			[ -s "$work/t.$t.$row.$n" ] || continue # (a peer not run at this count)
			w=$(median_of "$work/t.$t.$row.$n" 1) c=$(median_of "$work/t.$t.$row.$n" 2)
			m=$(median_of "$work/t.$t.$row.$n" 3)
			d=-
			[ "$n" = "$cmp_n" ] && [ -n "${differ[$row]:-}" ] && d=${differ[$row]}
			[ "$n" = "$cmp_n" ] && [ "$row" = addr2line ] && d="(oracle)"
			awk -v n="$n" -v r="$row" -v w="$w" -v c="$c" -v m="$m" -v bw="$bw" -v bc="$bc" -v d="$d" 'BEGIN {
				printf "%-9s %-10s %9.0f %9.0f %8.1f %8.2fx %8.2fx %8.0f %s\n", n, r, w, c, m / 1024,
					w / (bw ? bw : 1), c / (bc ? bc : 1), w * 1e6 / n, d }'
		done
	done
	awk -v w="$sw" -v c="$sc" -v m="$sm" 'BEGIN {
		printf "%-9s %-10s %9.0f %9.0f %8.1f   (a one-file C program, warm)\n", 1, "small", w, c, m / 1024 }'

	# Output at the largest count, warm: its bytes, and what reading them
	# back through cat to /dev/null takes (the speed of moving those bytes:
	# what writing the answers could approach).
	DSOSTORE_SYMINDEX_PATH=$work/idx "$dsostore" symbolize -e "$bin" -a -f -i <"$work/$t.in.$max" \
		>"$work/out.warm" 2>/dev/null || die "$t: warm run at $max failed"
	out_mb=$(du -m "$work/out.warm" | cut -f1)
	rm -f "$work/t.cat"
	for ((r = 0; r < runs; r++)); do
		local t0 t1
		t0=$EPOCHREALTIME
		cat "$work/out.warm" >/dev/null
		t1=$EPOCHREALTIME
		echo "$t0 $t1" | awk '{ printf "%.0f\n", ($2 - $1) * 1000 }' >>"$work/t.cat"
	done
	rm -f "$work/out.warm"
	ww=$(median_of "$work/t.$t.warm.$max" 1) cw=$(median_of "$work/t.cat" 1)
	echo "warm output at $max: $out_mb MB in $ww ms; cat of the same bytes $cw ms"
	echo "BENCH $key.output value=$ww unit=ms mb=$out_mb cat_ms=$cw ratio=$(awk -v a="$ww" -v b="$cw" 'BEGIN { printf "%.1f", a / (b ? b : 1) }')x"

	# The goals.
	if [ -f "$work/t.$t.warm.1" ]; then
		gc=$(median_of "$work/t.$t.warm.1" 2) gr=$(median_of "$work/t.$t.warm.1" 3)
		# CPU in ms is coarse at this size: the ratio floors both at 10 ms
		ratio=$(awk -v a="$gc" -v b="$sc" 'BEGIN { a = a < 10 ? 10 : a; b = b < 10 ? 10 : b; printf "%.2f", a / b }')
		echo "BENCH $key.one_warm_cpu value=$gc unit=ms ratio=${ratio}x goal_max=2 met=$(met "$ratio" 2)"
		echo "BENCH $key.one_warm_rss value=$gr unit=KB goal_max=30720 met=$(met "$gr" 30720)"
	fi
	cw=$(median_of "$work/t.$t.cold.$max" 1) nw=$(median_of "$work/t.$t.noidx.$max" 1)
	cr=$(median_of "$work/t.$t.cold.$max" 3) nr=$(median_of "$work/t.$t.noidx.$max" 3)
	ratio=$(awk -v a="$cw" -v b="$nw" 'BEGIN { printf "%.2f", a / b }')
	echo "BENCH $key.save_wall value=$cw unit=ms ratio=${ratio}x goal_max=1.15 met=$(met "$ratio" 1.15)"
	ratio=$(awk -v a="$cr" -v b="$nr" 'BEGIN { printf "%.2f", a / b }')
	echo "BENCH $key.save_rss value=$cr unit=KB ratio=${ratio}x goal_max=1.05 met=$(met "$ratio" 1.05)"
	# CPU per address of the warm row at the largest count (the table's
	# ns/addr is wall); the goal is python3.11d's at 1M.
	wc=$(median_of "$work/t.$t.warm.$max" 2)
	local ns_addr goal=- m_=-
	ns_addr=$(awk -v c="$wc" -v n="$max" 'BEGIN { printf "%.0f", c * 1e6 / n }')
	if [ "$t" = python ]; then
		goal=150
		[ "$max" -ge 1000000 ] && m_=$(met "$ns_addr" "$goal")
	fi
	echo "BENCH $key.warm_ns_per_addr value=$ns_addr unit=ns addrs=$max cpu_ms=$wc ratio=- goal_max=$goal met=$m_"
}

first=1
for t in "${active[@]}"; do
	[ -n "$first" ] || echo
	first=''
	bench_target "$t"
done
