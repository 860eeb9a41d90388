#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report as a perf user types it: perf's default sort (comm,dso,sym), its
# filters (--comm, --pid, --tid, --dsos, --symbols), --sort pid, -F/--fields
# and --header/--header-only, each compared with perf report 6.1 on the
# same recording, table text line for line (so column names, widths and
# the order of ties are perf's: the same samples on both sides, nothing
# left to sampling).
#
# The workload has what the filters tell apart: process "pa" runs burn_a
# in its main thread and burn_b in a second thread, and forks a child that
# execs "pb" (burn_c); all three in a shared library's lib_burn too.  The
# pids and tids come from perf script, the names from the source.
#
# What is compared: perf's output without its first line ("To display the
# perf.data header info", ours "dsostore report of FILE"), its bare "#"
# lines (perf has one more before "Total Lost Samples") and its closing
# tip.  --header-only: perf's lines that start as ours do (hostname, os
# release, perf version, arch, nrcpus, cpudesc, cpuid, total memory,
# cmdline) must be ours, in order; docs/report.md lists what we leave out.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc
tl_tmpdir dsperfopts
cd "$tmp" || exit 2
export HOME=$tmp/home DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
tl_sanitizer_exitcodes
tl_perf_or_skip
# perf 6.12 too, when scripts/peers has it (tl_report_same: tl_report_612)
TL_PERF612=$(tl_peer_or_none perf-6.12)

cat >lib.c <<'EOF'
__attribute__((noinline, noclone)) unsigned long lib_burn(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}
EOF
cat >pa.c <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

unsigned long lib_burn(unsigned long n, unsigned long x);

#define BURN(name)                                                                \
	__attribute__((noinline, noclone)) unsigned long name(unsigned long n) \
	{                                                                         \
		unsigned long x = n;                                              \
		for (unsigned long i = 0; i < n; i++) {                           \
			x = x * 31 + i;                                           \
			__asm__ volatile("" : "+r"(x));                           \
		}                                                                 \
		return lib_burn(n / 2, x);                                        \
	}
BURN(burn_a)
BURN(burn_b)

static void *thread(void *arg)
{
	return (void *)burn_b((unsigned long)arg);
}

int main(int argc, char **argv)
{
	unsigned long n = 60000000;
	pthread_t t;
	void *r;
	pid_t pid = fork();

	if (pid == 0) {
		execl("./pb", "pb", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || pthread_create(&t, NULL, thread, (void *)(n / 2)))
		return 1;
	printf("%lx\n", burn_a(n));
	pthread_join(t, &r);
	waitpid(pid, NULL, 0);
	return 0;
}
EOF
cat >pb.c <<'EOF'
#include <stdio.h>

unsigned long lib_burn(unsigned long n, unsigned long x);

__attribute__((noinline, noclone)) unsigned long burn_c(unsigned long n)
{
	unsigned long x = n;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 7 + i;
		__asm__ volatile("" : "+r"(x));
	}
	return lib_burn(n / 2, x);
}

int main(void)
{
	printf("%lx\n", burn_c(40000000));
	return 0;
}
EOF
if ! gcc -O2 -g -fPIC -shared -o libpw.so lib.c ||
	! gcc -O2 -g -o pa pa.c -L. -lpw -Wl,-rpath,'$ORIGIN' -pthread ||
	! gcc -O2 -g -o pb pb.c -L. -lpw -Wl,-rpath,'$ORIGIN'; then
	echo "FAIL: cannot build the workload" >&2
	exit 1
fi
if ! perf record -N -e cpu-clock -F 2000 -o w.data -- ./pa >rec.log 2>&1; then
	echo "FAIL: perf record: $(tail -3 rec.log)" >&2
	exit 1
fi

# The threads, from perf script: the parent's main thread and its second
# one (same name, pa), the child (pb).
perf script -i w.data -F comm,pid,tid 2>/dev/null | awk '{print $1, $2}' | sort -u >threads
main=$(awk '$1 == "pa" { split($2, p, "/"); if (p[1] == p[2]) print p[1] }' threads | head -1)
second=$(awk '$1 == "pa" { split($2, p, "/"); if (p[1] != p[2]) print p[2] }' threads | head -1)
child=$(awk '$1 == "pb" { split($2, p, "/"); print p[2] }' threads | head -1)
if [ -z "$main" ] || [ -z "$second" ] || [ -z "$child" ]; then
	echo "FAIL: perf script shows no sample of a thread (main '$main', second '$second', child '$child'):" >&2
	cat threads >&2
	exit 1
fi

# The part of a report that both tools print alike (see the top).
norm() {
	sed '1d' | grep -v '^#$' | sed '/^# (Tip:/,$d' | awk 'NF { for (; e > 0; e--) print ""; print; next } { e++ }'
}

# PLT stubs: we name a sample in libc's .plt.sec NAME@plt where perf 6.1
# shows the address, or "@plt" without the name (__tunable_get_val's), or
# the symbol before the stub ("_init"; docs/report.md, "Not as perf";
# tests/lib/folded_cmp.py and pprof_cmp.py know the same names), and
# whether a sample lands in one is luck (ld.so calls libc's stubs at
# start-up).  When ours has such a row, it and perf's row of the same
# share and columns before the symbol that names no stub are left out on
# both sides, and the widths (which the longer name changes) are not
# compared.
unplt() {
	python3 - "$1" "$2" <<'PY'
import re, sys
ours = open(sys.argv[1]).read().split("\n")
perf = open(sys.argv[2]).read().split("\n")
# (A stub perf names as we do, ld.so's _dl_catch_exception@plt, is no
# difference: its row stays on both sides.)
same = {" ".join(l.split()) for l in perf}
plt = [l for l in ours if re.search(r"\] \S+@plt\s*$|\] \S+@plt ", l) and not l.startswith("#")
       and " ".join(l.split()) not in same]
if not plt:
    sys.exit(0)
def key(l):
    return " ".join(l.split("[")[0].split())
keys = [key(l) for l in plt]
mine = {" ".join(l.split()) for l in ours}
ours = [l for l in ours if l not in plt]
out = []
for l in perf:
    k = key(l)
    # (perf's name of the stub: an address, "@plt", another stub's
    # NAME@plt (libc's), or _init; not a row that is ours too)
    if (not l.startswith("#") and k in keys and " ".join(l.split()) not in mine and
            re.search(r"\] (0x[0-9a-f]+|\S*@plt|_init)(\s|$)", l)):
        keys.remove(k)
        continue
    out.append(l)
# (and the column rulers "# ....  ...." as one dot a column: the widths
# are not compared)
flat = lambda l: re.sub(r"\.+", ".", l) if re.fullmatch(r"# [. ]+", l.rstrip()) else l
squeeze = lambda ls: "\n".join(" ".join(flat(l).split()) for l in ls)
open(sys.argv[1], "w").write(squeeze(ours))
open(sys.argv[2], "w").write(squeeze(out))
PY
}

# same NAME OPTIONS...: our table of w.data is perf's
# (tl_report_same, with this test's norm and unplt).
same() {
	tl_report_same w.data "$@"
}

# The default: perf's comm,dso,sym, a Command column with both names.
same default
grep -q '^# Overhead  Command  Shared Object' default.ours.text ||
	fail "the default table has no Command column: $(grep -m1 Overhead default.ours.text)"
for c in pa pb; do
	grep -Eq "^ +[0-9.]+%  $c " default.ours.text || fail "the default table has no row of $c"
done

same sort-pid -s pid
same sort-pid-comm -s pid,comm
same sort-comm-pid-dso -s comm,pid,dso
# the three threads, each a row (the child named after its exec)
for t in "$main:pa" "$second:pa" "$child:pb"; do
	grep -Eq "^ +[0-9.]+% +$t " sort-pid.ours.text || fail "-s pid has no row $t"
done

# --json -s pid: each row's thread as perf's table names it
tl_case json-pid
"$DSOSTORE" report --no-fetch --json -s pid w.data >pid.json 2>pid.json.err ||
	fail "--json -s pid: exit status $?: $(head -3 pid.json.err)"
python3 -c '
import json, sys
for ev in json.load(open(sys.argv[1]))["events"]:
    for e in ev["entries"]:
        print("%d:%s %d" % (e["tid"], e["thread"], e["pid"]))' pid.json | sort >pid.json.rows ||
	fail "--json -s pid: not JSON with tid, thread and pid"
perf report -i w.data --stdio -s pid 2>/dev/null | awk '$2 ~ /^[0-9]+:/ {print $2}' | sort >pid.perf.rows
cut -d' ' -f1 pid.json.rows | cmp -s - pid.perf.rows || fail "--json -s pid: not perf's threads"
for t in "$main:pa $main" "$second:pa $main" "$child:pb $child"; do
	grep -qxF "$t" pid.json.rows || fail "--json -s pid: no '$t' (TID:NAME PID)"
done
tl_case_end

# Filters: one name elides its column (and says so), two keep it; the
# shares stay of every sample.
same comm-one --comm pb
grep -qxF '# comm: pb' comm-one.ours.text || fail "--comm pb: no '# comm: pb' line"
! grep -q ' pa ' comm-one.ours.text || fail "--comm pb: a row of pa"
same comm-two --comm pa,pb
same pid -s pid,dso,sym --pid "$main"
! grep -q ":pb " pid.ours.text || fail "--pid $main: a row of the child"
same tid -s pid,sym --tid "$second"
[ "$(grep -cE '^ +[0-9.]+%' tid.ours.text)" -gt 0 ] && ! grep -q "  $main:" tid.ours.text ||
	fail "--tid $second: not the second thread's rows alone"
same tids -s pid --tid "$second,$child"
same dsos-one --dsos libpw.so
grep -qxF '# dso: libpw.so' dsos-one.ours.text || fail "--dsos libpw.so: no '# dso:' line"
same dsos-two --dsos pa,pb
same dsos-path --dsos "$tmp/pb"
same symbols-one --symbols burn_a
grep -qxF '# symbol: burn_a' symbols-one.ours.text || fail "--symbols burn_a: no '# symbol:' line"
same symbols-two -s comm,sym --symbols burn_a,burn_c
same symbols-comm -s comm,sym --symbols lib_burn --comm pa

# -F: the columns in its order, the rows by -s then the fields, or by the
# fields alone.
same fields-overhead-comm -F overhead,comm
same fields-numbers -F overhead,sample,period,comm,dso
same fields-comm-first -F comm,overhead
same fields-and-sort -F sample,dso -s sym
same fields-pid -F overhead,sym,pid
same show-nr -n

# --header: perf's header block first, then the same table.
tl_case header
perf report -i w.data --header-only >header.perf 2>/dev/null
"$DSOSTORE" report --header-only w.data >header.ours 2>header.err ||
	fail "--header-only: exit status $?: $(head -3 header.err)"
for f in hostname 'os release' 'perf version' arch 'nrcpus online' 'nrcpus avail' cpudesc \
	'total memory' cmdline; do
	grep -q "^# $f : ." header.ours || fail "--header-only: no '$f' line"
done
sed 's/ : .*/ : /' header.ours | grep -v '^# =*$' | grep -v '^#$' >prefixes
grep -F -f prefixes header.perf >header.perf.ours
grep -v '^# =*$' header.ours | grep -v '^#$' | cmp -s - header.perf.ours || {
	fail "--header-only: not perf's lines"
	diff header.perf.ours header.ours >&2
}
[ "$(head -1 header.ours)" = "# ========" ] && [ "$(tail -2 header.ours | head -1)" = "# ========" ] ||
	fail "--header-only: not between perf's '# ========' lines"
"$DSOSTORE" report --header --no-fetch w.data >header.full 2>/dev/null
cmp -s <(head -n "$(wc -l <header.ours)" header.full) header.ours ||
	fail "--header: the table is not preceded by the header block"
tail -n +"$(($(wc -l <header.ours) + 1))" header.full | norm | cmp -s - default.ours.text ||
	fail "--header: not the default table after the block"
tl_case_end

tl_finish report_perfopts
