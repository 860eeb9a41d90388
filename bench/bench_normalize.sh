#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Normalization and the whole agent path (normalize + symbolize with inline
# frames) over 1M samples of a live process with many mapped DSOs, next to
# binutils addr2line per DSO on the same samples.
#
#   bench/bench_normalize.sh [BUILD-DIR] [NDSOS] [NSAMPLES]
#
# Makes NDSOS (50) shared libraries of 40 functions each (-O2 -g, with
# inlined helpers), a program linked with all of them that waits, starts
# it, and draws NSAMPLES (1,000,000) addresses uniformly over the
# functions' bytes, absolute in the live process (its /proc/PID/maps +
# nm).  Then:
#   bench_normalize (the library): ds_normalize cold and warm, and the
#     whole path cold (indexes built) and warm;
#   dsostore symbolize -f -i --pid PID < samples (the CLI, whole path);
#   addr2line -f -i -e LIB < that library's samples, for every library
#     (the same addresses, as ELF virtual addresses), summed.
set -euo pipefail
BUILD=${1:-build}
NDSOS=${2:-50}
NSAMPLES=${3:-1000000}
BUILD=$(realpath "$BUILD")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_normalize.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp"

echo "making $NDSOS libraries..." >&2
libs=()
for ((l = 0; l < NDSOS; l++)); do
	{
		echo "static inline int mix$l(int x) { return (x * 2654435761u) >> ($l % 7 + 1); }"
		for ((f = 0; f < 40; f++)); do
			echo "__attribute__((noinline)) int l${l}_f$f(int x) { int s = 0;" \
				"for (int i = 0; i < x; i++) s += mix$l(i + $f) ^ (s << 1); return s; }"
		done
	} >"l$l.c"
	libs+=("l$l")
done
printf '%s\n' "${libs[@]}" | xargs -P 2 -I{} gcc -O2 -g -shared -fPIC -o lib{}.so {}.c
{
	echo '#include <stdio.h>'
	echo '#include <unistd.h>'
	for l in "${libs[@]}"; do echo "int ${l}_f0(int);"; done
	echo 'int main(int argc, char **argv) { int s = 0;'
	for l in "${libs[@]}"; do echo "s += ${l}_f0(argc);"; done
	echo 'FILE *f = fopen(argv[1], "w"); fprintf(f, "%d\n", s); fclose(f); for (;;) pause(); }'
} >main.c
gcc -O2 -g -o prog main.c -L. $(printf -- '-l%s ' "${libs[@]}") -Wl,-rpath,"$tmp"
./prog ready &
pid=$!
for ((i = 0; i < 100; i++)); do [ -s ready ] && break; sleep 0.05; done

echo "drawing $NSAMPLES samples..." >&2
for l in "${libs[@]}"; do nm -S "lib$l.so" | awk -v l="$l" '$3 == "T" {print l, $1, $2}'; done >funcs
python3 - "$pid" "$NSAMPLES" <<'PY'
import random, sys
pid, n = sys.argv[1], int(sys.argv[2])
base = {}
for line in open(f"/proc/{pid}/maps"):
    f = line.split()
    if len(f) >= 6 and f[5].endswith(".so") and int(f[2], 16) == 0:
        name = f[5].rsplit("/", 1)[1][3:-3]
        base.setdefault(name, int(f[0].split("-")[0], 16))
funcs = [(l, int(v, 16), int(s, 16)) for l, v, s in (x.split() for x in open("funcs"))]
random.seed(1)
per = {}
with open("abs", "w") as a:
    for _ in range(n):
        l, v, s = random.choice(funcs)
        va = v + random.randrange(s)
        # (These libraries' text: file offset = vaddr, so the bias is the
        # mapping of offset 0.)
        a.write("%x\n" % (base[l] + va))
        per.setdefault(l, []).append("%x" % va)
for l, vs in per.items():
    with open(f"v.{l}", "w") as o:
        o.write("\n".join(vs) + "\n")
PY
echo "maps: $(wc -l <"/proc/$pid/maps") mappings, $(grep -c '\.so$' "/proc/$pid/maps") of the libraries" >&2

export DEBUGINFOD_URLS= PERF_BUILDID_DIR= DSOSTORE_SYMINDEX=0
"$BUILD/bench/bench_normalize" "$pid" abs

t0=$(date +%s.%N)
sed 's/^/0x/' abs | "$BUILD/dsostore" symbolize -f -i --pid "$pid" >cli.out
t1=$(date +%s.%N)
echo "dsostore symbolize -f -i --pid (CLI, whole path): $(python3 -c "print('%d samples in %.2f s: %.0f addresses/s' % ($NSAMPLES, $t1 - $t0, $NSAMPLES / ($t1 - $t0)))")"

t0=$(date +%s.%N)
for l in "${libs[@]}"; do
	[ -s "v.$l" ] && addr2line -f -i -e "lib$l.so" <"v.$l" >"a2l.$l"
done
t1=$(date +%s.%N)
echo "addr2line -f -i per DSO ($NDSOS processes, same samples as vaddrs): $(python3 -c "print('%d samples in %.2f s: %.0f addresses/s' % ($NSAMPLES, $t1 - $t0, $NSAMPLES / ($t1 - $t0)))")"
