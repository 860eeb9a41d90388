#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Text a terminal can trust (docs/output.md): a program whose every name
# is hostile is recorded and inspected live, and no command's text output
# may carry a byte a terminal acts on (a C0 control but the newline ending
# a line and the tab, DEL, C1, a bidi control, a byte outside UTF-8), while
# each name shows in its escaped form.  The names, all carrying an ESC
# sequence and a right-to-left override (U+202E):
#  - the thread's name (prctl(PR_SET_NAME)): report's comm, --folded's root;
#  - the executable's file name: report's Shared Object, buildid-list,
#    normalize, stack, the DSO path everywhere;
#  - the source file's name (DWARF): symbolize's and stack's file:line;
#  - an ELF symbol (an assembler name in quotes, which may hold any byte):
#    report's Symbol, --folded's frames, stack's function;
#  - a JIT function's name in /tmp/perf-PID.map: symbolize --pid,
#    normalize ("jit NAME"), report's JIT rows;
#  - a file name quoted by an error message.
# What each name must look like is worked out by tests/lib/termcheck.py
# from the raw bytes (Python's strict UTF-8 decoder), never from our
# output; that the inputs really carry the bytes is checked with nm and
# perf report, which print them raw.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc nm python3
tl_tmpdir dsterm
cd "$tmp" || exit 2
export HOME=$tmp/home DSOSTORE_SYMINDEX_PATH=$tmp/derived DEBUGINFOD_URLS=
mkdir -p "$HOME" src bin
tl_sanitizer_exitcodes
tl_perf_or_skip
py=$(python3 -c 'import sys; print(sys.executable)') || py=python3
check="$DS_SRC/tests/lib/termcheck.py"

# The raw names (bash $'...': the bytes themselves).
comm=$'\e[31mev\nil\xe2\x80\xae' # 13 bytes: within a comm's 15; a newline
exe=$'pr\e[32mog\xe2\x80\xaetxt\xc2\x9b'
srcname=$'t\e[33m\xe2\x81\xa6\x9b.c' # and U+2066, a raw 0x9b (not UTF-8)
sym=$'sp\e[31min\xe2\x80\xae\x7f'
jit=$'jit\e]0;title\a\xe2\x80\xae' # an OSC sequence (a map line holds no newline)
# What the CLI must print for each, by termcheck.escape().
esc() { "$py" -c 'import sys; sys.path.insert(0, sys.argv[1]); import termcheck
sys.stdout.write(termcheck.escape(sys.argv[2].encode("utf-8", "surrogateescape")))' \
	"$DS_SRC/tests/lib" "$1"; }
e_comm=$(esc "$comm") e_exe=$(esc "$exe") e_src=$(esc "$srcname") e_sym=$(esc "$sym")
e_jit=$(esc "$jit")
[ "$e_sym" = 'sp\x1b[31min\u202e\x7f' ] || fail "termcheck.escape: $e_sym"

# C escapes of the names for the program (octal: no hex digit may follow).
cstr() { "$py" -c 'import sys
b = sys.argv[1].encode("utf-8", "surrogateescape")
sys.stdout.write("".join(chr(c) if 0x20 <= c < 0x7f and chr(c) not in "\\\"?" else "\\%03o" % c
                         for c in b))' "$1"; }
cat >"src/$srcname" <<EOF
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* mov ecx, N; 1: dec ecx; jnz 1b; ret */
static const unsigned char loop[] = { 0xb9, 0x40, 0x0d, 0x03, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };

/* CPU time, not the clock's: on a loaded machine the loops below still
 * run their 0.3 and 0.2 s, and the sampler finds them. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The symbol's name, quoted for the assembler: any byte but NUL and '"'. */
__attribute__((noinline)) unsigned long spin(unsigned long h, int wait)
	__asm__("\"$(cstr "$sym")\"");
__attribute__((noinline)) unsigned long spin(unsigned long h, int wait)
{
	double end = now() + 0.3;

	while (!wait && now() < end)
		for (int i = 0; i < 1000; i++)
			h = h * 6364136223846793005UL + 1442695040888963407UL;
	while (wait)
		pause();
	__asm__ volatile("" : "+r"(h));
	return h;
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "wait");
	unsigned char *code = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double end;
	char path[64];
	FILE *f;

	if (code == MAP_FAILED)
		return 1;
	memcpy(code, loop, sizeof(loop));
	prctl(PR_SET_NAME, "$(cstr "$comm")");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!(f = fopen(path, "w")))
		return 1;
	fprintf(f, "%lx 40 %s\\n", (unsigned long)code, "$(cstr "$jit")");
	fclose(f);
	printf("%lx %lx\\n", (unsigned long)(void *)spin, (unsigned long)code);
	fflush(stdout);
	for (end = now() + 0.2; !wait && now() < end;)
		((void (*)(void))code)();
	/* the map stays for report, which reads it after the run */
	printf("%lx\\n", spin(1, wait));
	return 0;
}
EOF
(cd src && gcc -g -O1 -o "../bin/$exe" "$srcname") 2>gcc.log ||
	{ echo "FAIL: cannot build the workload: $(head -5 gcc.log)" >&2; exit 1; }
nm "bin/$exe" | grep -qaF -- "$sym" || fail "nm does not show the raw symbol: the test proves less"

# 1. A recording.
perf record -q -N -e cpu-clock -o p.data -- "./bin/$exe" >run.out 2>perf.err ||
	{ echo "FAIL: perf record: $(tail -3 perf.err)" >&2; exit 1; }
pid_rec=$(perf script -i p.data -F pid 2>/dev/null | head -1 | tr -d ' ')
perf report -i p.data --stdio --sort comm,dso,sym 2>/dev/null >perf.txt
grep -qaF -- "${comm#*$'\n'}" perf.txt && grep -qaF -- "$sym" perf.txt ||
	fail "perf report does not show the raw comm and symbol: the test proves less"

# run NAME ARGS...: dsostore ARGS, stdout in NAME.out, stderr NAME.err,
# both checked by termcheck; its status in rc.
run() {
	local name=$1

	shift
	"$DSOSTORE" "$@" >"$name.out" 2>"$name.err"
	rc=$?
	"$py" "$check" "$name.out" "$name.err" || fail "$name: a byte a terminal acts on"
}
has() { # has NAME TEXT WHAT: NAME.out holds TEXT
	grep -qF -- "$2" "$1.out" || fail "$1: no $3 '$2': $(head -c 600 "$1.out")"
}

run report report -i p.data --no-fetch --sort comm,dso,sym
[ "$rc" = 0 ] || fail "report: exit $rc: $(head -3 report.err)"
has report "$e_comm" comm
has report "$e_exe" "shared object"
has report "$e_sym" symbol
has report "$e_jit" "JIT name"
# a newline inside a name would start a row of its own: every row here
# is header, blank or "  SHARE%  ..."
grep -vE '^(#.*|| +[0-9]+\.[0-9]+%  .*)$' report.out >stray.txt &&
	fail "report: lines that are no row: $(head -3 stray.txt)"

run folded report -i p.data --no-fetch --folded
[ "$rc" = 0 ] || fail "report --folded: exit $rc: $(head -3 folded.err)"
# stackcollapse-perf.pl: the comm (spaces as '_') is the root, frames by ';'
grep -qE -- "^$(printf '%s' "$e_comm" | sed 's/[][\.*^$]/\\&/g')(;[^;]*)*;$(printf '%s' "$e_sym" |
	sed 's/[][\.*^$]/\\&/g') [0-9]+$" folded.out ||
	fail "report --folded: no stack COMM;...;SYM COUNT: $(head -3 folded.out)"

run bidlist buildid-list -i p.data
has bidlist "$e_exe" path

# 2. The program alive, blocked in the hostile function.
"./bin/$exe" wait >live.out 2>live.err &
live=$!
pids+=("$live")
tl_also_rm+=("/tmp/perf-$live.map")
for ((i = 0; i < 100; i++)); do
	[ -s live.out ] && break
	sleep 0.05
done
read -r a_sym a_jit <live.out || fail "the live program said no addresses"
# (it says them before it calls spin(): asleep in pause() it is there)
for ((i = 0; i < 100; i++)); do
	# (the state follows the last ") ": the comm, in parentheses, has spaces)
	[ "$(sed 's/.*) //; s/ .*//' "/proc/$live/stat" 2>/dev/null)" = S ] && break
	sleep 0.05
done
if [ -n "${a_sym:-}" ]; then
	run sympid symbolize -f --pid "$live" "0x$a_sym" "0x$a_jit"
	run symllvm symbolize --output-style LLVM --pid "$live" "0x$a_sym" "0x$a_jit"
	has symllvm "$e_jit" "JIT name"
	has sympid "$e_src" "source file"
	has sympid "$e_jit" "JIT name"
	run norm normalize --pid "$live" "0x$a_sym" "0x$a_jit"
	has norm "$e_exe" path
	has norm "jit $e_jit" "JIT name"
	run stack stack -p "$live" --no-fetch
	if [ "$rc" = 0 ] || [ "$rc" = 1 ]; then
		has stack "$e_sym" function
		has stack "$e_exe" module
		run stackgdb stack -p "$live" --no-fetch --format gdb
		has stackgdb "$e_src" "source file"
	else
		echo "note: stack -p could not attach (exit $rc): $(head -1 stack.err)"
	fi
	# addr2line's personality: the file of the ELF address
	a_vaddr=$(nm "bin/$exe" | grep -aF -- "$sym" | cut -d' ' -f1)
	run a2l addr2line -f -e "bin/$exe" "0x$a_vaddr"
	has a2l "$e_src" "source file"
fi
kill "$live" 2>/dev/null
wait "$live" 2>/dev/null
rm -f "/tmp/perf-$live.map" "/tmp/perf-$pid_rec.map"

# 3. An error message quoting a file name.
run err buildid-list -i "no$comm"
[ "$rc" != 0 ] || fail "buildid-list of a missing file: exit 0"
grep -qF -- "no$e_comm" err.err || fail "error: the name not escaped: $(cat err.err)"

tl_finish terminal_text
