#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The vDSO found where perf's config puts its build-id cache: a workload
# that lives in clock_gettime() (the vDSO's __vdso_clock_gettime) is
# recorded with PERF_CONFIG naming a file whose [buildid] dir is a
# directory of the test's, so perf record copies the vDSO there and
# nowhere else (HOME has no .debug).  perf report, with the same config,
# names the [vdso] rows; ours must be the same rows with the same shares
# (0.01 points).  Then without the config: perf has no vDSO image, so no
# names, and neither have we.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc python3
tl_tmpdir dsvdso
cd "$tmp" || exit 2
export HOME=$tmp/home DSOSTORE_SYMINDEX_PATH=$tmp/derived DEBUGINFOD_URLS=
mkdir -p "$HOME"
unset PERF_BUILDID_DIR PERF_CONFIG_NOSYSTEM PERF_CONFIG_NOGLOBAL
tl_sanitizer_exitcodes

cat >cfg <<EOF
# perf's syntax is git's: comments, quoting, case-insensitive names.
[core]
	proc-map-timeout = 500
[BuildId]
	Dir = "$tmp/bid" ; the cache root
EOF
export PERF_CONFIG=$tmp/cfg
cat >vd.c <<'EOF'
#include <time.h>

int main(void)
{
	struct timespec ts;
	long sum = 0;

	for (long i = 0; i < 3000000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sum += ts.tv_nsec;
	}
	return sum == 42;
}
EOF
gcc -O2 -o vd vd.c || fail "cannot build the workload"
if ! perf record -e cpu-clock -F 2000 -o v.data -- ./vd >rec.log 2>&1; then
	echo "SKIP: perf record -e cpu-clock is not permitted here: $(tail -2 rec.log)" >&2
	exit 77
fi
ls "$tmp"/bid/.build-id/*/*/vdso >/dev/null 2>&1 || fail "perf record put no vDSO in buildid.dir"
[ ! -e "$HOME/.debug" ] || fail "perf record wrote into ~/.debug despite buildid.dir"

rows() { # FILE: "SHARE SYMBOL" of each [vdso] row
	awk '$2 == "[vdso]" { print $1, $4 }' "$1"
}
compare() { # NAME
	python3 "$DS_SRC/tests/lib/rows_cmp.py" perf-$1.rows $1.rows "$1" ||
		fail "$1: [vdso] rows differ from perf report's"
}

tl_case config
perf report -i v.data --stdio --sort dso,sym >perf.out 2>perf.err || fail "perf report: $(tail -2 perf.err)"
rows perf.out >perf-config.rows
grep -q "clock_gettime" perf-config.rows || fail "perf names no clock_gettime in the vDSO: $(head -5 perf-config.rows)"
"$DSOSTORE" report --no-fetch -i v.data --sort dso,sym >config.out 2>config.err ||
	fail "report: $(tail -3 config.err)"
rows config.out >config.rows
compare config
tl_case_end "($(wc -l <perf-config.rows) [vdso] rows)"

tl_case no-config
export PERF_CONFIG=/dev/null
perf report -i v.data --stdio --sort dso,sym >perf2.out 2>/dev/null
rows perf2.out >perf-noconf.rows
"$DSOSTORE" report --no-fetch -i v.data --sort dso,sym >noconf.out 2>noconf.err
rows noconf.out >noconf.rows
compare noconf
! grep -q clock_gettime noconf.rows || fail "named without the vDSO image: $(head -3 noconf.rows)"
tl_case_end

tl_finish report_vdso_buildid_dir
