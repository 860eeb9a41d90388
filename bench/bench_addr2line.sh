#!/usr/bin/env bash
# perf with binutils' addr2line against perf with dsostore's: the same perf 6.1, the same recording, run once with PATH as
# it is and once with dsostore's addr2line link first in PATH
# (build/a2l/addr2line, what `make install` puts in libexec/dsostore/bin);
# then perf 6.12 (scripts/peers' perf-6.12, when there) the same two ways,
# given each addr2line by --addr2line=PATH (rows "6.12: ...").
#
#   bench/bench_addr2line.sh [-q] [-r RUNS] [-s SECONDS] [-k]
#     -q  smoke run: a 0.5 s recording, 1 run
#     -r  timed runs of each, interleaved, median (3)
#     -s  CPU seconds recorded at 20 kHz (2.5: about 50k samples)
#     -k  keep the work directory
#
# The recording is of one small -O2 -g program whose hot loops (several
# functions, an inlined helper, unrolled bodies) spread the samples over
# a few thousand distinct addresses, each of which perf asks addr2line
# about once per DSO.  Timed: `perf report --stdio -s sym,srcline` and
# `perf script -F ip,sym,srcline`, wall time of the whole perf process
# (its addr2line children included), after one untimed run of each (the
# page cache, dsostore's saved symbol index).  The outputs are compared
# row by row (perf's random "Tip" line aside); rows that differ are
# counted and shown (known: glibc lines binutils 2.40 names after the
# wrong file, docs/oracles.md), not a failure of the bench.
set -euo pipefail

src=${DS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/bench/benchlib.bash"
build=${DS_BUILD:-$src/build}
runs=3 secs=2.5 keep=''

while getopts qr:s:kh opt; do
	case $opt in
	q) runs=1 secs=0.5 ;;
	r) runs=$OPTARG ;;
	s) secs=$OPTARG ;;
	k) keep=1 ;;
	*)
		bl_usage
		;;
	esac
done

bl_need gcc perf addr2line python3
link=$build/a2l/addr2line
[ -x "$link" ] || die "no $link: run make first"
work=$(mktemp -d "${TMPDIR:-/tmp}/ds-bench-a2l.XXXXXX")
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
cd "$work"
# perf's ~/.debug and ~/.perfconfig are the bench's own; no network;
# dsostore's saved indexes here.
export HOME=$work DEBUGINFOD_URLS= DSOSTORE_SYMINDEX_PATH=$work/symindex

python3 - "$secs" >prog.c <<'PY'
import sys
secs = float(sys.argv[1])
print("""#include <stdio.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); /* CPU time: samples, however busy the machine */
	return t.tv_sec + t.tv_nsec / 1e9;
}

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x, unsigned long k)
{
	x ^= x << 13; x ^= x >> 7; x ^= x << 17;
	return x * k + 1;
}
""")
# Eight functions, each a loop of 64 unrolled steps on its own lines.
for f in range(8):
    print("__attribute__((noinline)) unsigned long f%d(unsigned long x, unsigned long n)\n{" % f)
    print("\tfor (unsigned long i = 0; i < n; i++) {")
    for s in range(64):
        print("\t\tx = mix(x, %dUL) + i;" % (2 * (f * 64 + s) + 3))
        print('\t\t__asm__ volatile("" : "+r"(x));')
    print("\t}\n\treturn x;\n}\n")
print("int main(void)\n{\n\tunsigned long x = 1;\n\tdouble end = now() + %g;\n" % secs)
print("\twhile (now() < end) {")
for f in range(8):
    print("\t\tx = f%d(x, 200);" % f)
print('\t}\n\tprintf("%lx\\n", x);\n\treturn 0;\n}')
PY
gcc -O2 -g -o prog prog.c || die "cannot build the workload"
perf record -N -e cpu-clock -F 20000 -o prog.data -- ./prog >rec.log 2>&1 ||
	die "perf record failed: $(tail -3 rec.log)"
samples=$(perf report -i prog.data --stdio -s dso 2>/dev/null | awk '/^# Samples:/ {print $3; exit}')

# perf 6.12 (scripts/peers), when there: the same rows again, its
# addr2line named by --addr2line (it runs one as 6.1 does: no libbfd, no
# LLVM in Debian's build; docs/oracles.md).
perf612=$(bl_peer perf-6.12)
gnu=$(command -v addr2line)

# run KIND WHO OUT: one perf run (KIND report or script: perf 6.1;
# report612 or script612: perf 6.12); its wall time in ms on stdout.
run() {
	local kind=$1 who=$2 out=$3 path=$PATH a2l=$gnu t0 t1
	[ "$who" = gnu ] || path=${link%/addr2line}:$PATH a2l=$link
	t0=$(date +%s%N)
	case $kind in
	report) PATH=$path perf report -i prog.data --stdio -s sym,srcline ;;
	script) PATH=$path perf script -i prog.data -F ip,sym,srcline ;;
	report612) "$perf612" report -i prog.data --stdio -s sym,srcline --addr2line="$a2l" ;;
	script612) "$perf612" script -i prog.data -F ip,sym,srcline --addr2line="$a2l" ;;
	esac 2>/dev/null | grep -v '^# (Tip:' >"$out"
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
kinds="report script"
[ -z "$perf612" ] || kinds="$kinds report612 script612"


printf '%-34s %10s %10s %7s %8s %s\n' "perf, $samples samples" "binutils" "dsostore" "ratio" "rows" "differ"
for kind in $kinds; do
	run $kind gnu warm.gnu >/dev/null
	run $kind ours warm.ours >/dev/null
	tg='' to=''
	for ((i = 0; i < runs; i++)); do
		tg="$tg $(run $kind gnu $kind.gnu)"
		to="$to $(run $kind ours $kind.ours)"
	done
	mg=$(echo "$tg" | median)
	mo=$(echo "$to" | median)
	case $kind in
	report*)
		rows=$(grep -c '%' $kind.gnu || true)
		what="report --stdio -s sym,srcline"
		;;
	*)
		rows=$(grep -c -E '^ *[0-9a-f]+ ' $kind.gnu || true) # a sample's first line
		what="script -F ip,sym,srcline"
		;;
	esac
	[ "${kind%612}" = "$kind" ] || what="6.12: $what"
	differ=$(diff $kind.gnu $kind.ours | grep -c '^<' || true)
	printf '%-34s %8s ms %8s ms %6.1fx %8s %s\n' "$what" "$mg" "$mo" \
		"$(echo "$mg $mo" | awk '{print $2 ? $1 / $2 : 0}')" "$rows" "$differ"
	echo "BENCH addr2line $kind binutils_ms=$mg dsostore_ms=$mo rows=$rows differ=$differ"
	if [ "$differ" != 0 ]; then
		diff $kind.gnu $kind.ours | grep '^[<>]' | head -6 | sed 's/^/    /' || true
	fi
done
echo "runs: $runs each, interleaved, median; binutils $(addr2line --version | head -1 | awk '{print $NF}'), $(perf --version)${perf612:+, $("$perf612" --version) (6.12: rows)}"
