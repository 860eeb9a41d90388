#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dsostore as binutils' addr2line: perf 6.1 resolves
# every srcline by running `addr2line -e FILE -i -f` once per DSO and
# writing "ADDR\n,\n" per address; `dsostore addr2line`, the same binary
# run through a link named addr2line, and `dsostore symbolize -e FILE`
# must answer as binutils 2.40 does.  The oracle is binutils itself, on
# the same inputs:
#  - the pipe protocol, driven as perf drives it (tests/lib/a2l_pipe.py: the
#    request, then ",", read until the "," is answered; a 10 s wait is an
#    answer not flushed), with the flag sets perf and people use: function
#    starts and addresses all over .text (inline chains, PLT stubs, the
#    padding between functions), 0x and not, upper case, outside every
#    section, the "," sentinel and other junk (empty, words, signs,
#    SYMBOL+OFFSET, a line over fgets()'s 99 bytes, a NUL), in C and C++;
#  - every address of .text and around it in one stdin stream;
#  - the command line: exit statuses and messages of missing, empty,
#    non-ELF, archive and directory files, -j sections, -b and --demangle
#    arguments, @FILE, permuted options, the a.out default;
#  - perf itself: `perf report --stdio -s sym,srcline`, `perf script -F
#    ip,sym,srcline` and `perf annotate --stdio -l` of a recording, run
#    with binutils' addr2line and with PATH=<link dir>:$PATH: the same
#    output (perf's random "Tip" line aside), for the program's samples
#    (--dsos w: in glibc's DWARF 5 binutils 2.40 names some lines after
#    the wrong file, docs/oracles.md);
#  - a stripped binary (strip -g: symbols kept) whose debuginfo only a
#    debuginfod server (dsserver on 127.0.0.1) has: perf with binutils
#    gives its samples no source lines, perf with ours does, and its
#    rows are those perf with binutils prints once the debuginfo is in
#    perf's build-id cache;
#  - perf 6.12 (scripts/peers), when there: the same report, script and
#    annotate with --addr2line=binutils' and =ours, and the stripped
#    binary before and after its debuginfo is in perf's cache.
# Known difference, not tested: an address of a variable, which binutils
# names with its declaration's line (docs/oracles.md).
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc g++ objcopy strip addr2line python3 readelf nm ar
tl_tmpdir dsa2l
cd "$tmp" || exit 2
export HOME=$tmp/home
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
export DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
export DSOSTORE_SYMINDEX_PATH=$tmp/symindex
tl_sanitizer_exitcodes
py=$(python3 -c 'import sys; print(sys.executable)') || py=python3
gnu=$(command -v addr2line)
mkdir -p a2l
ln -s "$DSOSTORE" a2l/addr2line
ours=$tmp/a2l/addr2line

# ----------------------------------------------------------- programs
cat >w.c <<'EOF'
#include <stdio.h>

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	x ^= x << 13; x ^= x >> 7; x ^= x << 17;
	return x;
}

__attribute__((noinline)) unsigned long burn_a(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++) {
		x = mix(x);
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static __attribute__((noinline)) unsigned long burn_c(unsigned long n, unsigned long x,
						      unsigned long k)
{
	for (unsigned long i = 0; i < n; i++) {
		x = mix(x * k + i);
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

int main(void)
{
	unsigned long x = 1, n = 30000000;

	x = burn_a(n, x);
	x = burn_c(n, x, 7);
	printf("%lx\n", x);
	return 0;
}
EOF
cat >cx.cc <<'EOF'
#include <cstdio>
#include <vector>

namespace ns {
template <typename T> struct Acc {
	T v{};
	inline __attribute__((always_inline)) void add(T x) { v = v * 31 + x; }
};

static __attribute__((noinline)) long work(const std::vector<long> &xs)
{
	Acc<long> a;
	for (long x : xs)
		a.add(x);
	return a.v;
}
} // namespace ns

int main()
{
	std::vector<long> xs(1000, 7);
	long s = 0;

	for (int i = 0; i < 100; i++)
		s += ns::work(xs);
	printf("%ld\n", s);
}
EOF
mkdir -p s srv
if ! gcc -O2 -g -o w w.c || ! g++ -O2 -g -o cx cx.cc; then
	echo "FAIL: cannot build the programs" >&2
	exit 1
fi
objcopy --only-keep-debug w srv/w.debug && strip -g -o s/w w || fail "cannot split w's debuginfo"

# text FILE: start and end of .text, hex.
text() {
	readelf -SW "$1" | awk '$2 == ".text" {print $4, $6}'
}

# ------------------------------------------------------ pipe protocol
# The requests for FILE, into req.FILE: its function starts and a few
# bytes in, every 5th byte of .text, around .text, junk, its PLT stubs.
# req.FILE.plain has the starts, the junk and what is outside, for
# `dsostore symbolize`, which answers each address as binutils does in a
# fresh process (its names do not depend on what was asked before) and
# names PLT stubs NAME@plt as objdump does, where binutils
# has "??".
requests() {
	local f=$1
	"$py" - "$f" >req.$f <<'PY'
import subprocess, sys
f = sys.argv[1]
syms = subprocess.run(["nm", f], capture_output=True, text=True).stdout.split("\n")
funcs = sorted(int(l.split()[0], 16) for l in syms if len(l.split()) == 3 and l.split()[1] in "tT")
sec = subprocess.run(["readelf", "-SW", f], capture_output=True, text=True).stdout
plts, txt = [], None
for l in sec.split("\n"):
    w = l.replace("[ ", "[").split()
    if len(w) > 5 and w[1] == ".text":
        txt = (int(w[3], 16), int(w[5], 16))
    if len(w) > 5 and w[1].startswith(".plt"):
        plts.append((int(w[3], 16), int(w[5], 16)))
in_plt = lambda a: any(s <= a < s + n for s, n in plts)
out, plain = [], []
for a in funcs:
    out += ["%x" % a, "0x%x" % (a + 1), "%016x" % (a + 5), "0X%X" % (a + 9)]
    plain += ["%x" % a, "0X%X" % a]
s, n = txt
out += ["%016x" % a for a in range(s - 16, s + n + 16, 5) if not in_plt(a)]
junk = ["0", "%016x" % 0, "10", "ffffffff", "ffffffffffffffff", "1" * 20,
        ",", "", "zz", "  +10", "-1", "main", "main+4", "0x", "0x%x garbage" % funcs[0],
        "x" * 150, "0" * 120 + "%x" % funcs[0], "\0%x" % funcs[0], "%x\0zz" % funcs[0]]
out += junk
open("req.%s.plain" % f, "w").write("\n".join(plain + junk) + "\n")
for s, n in plts:
    out += ["%016x" % a for a in range(s, s + n, 3)]
sys.stdout.write("\n".join(out) + "\n")
PY
}

# pipe NAME FILE FLAGS...: the protocol with binutils and ours (the link,
# `dsostore addr2line`, `dsostore symbolize` for perf's flag sets).
pipe() {
	local name=$1 f=$2 impl perfs=0 req gnu_out
	local -a cmd
	shift 2
	case "$*" in "-i -f" | "-a -i -f") perfs=1 ;; esac
	for req in req.$f req.$f.plain; do
		"$py" "$DS_SRC/tests/lib/a2l_pipe.py" "$req" "$name.gnu${req#req.$f}" -- \
			"$gnu" -e "$f" "$@" 2>"$name.gnu.err" || {
			fail "$name: binutils: $(cat "$name.gnu.err")"
			return
		}
	done
	for impl in link cmd symbolize; do
		# The other two ways in: perf's flag sets only.
		[ $impl = link ] || [ $perfs = 1 ] || continue
		case $impl in
		link) cmd=("$ours" -e "$f" "$@") ;;
		cmd) cmd=("$DSOSTORE" addr2line -e "$f" "$@") ;;
		symbolize) cmd=("$DSOSTORE" symbolize -e "$f" "$@") ;;
		esac
		req=req.$f gnu_out=$name.gnu
		if [ $impl = symbolize ]; then
			req=req.$f.plain gnu_out=$name.gnu.plain
		fi
		if ! "$py" "$DS_SRC/tests/lib/a2l_pipe.py" "$req" "$name.$impl" -- "${cmd[@]}" \
			2>"$name.$impl.err"; then
			fail "$name ($impl): $(cat "$name.$impl.err")"
		elif ! cmp -s "$gnu_out" "$name.$impl"; then
			fail "$name ($impl): not binutils' answers: $(diff "$gnu_out" "$name.$impl" | head -8)"
		fi
	done
}

for f in w cx; do
	requests $f
	tl_case "pipe protocol, $f"
	pipe "p-$f-perf" $f -i -f
	pipe "p-$f-perf62" $f -a -i -f
	pipe "p-$f-none" $f
	pipe "p-$f-f" $f -f
	pipe "p-$f-a" $f -a
	pipe "p-$f-C" $f -C -f -i
	pipe "p-$f-p" $f -p -a -f -i
	pipe "p-$f-s" $f -s -f
	# The answers were about the program: lines, inline frames, names.
	grep -q "$f\.c*:[0-9]" "p-$f-perf.gnu" || fail "binutils named no line of $f: the test proves nothing"
	tl_case_end "$(grep -c '^>' "p-$f-perf.gnu") requests"
done
grep -q "'mix" p-w-perf.gnu || fail "no inline frame of mix() in the answers"
grep -q "'ns::work" p-cx-C.gnu || fail "no demangled ns::work in the -C answers"

# Every address of .text and 64 bytes around it, one stream.
tl_case "all of .text in one stream"
for f in w cx; do
	read -r s n < <(text $f)
	"$py" -c "
s, n = int('$s', 16), int('$n', 16)
print('\n'.join('%x' % a for a in range(s - 64, s + n + 64)))" >all.$f
	for flags in "-a -f -i" "-f -i -C"; do
		# shellcheck disable=SC2086 # the flags are words
		"$gnu" $flags -e $f <all.$f >all.$f.gnu
		# shellcheck disable=SC2086
		"$ours" $flags -e $f <all.$f >all.$f.ours 2>all.$f.err || fail "$f $flags: exit $?"
		cmp -s all.$f.gnu all.$f.ours ||
			fail "$f $flags: $(diff all.$f.gnu all.$f.ours | head -6)"
	done
done
tl_case_end

# ------------------------------------------------------- command line
# same ARGS...: binutils and ours alike: stdout, stderr (program name
# aside), exit status.
same() {
	local rg ro
	"$gnu" "$@" >cl.gnu 2>cl.gnu.err </dev/null
	rg=$?
	"$ours" "$@" >cl.ours 2>cl.ours.err </dev/null
	ro=$?
	sed -i "s|^$ours:|addr2line:|; s|^$gnu:|addr2line:|" cl.gnu.err cl.ours.err
	if [ $rg != $ro ] || ! cmp -s cl.gnu cl.ours || ! cmp -s cl.gnu.err cl.ours.err; then
		fail "addr2line $*: binutils exit $rg, ours $ro: $(diff cl.gnu cl.ours | head -4)" \
			"$(diff cl.gnu.err cl.ours.err | head -4)"
	fi
}
tl_case "command line"
a=$(nm w | awk '$3 == "burn_a" {print $1}')
: >empty
ar rc lib.a w.c
printf -- '-f -e w %s\n' "$a" >opts
same -e nonexistent 1
same -e empty 1
same -e w.c 1
same -e lib.a 1
same -e "$tmp" 1
same -e /dev/null 1
same -e w -j .text 0 10 1000 -f -a
same -e w -j .data 0 -f
same -e w -j .comment 0 -f
same -e w -j .nosuch 0
same -b elf64-x86-64 -e w -f "$a"
same -b nosuchtarget -e w "$a"
same --demangle=gnu-v3 -e cx -f "$(nm cx | awk '/workERK/ {print $1}')"
same --demangle=none -e cx -f "$(nm cx | awk '/workERK/ {print $1}')"
same --demangle=nosuchstyle -e w 0
same @opts
same "$a" -e w -f -a
same -fai -e w -- "$a"
same --func --exe=w --inl "$a"
same -ew "$a" main burn_a+4
same -e w -r -R --no-recurse-limit "$a"
cd "$tmp/s" || exit 2
cp ../w a.out && same "$a"
rm -f a.out && same "$a"
cd "$tmp" || exit 2
# Messages ours words, statuses binutils'.
for args in "-x" "--nosuch" "-j"; do
	# shellcheck disable=SC2086
	"$ours" $args >/dev/null 2>cl.err
	rc=$?
	[ $rc = 1 ] || fail "addr2line $args: exit $rc, not 1"
	grep -q '^Usage: ' cl.err || fail "addr2line $args: no usage on stderr: $(head -2 cl.err)"
done
for args in "-h" "--help" "-v" "-V" "--version"; do
	"$ours" $args >cl.out 2>&1 || fail "addr2line $args: exit $?"
	[ -s cl.out ] || fail "addr2line $args printed nothing"
done
tl_case_end

# --------------------------------------------------------------- perf
if ! perf record -N -e cpu-clock -F 4000 -o w.data -- ./w >w.rec 2>&1; then
	echo "perf record -e cpu-clock is not permitted here: perf parts skipped:" >&2
	sed 's/^/  /' w.rec >&2
	tl_finish perf_addr2line
fi

# twice NAME CMD...: CMD run with binutils' addr2line and with ours
# first in PATH; NAME.gnu and NAME.ours, perf's random tip line out.
twice() {
	local name=$1
	shift
	"$@" 2>"$name.gnu.err" | grep -v '^# (Tip:' >"$name.gnu"
	PATH=$tmp/a2l:$PATH "$@" 2>"$name.ours.err" | grep -v '^# (Tip:' >"$name.ours"
}

tl_case "perf report -s sym,srcline"
twice report perf report -i w.data --stdio -s sym,srcline --dsos w
grep -q -E '\] burn_a +w\.c:[0-9]+' report.gnu ||
	fail "perf (binutils) gives burn_a no w.c line: $(grep '%' report.gnu | head -3)"
cmp -s report.gnu report.ours || fail "$(diff report.gnu report.ours | head -10)"
tl_case_end "$(grep -c 'w\.c:' report.ours) w.c rows"

tl_case "perf script -F ip,sym,srcline"
twice script perf script -i w.data -F ip,sym,srcline --dsos w
grep -q 'w\.c:[0-9]' script.gnu || fail "perf script (binutils) printed no w.c line"
cmp -s script.gnu script.ours || fail "$(diff script.gnu script.ours | head -10)"
tl_case_end "$(wc -l <script.ours) lines"

tl_case "perf annotate --stdio -l"
twice annotate perf annotate -i w.data --stdio -l burn_a
grep -q 'w\.c:[0-9]' annotate.gnu || fail "perf annotate (binutils) summed no w.c line"
cmp -s annotate.gnu annotate.ours || fail "$(diff annotate.gnu annotate.ours | head -10)"
tl_case_end

# ---------------------------------------------------- stripped binary
tl_case "stripped, debuginfo from debuginfod"
tl_need_dsserver
if perf record -N -e cpu-clock -F 4000 -o s.data -- ./s/w >s.rec 2>&1 &&
	tl_start_dsserver port server --max-runtime 120 "$tmp/srv"; then
	export DEBUGINFOD_URLS=http://127.0.0.1:$port
	twice stripped perf report -i s.data --stdio -s sym,srcline --dsos w
	export DEBUGINFOD_URLS=
	grep -q -E '\] burn_a ' stripped.gnu ||
		fail "perf does not name burn_a in the stripped binary: $(grep % stripped.gnu | head -3)"
	! grep -q 'w\.c:' stripped.gnu ||
		fail "binutils found lines for the stripped binary (the test proves nothing)"
	grep -q -E '\] burn_a +w\.c:[0-9]+' stripped.ours ||
		fail "perf with ours: no burn_a w.c line: $(grep % stripped.ours | head -3)"
	# perf with binutils, the debuginfo in perf's build-id cache.
	hex=$(tl_build_id s/w)
	dir=$HOME/.debug$tmp/s/w/$hex
	mkdir -p "$dir" "$HOME/.debug/.build-id/${hex:0:2}"
	cp srv/w.debug "$dir/debug"
	ln -sfn "../..$tmp/s/w/$hex" "$HOME/.debug/.build-id/${hex:0:2}/${hex:2}"
	perf report -i s.data --stdio -s sym,srcline --dsos w 2>/dev/null |
		grep -v '^# (Tip:' >cached.gnu
	grep -q -E '\] burn_a +w\.c:[0-9]+' cached.gnu ||
		fail "perf with its cache gives burn_a no line: the oracle is broken"
	cmp -s cached.gnu stripped.ours || fail "$(diff cached.gnu stripped.ours | head -10)"
else
	fail "perf record of the stripped binary or dsserver failed: $(tail -3 s.rec)"
fi
tl_case_end

# ------------------------------------------------------ perf 6.12
# perf 6.12 (scripts/peers; built without libbfd and without LLVM, so it
# runs an addr2line as 6.1 does, the one --addr2line=PATH names, else
# addr2line on PATH) reading the same recordings, with binutils' and with
# ours: the same output.  The stripped binary as above, in a HOME of its
# own whose build-id cache starts empty.
perf612=$(tl_peer_or_none perf-6.12)
if [ -z "$perf612" ]; then
	tl_finish perf_addr2line "ok (no perf-6.12: its part skipped)"
	exit 0
fi
# twice612 NAME ARGS...: perf 6.12 ARGS --addr2line=binutils' (NAME.gnu)
# and --addr2line=ours (NAME.ours), the tip line out.
twice612() {
	local name=$1
	shift
	"$perf612" "$@" --addr2line="$gnu" 2>"$name.gnu.err" | grep -v '^# (Tip:' >"$name.gnu"
	"$perf612" "$@" --addr2line="$ours" 2>"$name.ours.err" | grep -v '^# (Tip:' >"$name.ours"
}
tl_case "perf 6.12 --addr2line"
twice612 r612 report -i w.data --stdio -s sym,srcline --dsos w
twice612 s612 script -i w.data -F ip,sym,srcline --dsos w
twice612 a612 annotate -i w.data --stdio -l burn_a
for n in r612 s612 a612; do
	grep -q 'w\.c:[0-9]' "$n.gnu" || fail "$n: perf 6.12 (binutils) printed no w.c line: $(head -3 "$n.gnu.err")"
	cmp -s "$n.gnu" "$n.ours" || fail "$n: $(diff "$n.gnu" "$n.ours" | head -10)"
done
tl_case_end

tl_case "perf 6.12, stripped, debuginfo from debuginfod"
# Unlike 6.1, perf 6.12 does not run the addr2line for a DSO whose file
# it found no debug info in (seen with an addr2line that logs its
# arguments: only libc's /usr/lib/debug file is asked for): on the
# stripped binary, DEBUGINFOD_URLS set, ours gets no request and no row
# has a line, as with binutils (docs/oracles.md).  With the debuginfo in
# perf's build-id cache (HOME's, which the 6.1 case above filled), the
# two addr2lines give the same lines.
if [ -n "${port:-}" ] && [ -s s.data ]; then
	mkdir -p home612
	HOME=$tmp/home612 DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/dcache612 \
		twice612 s612strip report -i s.data --stdio -s sym,srcline --dsos w
	grep -q -E '\] burn_a ' s612strip.gnu ||
		fail "perf 6.12 does not name burn_a in the stripped binary: $(grep % s612strip.gnu | head -3)"
	! grep -q 'w\.c:' s612strip.gnu s612strip.ours ||
		fail "perf 6.12 found lines for the stripped binary without its debuginfo"
	cmp -s s612strip.gnu s612strip.ours || fail "$(diff s612strip.gnu s612strip.ours | head -10)"
	twice612 c612 report -i s.data --stdio -s sym,srcline --dsos w
	grep -q -E '\] burn_a +w\.c:[0-9]+' c612.gnu ||
		fail "perf 6.12 with its cache gives burn_a no line: the oracle is broken"
	cmp -s c612.gnu c612.ours || fail "$(diff c612.gnu c612.ours | head -10)"
else
	fail "no recording of the stripped binary or no dsserver (above)"
fi
tl_case_end

tl_finish perf_addr2line
