#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# JIT code in report, as perf report shows it: a program copies two
# machine-code loops into anonymous executable memory, names them in
# /tmp/perf-PID.map (the format Java, Node, .NET, LuaJIT and Python 3.12
# write) and runs them in turn.  perf maps such memory (and the heap,
# stacks, SysV segments) as the process's perf map at its addresses
# (map__new()), shows it as "[JIT] tid PID" and names its samples from the
# file (dso__load_perf_map()).  Ours must be perf report's rows, shares to
# 0.01 points, with the map and after it is removed (addresses then), and
# each named row's share that of the samples perf script shows at the
# addresses the map gives it (which loop a sample lands in is the
# sampler's luck; the addresses of the recording's samples are not).
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc python3
tl_tmpdir dsjit
cd "$tmp" || exit 2
export HOME=$tmp/home DSOSTORE_SYMINDEX_PATH=$tmp/derived DEBUGINFOD_URLS=
mkdir -p "$HOME"
tl_sanitizer_exitcodes

cat >jit.c <<'EOF'
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* mov ecx, N; 1: dec ecx; jnz 1b; ret */
static const unsigned char loop[] = { 0xb9, 0x40, 0x0d, 0x03, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	unsigned char *code = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double end = now() + 0.4;
	char path[64];
	FILE *f;

	if (code == MAP_FAILED)
		return 1;
	memcpy(code, loop, sizeof(loop));
	memcpy(code + 0x100, loop, sizeof(loop));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!(f = fopen(path, "w")))
		return 1;
	fprintf(f, "%lx 40 jit_first\n", (unsigned long)code);
	fprintf(f, "%lx 40 LazyCompile:*second /srv/app.js:12\n", (unsigned long)code + 0x100);
	fclose(f);
	while (now() < end) {
		((void (*)(void))code)();
		((void (*)(void))(code + 0x100))();
	}
	return 0;
}
EOF
gcc -O1 -o jit jit.c || fail "cannot build the JIT"
if ! perf record -N -e cpu-clock -F 4000 -o j.data -- ./jit >rec.log 2>&1; then
	echo "SKIP: perf record -e cpu-clock is not permitted here: $(tail -2 rec.log)" >&2
	exit 77
fi
pid=$(perf report -i j.data --stdio --sort pid 2>/dev/null | awk '$2 ~ /^[0-9]+:jit$/ { sub(/:.*/, "", $2); print $2; exit }')
[ -n "$pid" ] || fail "no pid of jit in the recording"
map=/tmp/perf-$pid.map
tl_also_rm+=("$map")
[ -s "$map" ] || fail "the JIT wrote no $map"

rows() { # FILE: "SHARE DSO... [.] SYMBOL" of each JIT row
	grep -F '[JIT] tid' "$1" | grep -v '^#' | sed 's/  */ /g; s/^ //'
}
compare() { # NAME
	python3 "$DS_SRC/tests/lib/rows_cmp.py" perf-$1.rows $1.rows "$1" ||
		fail "$1: the JIT rows differ from perf report's"
}

tl_case "named from the perf map"
perf report -i j.data --stdio --sort dso,sym >perf.out 2>perf.err || fail "perf report: $(tail -2 perf.err)"
rows perf.out >perf-named.rows
"$DSOSTORE" report --no-fetch -i j.data --sort dso,sym >named.out 2>named.err ||
	fail "report: $(tail -3 named.err)"
rows named.out >named.rows
compare named
# The oracle: perf script's samples (period, IP) over the map's ranges,
# shares of all the recording's periods, to the rounding of two decimals.
# Each loop runs half of the 0.4 s, ~1e5 iterations a call: a sample in
# each is a floor, not a share.
perf script -i j.data -F pid,period,ip >script.out 2>script.err ||
	fail "perf script: $(tail -2 script.err)"
python3 - "$map" script.out named.rows "$pid" <<'PY' || fail "the JIT rows are not the shares of the samples at the map's addresses"
import re, sys
mapfile, script, rows, pid = sys.argv[1:5]
syms = []
for line in open(mapfile):
    start, size, name = line.rstrip("\n").split(" ", 2)
    syms.append((int(start, 16), int(size, 16), name))
total, per = 0, {}
for line in open(script):
    f = line.split()
    if len(f) != 3:
        continue
    period, ip = int(f[1]), int(f[2], 16)
    total += period
    for start, size, name in syms:
        if f[0] == pid and start <= ip < start + size:
            per[name] = per.get(name, 0) + period
ours = {}
for line in open(rows):
    m = re.match(r"^([0-9.]+)% .*\[\.\] (.+)$", line.rstrip("\n"))
    if m:
        ours[m.group(2)] = float(m.group(1))
bad = []
for start, size, name in syms:
    want = 100.0 * per.get(name, 0) / total if total else 0
    if name not in ours:
        bad.append("%s: no row (the samples at its addresses: %.4f%%)" % (name, want))
    elif abs(ours[name] - want) > 0.0051:
        bad.append("%s: ours %.2f%%, the samples at its addresses %.4f%%" % (name, ours[name], want))
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
tl_case_end "($(wc -l <perf-named.rows) rows)"

# A perf map another user owns, or one others can write, is refused with a
# warning (docs/live.md: older perf refused another user's, "not owned by
# current user or root, ignoring it"; perf 6 reads any, so perf is no
# oracle here): the rows are perf's rows without the map, addresses.
tl_case "another user's perf map, or one others can write: refused, addresses"
mv "$map" map.keep
perf report -i j.data --stdio --sort dso,sym >perf3.out 2>/dev/null
rows perf3.out >perf-refused.rows
grep -q jit_first perf-refused.rows && fail "perf named without the map"
refused() { # NAME WARNING: ours are perf's rows without the map, and say why
	"$DSOSTORE" report --no-fetch -i j.data --sort dso,sym >"$1.out" 2>"$1.err" ||
		fail "report: $(tail -3 "$1.err")"
	rows "$1.out" >"$1.rows"
	cp perf-refused.rows "perf-$1.rows"
	compare "$1"
	grep -q "perf map $map: $2" "$1.err" || fail "$1: no warning: $(cat "$1.err")"
}
if [ "$(id -u)" = 0 ]; then
	cp map.keep "$map" && chown nobody "$map" || fail "chown nobody"
	refused other "owned by uid $(id -u nobody), not by you (uid 0) or root; not used"
	rm -f "$map"
else
	echo "skip another user's map: needs root to chown"
fi
cp map.keep "$map" && chmod 0666 "$map"
refused writable "writable by everyone (mode 0666); not used"
chmod 0664 "$map"
refused group "writable by its group (mode 0664); not used"
chmod 0644 "$map"
cmp -s "$map" map.keep || fail "the map changed"
tl_case_end

tl_case "without the perf map: addresses"
rm -f "$map"
perf report -i j.data --stdio --sort dso,sym >perf2.out 2>/dev/null
rows perf2.out >perf-bare.rows
"$DSOSTORE" report --no-fetch -i j.data --sort dso,sym >bare.out 2>bare.err ||
	fail "report: $(tail -3 bare.err)"
rows bare.out >bare.rows
compare bare
grep -q jit_first bare.rows && fail "named without the perf map"
tl_case_end

tl_finish report_jit
