#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gen/perfswap.py against perf itself.  perf reads a perf.data of the
# other byte order (it swaps on reading), so the converted copy of a real
# recording must print, in perf script, perf report, perf report -D,
# perf buildid-list and the header dump, what the original prints.
# Converting twice must give back the same bytes (compressed files: the
# same bytes from the second conversion on, as the zstd frames are new),
# and perf must read the twice-converted copy like the original.
#
# Where perf 6.1 itself misreads a big-endian file, the outputs are
# compared without that (see norm and views below): it does not swap
# MMAP2 prot and flags, an EVENT_UPDATE's scale, perf_event_attr's
# clockid; in pipe mode it does not swap HEADER_FEATURE's feat_id (so the
# features are lost: a swapped pipe file is read by perf script only, and a
# compressed one, whose buffer size is a feature, not at all) and does not
# mark the attrs as swapped (so a sample's pid/tid pair and RAW data are
# misread; the pipe recordings here are single-threaded, no tracepoint).
set -euo pipefail

: "${DS_SRC:?DS_SRC must name the source dir}"
swap="$DS_SRC/tests/gen/perfswap.py"
. "$DS_SRC/tests/lib/testlib.bash"
tl_need perf gcc python3

tl_tmpdir dsperfswap
cd "$tmp"
# perf reads and writes $HOME/.debug and ~/.perfconfig: keep it out of
# the user's.  -N below also stops writes to the build-id cache.
export HOME=$tmp

# A program that spends 0.1 s of its own CPU time in two functions of its
# own and in libc: the process's clock, not the wall's, so that a loaded
# machine does not cut the samples (cpu-clock samples the task's time:
# ~400 at perf's default 4000 Hz, where the checks below want 50).  It
# sleeps 1 ms first: on an idle machine a 0.1 s busy loop may never be
# switched out, and then --switch-events (the "many" recording) has no
# SWITCH record to check.
cat >w.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 300; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

__attribute__((noinline)) static unsigned long fold(unsigned long x)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%lx-%lu", x, x % 977);
	return mix(x) + strlen(buf);
}

int main(void)
{
	struct timespec nap = { 0, 1000000 };
	double end;
	unsigned long h = 1;

	nanosleep(&nap, NULL);
	end = now() + 0.1;
	while (now() < end)
		h = fold(h);
	printf("%lx\n", h);
	return 0;
}
EOF
gcc -O1 -g -fno-omit-frame-pointer -o w w.c

perf record -h >record.help 2>&1 || true
perf_has() {
	grep -q -- "$1" record.help
}

# record NAME [pipe] PERF-RECORD-OPTION...: NAME.data (with "pipe", as
# perf record -o - writes it) and NAME in names, or a note saying why perf
# could not record that way here.  --no-bpf-event saves a second a run
# (plain keeps the BPF records and features perf 6.1 writes by default).
names=()
record() {
	local name=$1 out=$1.data
	shift
	if [ "$1" = pipe ]; then
		shift
		set -- "$@" -o -
	else
		set -- "$@" -o "$name.data"
		out=$name.stdout
	fi
	if perf record -N "$@" -- ./w >"$out" 2>"$name.rec"; then
		names+=("$name")
	else
		echo "note: perf record $* failed, $name not checked: $(tail -2 "$name.rec")" >&2
		return 1
	fi
}
if ! record plain -e cpu-clock; then
	echo "SKIP: perf record -e cpu-clock is not permitted here" >&2
	exit 77
fi
record calls --no-bpf-event -g -e cpu-clock,task-clock || fail "perf record -g"
if perf_has buildid-mmap; then
	record mmap --no-bpf-event --buildid-mmap -e cpu-clock || fail "perf record --buildid-mmap"
fi
if perf_has compression-level; then
	record z --no-bpf-event -z -e cpu-clock || fail "perf record -z"
	record pipez pipe --no-bpf-event -z -e cpu-clock || fail "perf record -z -o -"
fi
record pipe pipe --no-bpf-event -e cpu-clock || fail "perf record -o -"
# Every sample field perf can fill here: a group read (READ with GROUP),
# ADDR, PHYS_ADDR, page sizes, CPU, user registers and stack, a
# tracepoint's RAW data (and the tracing data feature) when the kernel
# lets us, and the records that --switch-events, --namespaces and
# --all-cgroups add.  Options this perf or kernel refuses are noted only.
many="--no-bpf-event -e {cpu-clock,task-clock}:S -d --phys-data --data-page-size
	--code-page-size -T --sample-cpu --switch-events --namespaces --all-cgroups
	-k mono --call-graph dwarf,512"
# shellcheck disable=SC2086 # word splitting intended
record many -e sched:sched_switch $many 2>/dev/null || record many $many || true
for name in "${names[@]}"; do
	[ -s "$name.data" ] || fail "$name: perf wrote an empty file"
done

# ------------------------------------------------------------ conversions
# One python run: NAME.sw (other order), NAME.sw2 (back), NAME.sw3.
python3 - "$DS_SRC/tests/gen" "${names[@]}" <<'PY' || fail "the conversions"
import sys
sys.path.insert(0, sys.argv[1])
import perfswap

bad = 0
for name in sys.argv[2:]:
    src = open(name + ".data", "rb").read()
    try:
        one = perfswap.swap(src)
        two = perfswap.swap(one)
        three = perfswap.swap(two)
    except Exception as exc:
        print("FAIL: %s: %s: %s" % (name, type(exc).__name__, exc), file=sys.stderr)
        bad += 1
        continue
    for suffix, data in (("sw", one), ("sw2", two), ("sw3", three)):
        open("%s.%s" % (name, suffix), "wb").write(data)
    if one[:8] != src[:8][::-1] or one == src[:8][::-1] + src[8:]:
        print("FAIL: %s: the copy is not converted" % name, file=sys.stderr)
        bad += 1
    compressed = name in ("z", "pipez")
    if (three if compressed else two) != (one if compressed else src):
        print("FAIL: %s: converting twice does not give back the same bytes" % name,
              file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
PY

# The command line: status 0 and the same bytes; errors are status 1 and
# one message; usage 2.
if python3 "$swap" plain.data cli.sw 2>cli.err; then
	cmp -s cli.sw plain.sw || fail "perfswap.py IN OUT wrote other bytes than swap()"
else
	fail "perfswap.py plain.data cli.sw: status $?: $(cat cli.err)"
fi
head -c 3000 plain.data >cut.data
rc=0
python3 "$swap" cut.data out.sw 2>bad.err || rc=$?
[ "$rc" -eq 1 ] || fail "perfswap.py on a cut file: status $rc, expected 1"
grep -q '^perfswap: .*[0-9]' bad.err || fail "perfswap.py on a cut file: $(cat bad.err)"
rc=0
python3 "$swap" plain.data >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "perfswap.py with one argument: status $rc, expected 2"

# ------------------------------------------------------------ perf's view
# Temporary vDSO copies, tips and the capture time differ between runs;
# the dump's file offsets between a compressed file and its copy; the
# fields perf 6.1 does not swap (above) between a file and its swapped copy.
norm() {
	sed -E -e 's#/tmp/perf-vdso\.so-[A-Za-z0-9]{6}#[vdso-copy]#g' \
		-e '/^# \(Tip:/d' -e '/^# captured on/d' -e '/^# (data size|feat offset) /d' \
		-e 's/, clockid = [0-9]+//'
}
# views FILE WHICH...: FILE.<which> for each, ending in perf's status.
views() {
	local f=$1 v rc
	shift
	for v in "$@"; do
		rc=0
		case $v in
		script) perf script -i "$f" -F comm,pid,tid,time,ip,sym,dso,period ;;
		full) perf script -i "$f" --no-inline ;;
		report) perf report -i "$f" --stdio --sort dso,sym --no-inline -g none ;;
		buildids) perf buildid-list -i "$f" ;;
		header) perf report -i "$f" --header-only -I ;;
		dump) perf report -D -i "$f" ;;
		esac >"$f.$v.raw" 2>/dev/null || rc=$?
		if [ "$v" = dump ]; then
			norm <"$f.$v.raw" | grep -v -E '^\. |^\.\.\. scale: ' |
				sed -E -e 's/^(0x[0-9a-f]+@[^ ]+|-?[0-9]+ -?[0-9]+ 0x[0-9a-f]+|[0-9]+ 0x[0-9a-f]+|0x[0-9a-f]+) //' \
					-e 's/(PERF_RECORD_MMAP2 .*\]: )[-r][-w][-x][-sp] /\1prot /'
		else
			norm <"$f.$v.raw"
		fi >"$f.$v"
		echo "perf $v exit status $rc" >>"$f.$v"
	done
}
same_views() { # same_views NAME OTHER WHICH...
	local name=$1 other=$2 v
	shift 2
	for v in "$@"; do
		if ! cmp -s "$name.data.$v" "$name.$other.$v"; then
			fail "$name: perf $v of $name.$other differs from the original's:"
			diff "$name.data.$v" "$name.$other.$v" | head -10 >&2 || true
		fi
	done
}

# Two perf at a time: the original's views and the copy's.
all=(script full report buildids header dump)
for name in "${names[@]}"; do
	[ -f "$name.sw" ] || continue
	views "$name.data" "${all[@]}" &
	case $name in
	pipez) views "$name.sw2" "${all[@]}" ;;
	pipe) views "$name.sw" script full ;;
	*) views "$name.sw" "${all[@]}" ;;
	esac
	wait $!
	case $name in
	pipez) same_views "$name" sw2 "${all[@]}" ;;
	pipe) same_views "$name" sw script full ;;
	z) views "$name.sw2" "${all[@]}"
		same_views "$name" sw "${all[@]}"
		same_views "$name" sw2 "${all[@]}" ;;
	*) same_views "$name" sw "${all[@]}" ;;
	esac
	grep -q 'exit status 0$' "$name.data.script" || fail "$name: perf script failed"
	# The comparisons prove something only with samples in them.
	[ "$(wc -l <"$name.data.script")" -ge 50 ] ||
		fail "$name: perf script printed $(wc -l <"$name.data.script") lines"
	grep -q -E ' (mix|fold) ' "$name.data.script" ||
		fail "$name: no samples in the workload's own functions"
done
for name in "${names[@]}"; do
	case $name in
	calls) grep -q 'task-clock' calls.data.full || fail "calls: no task-clock samples"
		[ "$(grep -c -E '^\s+[0-9a-f]+ (mix|fold|main)\+' calls.data.full)" -ge 50 ] ||
			fail "calls: no call chains through the workload" ;;
	mmap) grep -q ' /.*/w$' mmap.data.buildids || fail "mmap: no build ID for the workload" ;;
	plain) grep -q ' /.*/w$' plain.data.buildids || fail "plain: no build ID for the workload" ;;
	many) grep -q 'PERF_RECORD_SWITCH' many.data.dump || fail "many: no SWITCH records"
		grep -q 'ustack: size' many.data.dump || fail "many: no user stacks"
		grep -q 'group nr 2' many.data.dump || fail "many: no group reads" ;;
	esac
done

tl_finish perfswap_selftest "ok (${names[*]})"
