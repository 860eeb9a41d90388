#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dsostore report --pprof` read back by go tool pprof (Go 1.19's, Debian's
# golang-go), compared with perf itself.  A workload (a main binary and a
# shared library, -O2 -g with frame pointers; a noinline function reached
# from two callers, an always_inline helper, a library function) is
# recorded with `perf record -g`; then:
#  - traces: every stack of `pprof -traces` (function names, leaf first,
#    inline frames included; the thread's name, pid and tid from the
#    labels) is a stack of `perf script`, as many times: perf names the
#    frames, binutils addr2line -i gives the inline frames perf 6.1 does
#    not print (tests/lib/pprof_cmp.py);
#  - top: each function's flat samples, flat nanoseconds and cumulative
#    nanoseconds of `pprof -top -noinlines` are those of `dsostore report
#    --children -s sym --json` (samples, period, children_period), a report
#    tested against perf report elsewhere (perf_report.sh);
#  - pprof -raw shows the mappings of both binaries with their build IDs
#    (as eu-readelf reads them) and the sample types, period type and
#    comments the writer puts there;
#  - the same recording without -g (one location a sample), and with two
#    events (one pair of sample types each, each event's stacks perf's);
#  - recordings the writer must survive: no samples at all, a program
#    and library deleted after the recording (DSOs known by build ID
#    alone: unnamed locations, at their file offsets), and a recording made
#    by tests/gen/perfgen.py of made-up DSOs (runs where perf record may not:
#    its addresses and build IDs are known from first principles);
#  - "-" writes to stdout; an unwritable path fails with one message and
#    leaves no file.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"
export PATH=$PATH:/usr/sbin:/sbin

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc go addr2line eu-readelf python3 gzip
tl_tmpdir dspprof
cd "$tmp" || exit 2
# perf's ~/.debug and ~/.perfconfig, Go's cache and pprof's files: ours.
export HOME=$tmp/home GOCACHE=$tmp/gocache PPROF_TMPDIR=$tmp/pproftmp GOPROXY=off GOFLAGS=
export PPROF_BINARY_PATH=$tmp/nobinaries
mkdir -p "$HOME" "$PPROF_TMPDIR"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
export DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
tl_sanitizer_exitcodes
py=$(command -v python3)
cmp_py=$DS_SRC/tests/lib/pprof_cmp.py

# pprof NAME ARGS...: go tool pprof ARGS (no symbolization: the profile
# has the names), stdout in NAME, a failure counted.
pprof() {
	local name=$1
	shift
	if ! go tool pprof -symbolize=none "$@" >"$name" 2>"$name.err"; then
		fail "go tool pprof $*: $(tail -3 "$name.err")"
		return 1
	fi
}

# write NAME DATA [ARGS...]: report --pprof NAME.pb.gz DATA; status in rc.
write() {
	local name=$1 data=$2
	shift 2
	rc=0
	"$DSOSTORE" report --no-fetch "$@" --pprof "$name.pb.gz" "$data" >"$name.out" 2>"$name.err" ||
		rc=$?
	if grep -q -E 'Sanitizer|runtime error' "$name.err"; then
		fail "$name: sanitizer report: $(head -5 "$name.err")"
	fi
	if [ "$rc" != 0 ]; then
		fail "$name: report --pprof exit $rc: $(head -3 "$name.err")"
		return 1
	fi
	if ! gzip -t "$name.pb.gz" 2>/dev/null; then
		fail "$name: $name.pb.gz is not gzip"
		return 1
	fi
}

# compare WHAT ARGS...: tests/lib/pprof_cmp.py ARGS, its words shown.
compare() {
	local what=$1 out
	shift
	if out=$("$py" "$cmp_py" "$@" 2>&1); then
		echo "$what: $out" | tail -1
	else
		fail "$what: pprof and the oracle differ:"
		echo "$out" | sed 's/^/    /' >&2
	fi
}

# ------------------------------------------------------- synthetic
# perfgen's process maps three made-up DSOs (no files anywhere) at
# 0x7f0000000000 + i MiB, pgoff 0, and takes dso.samples samples in each
# at +0x1000 + 16 k, each with a caller in the next DSO at +0x1040: the
# locations must be at those file offsets, in mappings with the build
# IDs perfgen derived, marked as having no functions.
tl_case synthetic
if "$py" - "$DS_SRC/tests/gen" <<'PY' >gen.want; then
import sys
sys.path.insert(0, sys.argv[1])
import perfgen
dsos = perfgen.made_up_dsos(3)
for i, d in enumerate(dsos):
    d.samples = 2 + i
perfgen.synth(dsos, callchain=True).write("gen.data")
for i, d in enumerate(dsos):
    print("mapping %s %s" % (d.path, d.build_id.hex()))
    for k in range(d.samples):
        print("address 0x%x" % (0x1000 + 16 * k))
    print("address 0x1040")
PY
	if write gen gen.data && pprof gen.raw -raw gen.pb.gz; then
		while read -r what a b; do
			case $what in
			mapping)
				grep -q -E "^[0-9]+: 0x0/0x[0-9a-f]+/0x0 $a $b *\$" gen.raw ||
					fail "no mapping of $a with build ID $b and no [FN]: $(grep -A5 '^Mappings' gen.raw)"
				;;
			address)
				grep -q -E "^ +[0-9]+: $a M=[0-9]+ *\$" gen.raw ||
					fail "no unnamed location at file offset $a"
				;;
			esac
		done <gen.want
		compare synthetic traces gen.pb.gz gen.data --no-inline
	fi
else
	fail "perfgen.py could not write the recording"
fi
tl_case_end

# ----------------------------------------------------------- no samples
# perf record of `true` with one sample a second of CPU time takes none:
# a profile with no sample that pprof reads, typed after the event.
if ! perf record -N -e cpu-clock -c 1000000000 -o none.data -- true >none.rec 2>&1; then
	echo "SKIP: perf record -e cpu-clock is not permitted here (the synthetic part ran):" >&2
	sed 's/^/  /' none.rec >&2
	tl_finish pprof
	exit 77
fi
tl_case "no samples"
if write none none.data && pprof none.raw -raw none.pb.gz; then
	grep -q '^PeriodType: cpu-clock nanoseconds$' none.raw ||
		fail "no cpu-clock period type: $(head -8 none.raw)"
	[ "$(sed -n '/^Samples:/,/^Locations/p' none.raw | grep -c ':')" -le 2 ] ||
		fail "samples in a recording of none: $(head -20 none.raw)"
	pprof none.top -top none.pb.gz
fi
tl_case_end

# ------------------------------------------------------------ workload
cat >libp.c <<'EOF'
__attribute__((noinline)) unsigned long lib_spin(unsigned long n, unsigned long x)
{
	volatile unsigned long sink; /* a frame of its own: its caller shows */

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	return sink;
}
EOF
cat >w.c <<'EOF'
#include <stdio.h>

unsigned long lib_spin(unsigned long n, unsigned long x);

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* The volatile locals give each function a frame (gcc 12 sets none up in
 * a leaf otherwise, and the unwinder would skip its caller). */
__attribute__((noinline)) unsigned long spin(unsigned long n, unsigned long x)
{
	volatile unsigned long sink;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 31 + i + VARIANT;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
	return sink;
}

__attribute__((noinline)) unsigned long via_a(unsigned long n, unsigned long x)
{
	x = spin(n, x);
	__asm__ volatile("" : "+r"(x));
	return x;
}

__attribute__((noinline)) unsigned long via_b(unsigned long n, unsigned long x)
{
	x = spin(2 * n, x);
	__asm__ volatile("" : "+r"(x));
	return x;
}

__attribute__((noinline)) unsigned long mixer(unsigned long n, unsigned long x)
{
	volatile unsigned long sink;

	for (unsigned long i = 0; i < n; i++) {
		x = mix(x);
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
	return sink;
}

int main(void)
{
	unsigned long x = 1, n = 15000000;

	x = via_a(n, x);
	x = via_b(n, x);
	x = mixer(2 * n, x);
	x = lib_spin(n, x);
	printf("%lx\n", x);
	return 0;
}
EOF
flags="-O2 -g -fno-omit-frame-pointer"
# gone/: the same program (another build ID: VARIANT), deleted once
# recorded, library and all.
mkdir -p gone
if ! gcc $flags -fPIC -shared -o libp.so libp.c ||
	! gcc $flags -DVARIANT=0 -o w w.c -L. -lp -Wl,-rpath,'$ORIGIN' ||
	! gcc $flags -fPIC -shared -o gone/libp.so libp.c -Wl,--build-id=0x0badc0de00000001 ||
	! gcc $flags -DVARIANT=1 -o gone/w w.c -Lgone -lp -Wl,-rpath,'$ORIGIN'; then
	fail "cannot build the workload"
	tl_finish pprof
fi
bid_w=$(tl_build_id w)
bid_lib=$(tl_build_id libp.so)

# record NAME ARGS...: perf record -N -o NAME.data ARGS
record() {
	local name=$1
	shift
	if ! perf record -N -o "$name.data" "$@" >"$name.rec" 2>&1; then
		fail "perf record $* failed: $(tail -3 "$name.rec")"
		return 1
	fi
}

# --------------------------------------------------------- call graphs
tl_case "call graph"
if record g -g -e cpu-clock -F 4000 -- ./w && write g g.data; then
	compare "call graph" traces g.pb.gz g.data
	if "$DSOSTORE" report --no-fetch --children -s sym --json g.data >g.json 2>g.json.err; then
		compare "call graph" top g.pb.gz g.json
	else
		fail "report --json: $(head -3 g.json.err)"
	fi
	if pprof g.raw -raw g.pb.gz && pprof g.traces -traces g.pb.gz; then
		maps=$(sed -n '/^Mappings/,$p' g.raw)
		for m in "$tmp/w $bid_w" "$tmp/libp.so $bid_lib"; do
			grep -q -F -- "$m [FN][FL][LN][IN]" <<<"$maps" ||
				fail "no mapping '$m' with functions, lines and inline frames: $maps"
		done
		# pprof's "File:" and "Build ID:" are its first mapping's: ours
		# puts the program first.
		grep -q -x "Build ID: $bid_w" g.traces || fail "the first mapping is not w's"
		grep -q -x 'samples/count cpu-clock/nanoseconds\[dflt\]' g.raw ||
			fail "sample types: $(grep -A1 '^Samples:' g.raw)"
		grep -q -x 'PeriodType: cpu-clock nanoseconds' g.raw || fail "no period type"
		grep -q -x 'Period: 250000' g.raw || fail "period: $(grep Period g.raw)"
		# The start: the file's time (perf writes its header last) less
		# the samples' span, a few seconds before it at most.
		t=$(sed -n 's/^Time: \(.*\) +0000 UTC$/\1/p' g.raw)
		start=$(date -u -d "$t" +%s 2>/dev/null) || start=0
		end=$(stat -c %Y g.data)
		[ "$start" -le "$end" ] && [ "$start" -ge $((end - 10)) ] ||
			fail "start time '$t' is not within 10 s before the file's time $(date -u -d "@$end")"
		grep -q -F "Comment: $(command -v perf) record -N -o g.data -g" g.raw ||
			fail "no comment with perf's command line: $(grep Comment g.raw)"
		# The stacks the source has, with the inline frame in mixer.
		for s in "spin via_a main" "spin via_b main" "mix (inline) mixer main" \
			"lib_spin main"; do
			grep -q -F -- "$(sed 's/ /\n             /g; s/\n *(inline)/ (inline)/g' <<<"$s")" g.traces ||
				fail "no trace '$s' in pprof -traces"
		done
	fi
fi
tl_case_end

# ------------------------------------------------- -z and pipe mode
# The same writer over a zstd-compressed recording (PERF_RECORD_COMPRESSED)
# and a pipe-mode one (header and attrs as records, no build-ID table).
tl_case "call graph: perf record -z, and pipe mode"
if record z -g -z -e cpu-clock -F 4000 -- ./w && write z z.data; then
	compare "-z" traces z.pb.gz z.data
fi
if perf record -N -g -e cpu-clock -F 4000 -o - -- ./w >pipe.data 2>pipe.rec; then
	write pipe pipe.data && compare "pipe mode" traces pipe.pb.gz pipe.data
else
	fail "perf record -o -: $(tail -3 pipe.rec)"
fi
tl_case_end

# --------------------------------------------------------- no callchain
tl_case "no callchain"
if record flat -e cpu-clock -F 4000 -- ./w && write flat flat.data; then
	compare "no callchain" traces flat.pb.gz flat.data --no-inline
fi
tl_case_end

# ----------------------------------------------------------- two events
# cpu-clock and task-clock: each event its pair of sample types, each
# event's stacks perf's.
tl_case "two events"
if record two -g -e cpu-clock,task-clock -F 2000 -- ./w && write two two.data; then
	if pprof two.raw -raw two.pb.gz; then
		grep -q -x 'cpu-clock-samples/count cpu-clock/nanoseconds\[dflt\] task-clock-samples/count task-clock/nanoseconds' two.raw ||
			fail "sample types: $(grep -A1 '^Samples:' two.raw)"
	fi
	for ev in cpu-clock task-clock; do
		compare "$ev" traces two.pb.gz two.data --sample-index "$ev-samples" --event "$ev"
	done
fi
tl_case_end

# ---------------------------------------------------------- gone DSOs
# Neither the program nor its library is there any more: perf names
# nothing in them, nor does the profile; the mappings keep the build IDs.
tl_case "deleted DSOs"
bid_gone=$(tl_build_id gone/w)
if record gone -g -e cpu-clock -F 4000 -- gone/w; then
	rm -rf gone
	if write gone gone.data && pprof gone.raw -raw gone.pb.gz; then
		grep -q -E "^[0-9]+: 0x0/0x[0-9a-f]+/0x0 $tmp/gone/w $bid_gone *\$" gone.raw ||
			fail "no mapping of gone/w with its build ID and no [FN]: $(grep -A6 '^Mappings' gone.raw)"
		grep -q -E "^[0-9]+: .* $tmp/gone/libp.so 0badc0de00000001 *\$" gone.raw ||
			fail "no mapping of gone/libp.so with its build ID"
		compare "deleted DSOs" traces gone.pb.gz gone.data
	fi
fi
tl_case_end

# ------------------------------------------------------------- output
tl_case output
rc=0
"$DSOSTORE" report --no-fetch --pprof - g.data >stdout.pb.gz 2>stdout.err || rc=$?
[ "$rc" = 0 ] || fail "--pprof -: exit $rc: $(head -3 stdout.err)"
cmp -s stdout.pb.gz g.pb.gz || fail "--pprof - wrote another profile than --pprof FILE"
rc=0
"$DSOSTORE" report --no-fetch --pprof "$tmp/nodir/x.pb.gz" g.data >nodir.out 2>nodir.err || rc=$?
[ "$rc" = 1 ] || fail "an unwritable path: exit $rc, not 1"
[ "$(wc -l <nodir.err)" = 1 ] && grep -q "nodir/x.pb.gz" nodir.err ||
	fail "an unwritable path: not one message naming it: $(cat nodir.err)"
[ ! -e nodir ] || fail "an unwritable path left something"
tl_case_end

tl_finish pprof
