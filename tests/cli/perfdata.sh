#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The perf.data reader against perf itself: `dsostore buildid-list F` must
# print what `perf buildid-list -i F` prints, on recordings of workloads
# built here (plain, -z, --buildid-mmap), and the same again on a copy
# converted to the other byte order (tests/gen/perfswap.py).  perf's order is
# checked to be the file's: perfswap.py --list walks the table on its own.
# Then the error contract: pipe mode is refused with a message, and
# truncated, byte-flipped and non-perf files give exit status 1 and one
# message naming an offset, never a crash.
set -euo pipefail

: "${DSOSTORE:?DSOSTORE must name the CLI}"
: "${DS_SRC:?DS_SRC must name the source dir}"
swap="$DS_SRC/tests/gen/perfswap.py"
. "$DS_SRC/tests/lib/testlib.bash"
tl_need perf gcc python3

tl_tmpdir dsperfdata
cd "$tmp"
# perf reads and writes $HOME/.debug and ~/.perfconfig: keep it out of
# the user's.  -N below also stops writes to the build-id cache.
export HOME=$tmp
tl_sanitizer_exitcodes
tl_perf_or_skip

# ---------------------------------------------------------- workloads
# A shared library and two programs that spend ~0.3 s between their own
# code, the library's and libc's, so several DSOs get samples.
cat >libw.c <<'EOF'
unsigned long w_mix(unsigned long x)
{
	for (int i = 0; i < 400; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

unsigned long w_fold(const char *s, unsigned long h)
{
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3UL;
	return h;
}
EOF
cat >w.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

unsigned long w_mix(unsigned long x);
unsigned long w_fold(const char *s, unsigned long h);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(int));
}

static unsigned long own(unsigned long x)
{
	for (int i = 0; i < 300; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

int main(void)
{
	double end = now() + 0.3;
	unsigned long h = 1;
	char buf[64];
	int v[64];

	while (now() < end) {
		h = own(w_mix(h));
		snprintf(buf, sizeof(buf), "%lx-%lu", h, h % 977);
		h = w_fold(buf, h);
		for (int i = 0; i < 64; i++)
			v[i] = (int)(h >> (i % 32)) ^ i;
		if (VARIANT)
			qsort(v, 64, sizeof(int), cmp);
	}
	printf("%lx\n", h);
	return 0;
}
EOF
gcc -O1 -g -fPIC -shared -o libw.so libw.c
gcc -O1 -g -DVARIANT=0 -o w1 w.c -L. -lw -Wl,-rpath,"$tmp"
gcc -O0 -DVARIANT=1 -o w2 w.c -L. -lw -Wl,-rpath,"$tmp"

# Options this perf has, from its own help (which exits 129).
perf record -h >record.help 2>&1 || true
perf_has() {
	grep -q -- "$1" record.help
}

# ------------------------------------------------------------ oracle
# record NAME WORKLOAD [PERF-OPTION...]
record() {
	local name=$1 prog=$2
	shift 2
	if ! perf record -N -e cpu-clock "$@" -o "$name.data" -- "$prog" \
		>"$name.rec" 2>&1; then
		fail "$name: perf record $* failed: $(tail -3 "$name.rec")"
		return 1
	fi
}

# Runs the CLI; $out, $err, $rc are its stdout, stderr file and status.
run() {
	rc=0
	"$DSOSTORE" buildid-list "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	out=$tmp/out
	err=$tmp/err
	if grep -q -E 'Sanitizer|runtime error' "$err"; then
		fail "buildid-list $*: sanitizer report:"
		head -20 "$err" >&2
	fi
}

same() { # same WHAT EXPECTED-FILE ACTUAL-FILE
	if ! cmp -s "$2" "$3"; then
		fail "$1 differs (expected, then dsostore):"
		diff "$2" "$3" | head -20 >&2 || true
	fi
}

check_recording() {
	local name=$1 f=$1.data
	# Reading events (no build-ID table), perf names the vDSO after the
	# temporary file it extracts it to: its table name "[vdso]" instead.
	perf buildid-list -i "$f" 2>"$name.perferr" |
		sed -E 's#^(.{41})/.*/perf-vdso\.so-[A-Za-z0-9]{6}$#\1[vdso]#' >"$name.perf" ||
		fail "$name: perf buildid-list failed: $(head -3 "$name.perferr")"
	[ -s "$name.perf" ] || fail "$name: perf buildid-list printed nothing"
	run "$f"
	[ "$rc" -eq 0 ] || fail "$name: exit $rc: $(head -3 "$err")"
	same "$name: buildid-list vs perf buildid-list" "$name.perf" "$out"
	run -i "$f"
	same "$name: buildid-list -i vs perf buildid-list" "$name.perf" "$out"
	# perf's order is the table's (so no sorting): an independent walk.
	if [[ $name == *pipe* ]]; then
		: # no header table to walk
	elif python3 "$swap" --list "$f" >"$name.walk" 2>"$name.walkerr"; then
		if grep -q . "$name.walk"; then
			same "$name: perfswap --list vs perf buildid-list" "$name.perf" "$name.walk"
		fi
	else
		fail "$name: perfswap --list: $(cat "$name.walkerr")"
	fi
}

check_swapped() {
	local name=$1 magic
	if ! python3 "$swap" "$name.data" "$name.swapped" 2>"$name.swaperr"; then
		fail "$name: perfswap: $(cat "$name.swaperr")"
		return
	fi
	magic=$(head -c 8 "$name.swapped")
	[ "$magic" = 2ELIFREP ] || fail "$name: the swapped copy's magic reads '$magic'"
	run "$name.data"
	cp "$out" "$name.native"
	run "$name.swapped"
	[ "$rc" -eq 0 ] || fail "$name: swapped copy: exit $rc: $(head -3 "$err")"
	same "$name: buildid-list of the swapped copy" "$name.native" "$out"
	grep -q . "$name.native" || fail "$name: no build IDs to compare in the swapped copy"
	# The events too: every mapped DSO, with the build IDs read locally.
	run --all --local "$name.data"
	cp "$out" "$name.native-all"
	run --all --local "$name.swapped"
	same "$name: buildid-list --all --local of the swapped copy" "$name.native-all" "$out"
	# And the samples: the same report, line for line (but its file name).
	"$DSOSTORE" report --no-fetch --no-progress --sort dso,sym "$name.data" 2>&1 |
		grep -v '^# dsostore report of' >"$name.report-native"
	"$DSOSTORE" report --no-fetch --no-progress --sort dso,sym "$name.swapped" 2>&1 |
		grep -v '^# dsostore report of' >"$name.report-swapped"
	grep -q '%' "$name.report-native" || fail "$name: report printed no rows: $(head -3 "$name.report-native")"
	same "$name: report of the swapped copy" "$name.report-native" "$name.report-swapped"
}

record plain1 "$tmp/w1" && check_recording plain1 && check_swapped plain1
record plain2 "$tmp/w2" && check_recording plain2 && check_swapped plain2
# Callchains and two events (samples told apart by their ids).
record cc "$tmp/w2" -g -e task-clock && check_recording cc && check_swapped cc
# The workloads' own DSOs must be in perf's table, or the comparison
# above proves little.
for dso in "$tmp/libw.so" "$tmp/w1"; do
	grep -q " $dso\$" plain1.perf || fail "plain1: perf lists no build ID for $dso"
done
# Compressed records (-z), build IDs in MMAP2 events (--buildid-mmap) and
# pipe mode: perf 6.1 then writes no build-ID table and lists the DSOs with
# samples from the events (-z and pipe mode: with blank build IDs, as their
# MMAP2 events carry inodes).
if perf_has compression-level; then
	record z "$tmp/w1" -z && check_recording z && check_swapped z
	grep -q " $tmp/w1\$" z.perf || fail "z: perf lists no line for $tmp/w1"
fi
if perf_has buildid-mmap; then
	record mmap "$tmp/w2" --buildid-mmap && check_recording mmap && check_swapped mmap
	grep -q "^[0-9a-f]\{40\} $tmp/libw.so\$" mmap.perf ||
		fail "mmap: perf lists no build ID for $tmp/libw.so"
fi

# ------------------------------------------------------------- pipe mode
if perf record -N -e cpu-clock -o - -- "$tmp/w1" >pipe.data 2>pipe.rec; then
	check_recording pipe && check_swapped pipe
	grep -q " $tmp/w1\$" pipe.perf || fail "pipe: perf lists no line for $tmp/w1"
else
	fail "perf record -o - failed: $(tail -3 pipe.rec)"
fi

# Synthetic recordings (tests/gen/perfgen.py) with build IDs for DSOs that
# have no samples: perf prints a file's table as it is, but in pipe mode
# it lists only the sampled DSOs.
mkdir -p gen
cp "$tmp/w1" "$tmp/w2" "$tmp/libw.so" gen/
for variant in "--table-all" "--table-all --pipe" "--mmap2-build-id" "--both --pipe"; do
	name=gen-$(tr -d ' -' <<<"$variant")
	# shellcheck disable=SC2086
	if python3 "$DS_SRC/tests/gen/perfgen.py" --dsos-from gen --out "$name.data" \
		--unsampled 2 $variant 2>"$name.generr"; then
		check_recording "$name"
	else
		fail "perfgen $variant: $(cat "$name.generr")"
	fi
done

# --all lists every mapped DSO: a superset of the sampled ones, and with
# --local the build IDs of the workload's files as readelf reads them.
"$DSOSTORE" buildid-list --all --local z.data >all.out 2>all.err || fail "--all --local: $(cat all.err)"
for dso in "$tmp/w1" "$tmp/libw.so"; do
	want=$(readelf -n "$dso" | awk '/Build ID:/ {print $3}')
	grep -q -x -F "$want $dso" all.out || fail "--all --local: no '$want $dso' line"
done
awk '{print $NF}' z.perf | grep -v -e vdso -e kallsyms | while read -r dso; do
	grep -q " $dso\$" all.out || echo "$dso"
done >all.missing
[ ! -s all.missing ] || fail "--all lacks sampled DSOs: $(cat all.missing)"

# --------------------------------------------------------- broken files
# Exit 0 or 1 only; on 1 exactly one "dsostore: PATH: reason" line with a
# number in it (an offset, or the length where the file ends); on 0 only
# lines of the intact file.
check_broken() {
	local what=$1 f=$2 good=$3
	run "$f"
	case $rc in
	0)
		if [ -n "$good" ] && grep -v -x -F -f "$good" "$out" >/dev/null; then
			fail "$what: exit 0 with lines the intact file does not have"
		fi
		;;
	1)
		# An offset, or (a flipped feature bit) the plain "no table".
		if [ "$(wc -l <"$err")" -ne 1 ] ||
			! grep -q -E "^dsostore: $f: (.*[0-9]|no build-ID table)" "$err"; then
			fail "$what: expected one error line naming an offset, got: $(head -3 "$err")"
		fi
		;;
	*) fail "$what: exit $rc: $(head -5 "$err")" ;;
	esac
}

# One python run writes every broken copy (python starts slowly here):
# cuts and flips at the fields that steer a reader, found by perfswap.py's
# own walk of the file.
mutants() {
	python3 - "$DS_SRC/tests/gen" "$1" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import perfswap

src = open(sys.argv[2], "rb").read()
_, _, table, bits = perfswap.layout(src)
boff, bsize = perfswap.build_id_section(src)
recs = perfswap.records(src)
r1 = recs[1][0] if len(recs) > 1 else boff
nf = len(bits)
cuts = [1, 7, 8, 9, 15, 16, 17, 24, 40, 56, 72, 100, 103, 104, 105, table // 2,
        table - 1, table, table + 8, table + 16 * (nf // 2) + 3, table + 16 * nf - 1,
        boff, boff + 4, boff + 7, boff + 8, boff + 20, boff + 35, boff + 36, r1 - 1,
        r1 + 6, boff + bsize // 2, boff + bsize - 1, len(src) - 1]
for c in sorted(set(c for c in cuts if 0 < c < len(src))):
    open("cut.%d" % c, "wb").write(src[:c])
flips = [0, 8, 9, 15, 40, 41, 47, 48, 55, 72, 79, table + 32, table + 39, table + 40,
         table + 47, boff + 4, boff + 5, boff + 6, boff + 7, boff + 32, r1 - 1, r1 + 7]
for at in flips:
    b = bytearray(src)
    b[at] ^= 0xff
    open("flip.%d" % at, "wb").write(b)
# The build ID's size byte, made valid by misc bit 15: 0 and > 20 are bad.
for bs in (0, 21, 255):
    b = bytearray(src)
    misc = struct.unpack_from("<H", b, boff + 4)[0]
    struct.pack_into("<H", b, boff + 4, misc | 0x8000)
    b[boff + 32] = bs
    open("bsize.%d" % bs, "wb").write(b)
PY
}

if [ -f plain1.data ] && mutants plain1.data; then
	for f in cut.*; do
		check_broken "truncated at ${f#cut.}" "$f" plain1.perf
	done
	for f in flip.*; do
		check_broken "byte ${f#flip.} flipped" "$f" ""
	done
	for f in bsize.*; do
		run "$f"
		[ "$rc" -eq 1 ] || fail "build ID size byte ${f#bsize.}: exit $rc, expected 1"
		grep -q -E 'offset [0-9]+' "$err" ||
			fail "build ID size byte ${f#bsize.}: $(head -2 "$err")"
	done
else
	fail "could not make broken copies of plain1.data"
fi

: >empty
check_broken "an empty file" empty ""
check_broken /etc/passwd /etc/passwd ""
[ "$rc" -eq 1 ] || fail "/etc/passwd: exit $rc, expected 1"
run "$tmp"
[ "$rc" -eq 1 ] || fail "a directory: exit $rc, expected 1"
run "$tmp/missing.data"
[ "$rc" -eq 1 ] || fail "a missing file: exit $rc, expected 1"

tl_finish perfdata
