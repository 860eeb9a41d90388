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
# from first principles: the two loops run as long as each other, so
# each has 40-60% of the samples.
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
for sym in jit_first 'LazyCompile:\*second /srv/app.js:12'; do
	share=$(grep -E "\[\.\] $sym\$" named.rows | awk '{ sub(/%/, "", $1); print $1 }')
	python3 -c "import sys; s = float(sys.argv[1] or 0); sys.exit(0 if 40 <= s <= 60 else 1)" "${share:-0}" ||
		fail "$sym: ${share:-no}% of the samples, want 40-60% (two loops run in turn)"
done
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
