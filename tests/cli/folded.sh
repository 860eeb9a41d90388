#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report --folded against perf itself: the same recording through `perf
# script`, collapsed by tests/lib/stackcollapse.py (stackcollapse-perf.pl's
# rules, written from their description), must give the same lines, in
# the same order, count for count:
#  - default (samples) vs perf script without the period field (-F), which
#    stackcollapse-perf.pl then counts as 1 a sample;
#  - --count period vs perf script's default output (period included);
#  - --annotate kernel,dso --comm-tid vs --kernel --dso --tid;
#  - --event, on a recording of two events (and by default the first one);
# on a program of known shape (gcc -O2 -g -fno-omit-frame-pointer, a
# shared library, recorded with perf record -g) and on a multi-process
# workload (gcc compiling a file: gcc, cc1, as).  Known difference, allowed
# and counted: where perf 6.1 names no PLT stub (docs/oracles.md) our frame
# is NAME@plt and perf's is _init or [DSO], or "@plt" (no name) for some
# stubs of libc's .plt.  From first principles: the
# program's stacks are the call paths its source has.  Then flamegraph
# reading the folded text draws what it draws from the recording; hostile
# text (bytes that are not UTF-8, markup characters, lines that are no
# stacks) still makes a well-formed SVG; errors exit 1 or 2 with a message.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc python3
tl_tmpdir dsfolded
cd "$tmp" || exit 2
export HOME=$tmp/home
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
export DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
tl_perf_or_skip
tl_sanitizer_exitcodes
py=$(tl_python xml.etree.ElementTree) || py=python3
collapse="$py $DS_SRC/tests/lib/stackcollapse.py"

# -------------------------------------------------------------- program
# tests/gen/flameprog: call paths of known shape (see fg.c), a shared library.
if ! bash "$DS_SRC/tests/gen/flameprog/build.sh" . 2>build.log; then
	echo "FAIL: cannot build tests/gen/flameprog: $(tail -3 build.log)" >&2
	exit 1
fi

# record NAME ARGS...: perf record -g ARGS into NAME.data
record() {
	local name=$1
	shift
	if ! perf record -N -g -o "$name.data" "$@" >"$name.rec" 2>&1; then
		fail "perf record $*: $(tail -3 "$name.rec")"
		return 1
	fi
}
record fg -e cpu-clock -F 4000 -- ./fg || tl_finish folded
record cc -e cpu-clock -F 4000 -- gcc -O2 -c fg.c -o fg.o
# Two frequencies: at one, the two clocks sample the same instants.
record two -e cpu-clock/freq=4000/ -e task-clock/freq=1000/ -- ./fg 3000000

# ours NAME ARGS...: report --folded ARGS into NAME.ours; a sanitizer
# report or a failure is a failure.
ours() {
	local name=$1 rc=0
	shift
	"$DSOSTORE" report --folded --no-fetch --no-progress "$@" >"$name.ours" 2>"$name.err" ||
		rc=$?
	if [ "$rc" != 0 ] || grep -q -E 'Sanitizer|runtime error' "$name.err"; then
		fail "report --folded $*: status $rc: $(head -5 "$name.err")"
	fi
}

# theirs NAME DATA SCRIPT-FIELDS COLLAPSE-ARGS...: perf script (default
# fields when SCRIPT-FIELDS is "", else -F) collapsed into NAME.theirs.
theirs() {
	local name=$1 data=$2 fields=$3
	shift 3
	perf script -i "$data" ${fields:+-F "$fields"} 2>"$name.perr" | $collapse "$@" >"$name.theirs" ||
		fail "perf script -i $data | stackcollapse.py $*: $(tail -3 "$name.perr")"
}

# same NAME: NAME.ours and NAME.theirs, line for line; lines where only a
# PLT stub's name differs (ours NAME@plt, perf's _init or [DSO]) are
# allowed and counted in $plt_lines.
plt_lines=0
same() {
	local name=$1 out
	if cmp -s "$name.theirs" "$name.ours"; then
		return 0
	fi
	out=$("$py" "$DS_SRC/tests/lib/folded_cmp.py" "$name.theirs" "$name.ours")
	plt_lines=$((plt_lines + $(sed -n 's/^plt //p' <<<"$out")))
	if grep -q -v '^plt ' <<<"$out"; then
		fail "$name: stacks differ from perf script's:
$(grep -v '^plt ' <<<"$out" | head -20)"
		return 1
	fi
}

# ------------------------------------------------------- against perf
samples_fields=comm,pid,tid,time,event,ip,sym,dso
tl_case "samples, as perf script -F $samples_fields | stackcollapse-perf"
ours fg fg.data
theirs fg fg.data "$samples_fields"
same fg
tl_case_end "($(wc -l <fg.ours) stacks)"

tl_case "--count period, as perf script | stackcollapse-perf"
ours fgp fg.data --count period
theirs fgp fg.data ""
same fgp
grep -q ' [0-9]\{6,\}$' fgp.ours || fail "--count period: no count of periods (cpu-clock: ns)"
tl_case_end

tl_case "--annotate kernel,dso --comm-tid, as stackcollapse-perf --kernel --tid"
ours fgk fg.data --annotate kernel,dso --comm-tid
theirs fgk fg.data "$samples_fields" --kernel --dso --tid
same fgk
grep -q '^fg-[0-9]*/[0-9]*;' fgk.ours || fail "--comm-tid: no fg-PID/TID root"
grep -q ';fg`main;' fgk.ours || fail "--annotate dso: no fg\`main"
tl_case_end

tl_case "a multi-process workload (gcc -c: gcc, cc1, as)"
ours cc cc.data
theirs cc cc.data "$samples_fields"
same cc
# Which of gcc's processes the sampler catches is its luck (the driver
# and as run for milliseconds); which commands the recording's samples
# are of, perf script says: ours are those.  cc1 compiles, most of the
# run: at least its stacks (a floor).
# (A stack's root is its command; a sample without frames is "COMM N".)
comms=$(perf script -i cc.data -F comm 2>/dev/null | sed 's/^ *//; s/ *$//' | sort -u | tr '\n' ' ')
roots=$(sed -E 's/ [0-9]+$//; s/;.*//' cc.ours | sort -u | tr '\n' ' ')
[ "$roots" = "$comms" ] || fail "stacks of $roots, perf script's samples are of $comms"
grep -q "^cc1;" cc.ours || fail "no stacks of cc1"
tl_case_end "($(wc -l <cc.ours) stacks)"

tl_case "perf record -z, and pipe mode"
if record z -z -e cpu-clock -F 4000 -- ./fg; then
	ours z z.data
	theirs z z.data "$samples_fields"
	same z
fi
if perf record -N -g -e cpu-clock -F 4000 -o - -- ./fg >pipe.data 2>pipe.rec; then
	ours pipe pipe.data
	theirs pipe pipe.data "$samples_fields"
	same pipe
else
	fail "perf record -o -: $(tail -3 pipe.rec)"
fi
tl_case_end "($(wc -l <z.ours) and $(wc -l <pipe.ours) stacks)"

tl_case "two events: the first by default, --event either"
ours two two.data
theirs two two.data "$samples_fields"
same two
grep -q 'samples of other events left out' two.err || fail "no word of the other event's samples"
for ev in cpu task; do
	ours "two-$ev" two.data --event "$ev-clock/freq=$([ $ev = cpu ] && echo 4000 || echo 1000)/"
	theirs "two-$ev" two.data "$samples_fields" \
		--event-filter="$ev-clock/freq=$([ $ev = cpu ] && echo 4000 || echo 1000)/"
	same "two-$ev"
done
cmp -s two-cpu.ours two-task.ours && fail "--event: both events' stacks are one"
tl_case_end

# ------------------------------------------------- first principles
tl_case "the program's call paths"
ours shape fg.data --annotate kernel
"$py" - shape.ours >shape.out <<'EOF' || fail "$(cat shape.out)"
import re, sys
paths = {'top_a;mid_b;leaf_spin': 0, 'top_a;mid_c;leaf_mix': 0, 'top_d;leaf_spin': 0,
         'lib_burn': 0}
# Every path the source has (the leaves call tick, lib_burn lib_tick),
# and each of them without the caller of its last function: a sample on
# that function's first instructions, before it pushes its frame pointer
# (or after it pops it), has its caller's return address on the stack
# where a frame-pointer walk does not look, so perf's chain skips the
# caller too (seen once in CI: main;top_a;leaf_mix).  Where samples land
# is luck; which paths can be is not.
full = list(paths) + [k + ';tick' for k in paths if k != 'lib_burn'] + ['lib_burn;lib_tick']
can_be = set(full)
for k in full:
    f = k.split(';')
    if len(f) >= 2:
        can_be.add(';'.join(f[:-2] + f[-1:]))
bad = []
for line in open(sys.argv[1]):
    stack, n = line.rsplit(' ', 1)
    if ';main;' not in stack:
        continue
    user = stack.split(';main;', 1)[1].split(';')
    # kernel frames (an interrupt, a page fault) may sit on top
    user = [f for f in user if not f.endswith('_[k]')]
    p = ';'.join(user)
    hit = [k for k in can_be if k == p or k.startswith(p + ';')]
    # printf's stacks, a PLT stub, an unknown frame, and ld.so's lazy
    # binding (the first call through a PLT slot runs the resolver)
    if not hit and not (p.startswith('printf') or p.startswith('_IO_') or '@plt' in p
                        or p.startswith('[') or p.startswith('_dl_runtime_resolve')):
        bad.append(stack)
    if p in paths:
        paths[p] += int(n)
if bad:
    print('stacks under main the source does not have:', *bad[:5], sep='\n  ')
    sys.exit(1)
print(paths)
# Floors, not shares: each path is a loop of 8e6 to 2.4e7 iterations (tens
# of samples a unit at 4000 Hz of the task's own clock, under any load),
# and mid_b does three times top_d's work.
if min(paths.values()) == 0:
    print('a call path without samples'); sys.exit(1)
if not paths['top_a;mid_b;leaf_spin'] > paths['top_d;leaf_spin']:
    print('mid_b (3 units) has no more samples than top_d (1)'); sys.exit(1)
EOF
tl_case_end "$(tail -1 shape.out)"

# ---------------------------------------------------- flamegraph input
tl_case "flamegraph: the folded text draws what the recording draws"
rc=0
"$DSOSTORE" flamegraph --no-fetch --no-progress fg.data -o rec.svg 2>fg1.err || rc=$?
[ "$rc" = 0 ] || fail "flamegraph fg.data: status $rc: $(head -3 fg1.err)"
rc=0
"$DSOSTORE" flamegraph fg.ours -o text.svg 2>fg2.err || rc=$?
[ "$rc" = 0 ] || fail "flamegraph fg.ours: status $rc: $(head -3 fg2.err)"
# the subtitle names the event only when the stacks come from a recording
diff <(grep '<g class="f"' rec.svg) <(grep '<g class="f"' text.svg) >/dev/null ||
	fail "the frames drawn from report --folded's text differ from those of the recording"
n=$(grep -c '<g class="f"' rec.svg)
[ "$n" -gt 10 ] || fail "only $n frames drawn"
if grep -o -E '(href|src)=|url\(|@import|https?://[^"]*' rec.svg | grep -v -x 'http://www.w3.org/2000/svg'; then
	fail "the SVG refers to something outside itself"
fi
grep -q '<script' rec.svg && grep -q '<style' rec.svg || fail "no inline <script> and <style>"
tl_case_end "($n frames)"

tl_case "hostile folded text"
printf 'a;b\xff\xfe;<c&d>"e" 5\nno count here\n;; 2\na;b\xc0\x80 3\r\nx;\x01y 1\n\na 18446744073709551616\n' >bad.txt
rc=0
"$DSOSTORE" flamegraph bad.txt -o bad.svg 2>bad.err || rc=$?
[ "$rc" = 0 ] || fail "flamegraph bad.txt: status $rc: $(head -3 bad.err)"
grep -q -E 'Sanitizer|runtime error' bad.err && fail "sanitizer: $(head -3 bad.err)"
grep -q '2 lines are no stacks' bad.err || fail "no word of the lines left out: $(cat bad.err)"
"$py" -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' bad.svg 2>bad.xml ||
	fail "bad.svg is not well-formed XML: $(tail -1 bad.xml)"
grep -q '&lt;c&amp;d&gt;&quot;e&quot;' bad.svg || fail "markup characters not escaped"
tl_case_end

tl_case "errors"
rc=0
"$DSOSTORE" report --folded nosuch.data >/dev/null 2>e1.err || rc=$?
[ "$rc" = 1 ] && [ -s e1.err ] || fail "a missing recording: status $rc, '$(cat e1.err)'"
rc=0
"$DSOSTORE" report --folded --count bogus fg.data >/dev/null 2>e2.err || rc=$?
[ "$rc" = 2 ] && grep -q 'samples or period' e2.err || fail "--count bogus: status $rc"
rc=0
"$DSOSTORE" report --folded --no-fetch --event nosuch fg.data >/dev/null 2>e3.err || rc=$?
[ "$rc" = 1 ] && grep -q "no event 'nosuch'" e3.err || fail "--event nosuch: status $rc"
rc=0
: >empty.txt
"$DSOSTORE" flamegraph empty.txt -o e.svg 2>e4.err || rc=$?
[ "$rc" = 1 ] && grep -q 'no stacks' e4.err || fail "empty folded text: status $rc"
tl_case_end

[ "$plt_lines" = 0 ] || echo "known: $plt_lines samples in PLT stubs perf names _init, [DSO] or @plt"
tl_finish folded
