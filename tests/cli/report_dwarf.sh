#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Recordings of perf record --call-graph dwarf: the user stack of each
# sample (registers and a copy of the stack's top) unwound by lib/live/unwind.c
# (libdwfl, CFI of the mapped files) must give the callchains perf 6.1
# unwinds (with libunwind here: perf version --build-options).  A program
# of known call paths (three callers of one hot function, a recursion,
# a shared library calling back into the program, a burner in the
# library), gcc -O2 -g -fomit-frame-pointer, so that frame pointers cannot
# unwind it (checked: perf's own -g recording of it has none of its call
# paths).  Then:
#  - dsostore report --stdio against perf report --stdio --no-inline, for
#    --no-children and --children, call graphs in several shapes: the
#    tables after their headers, line for line (with --children, rows of
#    one Children share may come in another order: compared as a set);
#    --max-stack too, which keeps an unwound stack's frames nearest the
#    sample in either order;
#  - perf's default (inline frames in callchains) differs from its
#    --no-inline only by "NAME (inlined)" lines that stand for or come
#    before an entry (perf 6.1 expands each callchain address into its
#    DWARF frames, docs/oracles.md; we print the ELF symbol's frame only);
#  - report --folded against perf script --no-inline collapsed by
#    tests/lib/stackcollapse.py, stack for stack (a PLT stub perf names "@plt"
#    is our NAME@plt: tests/lib/folded_cmp.py); also for the program recorded
#    to a pipe and with -z;
#  - first principles: the program's call paths, each down to _start;
#  - shapes every sample of a program has: a CFA found from rbx that the
#    callee left alone, and (its recording with the maps moved) a user PC
#    no recorded map covers;
#  - gcc -c (a multi-process workload), sample by sample: perf's chain,
#    or where perf's libunwind gives up early, frames of ours that each
#    follow a call instruction (tests/lib/unwind_cmp.py).
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"
: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc python3

tl_tmpdir dsdwarf
cd "$tmp" || exit 2
export HOME=$tmp/home
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
export DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
tl_sanitizer_exitcodes
tl_perf_or_skip
py=$(python3 -c 'import sys; print(sys.executable)') || py=python3

cat >libdw1.c <<'EOF'
#define KEEP(x) __asm__ volatile("" : "+r"(x))
__attribute__((noinline)) unsigned long lib_burn(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++) {
		x = x * 31 + i;
		KEEP(x);
	}
	return x;
}

/* A frame of its own on the stack (a buffer), then a call back. */
unsigned long lib_step(unsigned long n, unsigned long x,
		       unsigned long (*fn)(unsigned long, unsigned long))
{
	unsigned long buf[8];

	for (int i = 0; i < 8; i++)
		buf[i] = x + (unsigned long)i;
	__asm__ volatile("" ::"r"(buf) : "memory");
	x = fn(n, x ^ buf[3]);
	KEEP(x);
	return x + 1;
}
EOF
cp "$DS_SRC/tests/gen/cgprog/cg.c" dw.c
if ! gcc -O2 -g -fomit-frame-pointer -fPIC -shared -o libdw1.so libdw1.c ||
	! gcc -O2 -g -fomit-frame-pointer -o dw dw.c -L. -ldw1 -Wl,-rpath,'$ORIGIN'; then
	echo "FAIL: cannot build the workload" >&2
	exit 1
fi
if ! perf record -N --call-graph dwarf -e cpu-clock -F 4000 -o dw.data -- ./dw >rec.log 2>&1; then
	fail "perf record --call-graph dwarf: $(tail -3 rec.log)"
	tl_finish report_dwarf
fi
perf record -N -g -e cpu-clock -F 4000 -o fp.data -- ./dw >rec-fp.log 2>&1 ||
	fail "perf record -g: $(tail -3 rec-fp.log)"

# ------------------------------------------------------ report --stdio
tl_case "report --stdio as perf report --stdio --no-inline"
# NAME|OPTIONS
cases=(
	"nc|--no-children"
	"nc-caller|--no-children -g caller"
	"nc-G|--no-children -G"
	"nc-g0|--no-children -g graph,0"
	"nc-fractal|--no-children -g fractal,0"
	"nc-folded|--no-children -g folded,0"
	"nc-sym|--no-children --sort sym"
	"nc-pl|--no-children --percent-limit 5"
	"ch|--children"
	"ch-g0|--children -g graph,0"
	"ch-callee|--children -g callee"
	"nc-ms2|--no-children --max-stack 2"
	"nc-G-ms3|--no-children -G --max-stack 3"
	"ch-ms3|--children --max-stack 3"
	"ch-callee-ms2|--children -g callee --max-stack 2"
)
for c in "${cases[@]}"; do
	name=${c%%|*} opts=${c#*|}
	# shellcheck disable=SC2086 # the options are words
	perf report -i dw.data --stdio --no-inline --sort dso,sym $opts >"$name.perf" \
		2>"$name.perferr" || fail "perf report $opts: $(head -3 "$name.perferr")"
	rc=0
	# shellcheck disable=SC2086
	"$DSOSTORE" report --no-fetch --sort dso,sym $opts dw.data >"$name.ours" 2>"$name.err" ||
		rc=$?
	[ "$rc" = 0 ] || fail "report $opts: exit $rc: $(head -3 "$name.err")"
	if grep -q -E 'Sanitizer|runtime error' "$name.err"; then
		fail "report $opts: sanitizer report: $(head -5 "$name.err")"
	fi
done
perf report -i dw.data --stdio --sort dso,sym --no-children >nc-inline.perf 2>/dev/null ||
	fail "perf report --no-children (inline frames)"

"$py" - "${cases[@]}" >cmp.out <<'PY' || fail "$(cat cmp.out)"
import difflib, re, sys

ROW = re.compile(r"^ +[0-9.]+%  +\S")

# a frame's whole name: NAME@plt, or _init (perf 6.1's name of a program's
# stubs: .init's zero-size _init stretched over .plt and .plt.got)
PLT = re.compile(r"(?<![^\s;|-])(?:[^\s\[\];|-]*@plt|_init)(?![^\s;|-])")
DOTS = re.compile(r"\.{2,}")

def table(path):
    """The lines from the column header on, perf's trailer and the blank
    lines at the end left out.  A sample that lands in a PLT stub is the
    sampler's luck, and perf 6.1 names some of libc's stubs "@plt", and the
    program's "_init", where we say NAME@plt (tests/lib/folded_cmp.py):
    every stub (and .init's own _init, alike on both sides) is "@plt" here, and
    the dots under the column names, as wide as the longest name, are
    compared as dots, the spaces that pad the last column's name to that
    width not at all."""
    lines = open(path, errors="replace").read().split("\n")
    lines = [DOTS.sub("..", l).rstrip() if l.startswith("#") else PLT.sub("@plt", l)
             for l in lines]
    at = [i for i, l in enumerate(lines) if re.match(r"^# (Overhead|Children) ", l)]
    if len(at) != 1:
        return None
    body = lines[at[0]:]
    while body and (not body[-1].strip() or body[-1].startswith("#")):
        body.pop()
    return body

def blocks(body):
    """Each row with the lines under it."""
    out = []
    for l in body[3:]:
        if ROW.match(l) or not out:
            out.append([l])
        else:
            out[-1].append(l)
    return [tuple(l for l in b if l.strip()) for b in out]

def plt_ties(bs):
    """perf orders rows of the same share by name, and a stub perf 6.1
    calls "@plt" sorts before every name where ours, NAME@plt, sorts by
    NAME: in a run of rows of one share, the "@plt" rows go last; the
    order of the others is still compared."""
    out, i = [], 0
    while i < len(bs):
        j = i
        share = lambda b: re.findall(r"[0-9.]+%", b[0])[:1]
        while j < len(bs) and share(bs[j]) == share(bs[i]):
            j += 1
        run = bs[i:j]
        out += [b for b in run if "@plt" not in b[0]] + sorted(b for b in run if "@plt" in b[0])
        i = j
    return out

bad, graphs = [], 0
for case in sys.argv[1:]:
    name, opts = case.split("|", 1)
    p, o = table(name + ".perf"), table(name + ".ours")
    if p is None or o is None:
        bad.append("%s: no single table (perf %s, ours %s)" % (name, p is not None, o is not None))
        continue
    graphs += sum(1 for l in p if "--" in l and not l.startswith("#"))
    if p[:3] != o[:3]:
        bad.append("%s: column headers differ:\n  perf %r\n  ours %r" % (name, p[:3], o[:3]))
        continue
    pb, ob = blocks(p), blocks(o)
    if "--children" in opts:
        key = lambda b: re.findall(r"[0-9.]+%", b[0])[:1]
        if [key(b) for b in pb] != [key(b) for b in ob]:
            bad.append("%s: the rows' Children shares are not perf's, in perf's order" % name)
            continue
        if sorted(pb) != sorted(ob):
            miss = sorted(set(ob) - set(pb))
            bad.append("%s: our block %r is not perf's" % (name, miss[:1]))
        continue
    pb, ob = plt_ties(pb), plt_ties(ob)
    if pb != ob:
        i = next(i for i in range(min(len(pb), len(ob)) + 1)
                 if i >= len(pb) or i >= len(ob) or pb[i] != ob[i])
        bad.append("%s: block %d differs:\n  perf %r\n  ours %r" %
                   (name, i, pb[i] if i < len(pb) else None, ob[i] if i < len(ob) else None))
if not graphs:
    bad.append("perf drew no call graph: the comparison proves nothing")

# perf's inline frames: each "(inlined)" line stands for the entry of its
# address (replaced, when DWARF names the function otherwise than the ELF
# symbol: __libc_start_main_impl for __libc_start_main) or comes before
# it; nothing else differs.
inl, noinl = table("nc-inline.perf"), table("nc.perf")
n_inl = 0
for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, inl, noinl, autojunk=False).get_opcodes():
    if op == "equal":
        continue
    extra = inl[i1:i2]
    if op == "delete" or not extra or not all(l.endswith(" (inlined)") for l in extra):
        bad.append("perf's inline frames: %s %r for %r" % (op, extra, noinl[j1:j2]))
        break
    n_inl += len(extra)
if not n_inl:
    print("note: perf printed no inline frame", file=sys.stderr)
print("\n".join(bad) if bad else "ok: %d cases, %d graph lines, %d inline lines of perf's"
      % (len(sys.argv) - 1, graphs, n_inl))
sys.exit(1 if bad else 0)
PY
tl_case_end "$(tail -1 cmp.out)"

# ------------------------------------------------------------ folded
tl_case "report --folded as perf script --no-inline | stackcollapse-perf"
rc=0
"$DSOSTORE" report --folded --no-fetch --no-progress dw.data >folded.ours 2>folded.err || rc=$?
[ "$rc" = 0 ] || fail "report --folded: exit $rc: $(head -3 folded.err)"
perf script -i dw.data --no-inline -F comm,pid,tid,time,event,ip,sym,dso 2>script.err |
	"$py" "$DS_SRC/tests/lib/stackcollapse.py" >folded.theirs ||
	fail "perf script | stackcollapse.py: $(tail -3 script.err)"
[ -s folded.theirs ] || fail "perf script gave no stack"
# (a PLT stub's frame: perf's "@plt", our NAME@plt: tests/lib/folded_cmp.py)
"$py" "$DS_SRC/tests/lib/folded_cmp.py" folded.theirs folded.ours >folded.cmp ||
	fail "stacks differ from perf script's: $(head -10 folded.cmp)"
tl_case_end "($(wc -l <folded.ours) stacks)"

tl_case "pipe mode and -z: report --folded as perf script's"
for kind in pipe z; do
	if [ $kind = pipe ]; then
		perf record -N --call-graph dwarf -e cpu-clock -F 2000 -o - -- ./dw 2>rec-$kind.log \
			>$kind.data
	else
		perf record -N -z --call-graph dwarf -e cpu-clock -F 2000 -o $kind.data -- ./dw \
			>rec-$kind.log 2>&1
	fi || {
		fail "perf record ($kind): $(tail -3 rec-$kind.log)"
		continue
	}
	rc=0
	"$DSOSTORE" report --folded --no-fetch --no-progress $kind.data >$kind.ours 2>$kind.err ||
		rc=$?
	[ "$rc" = 0 ] || fail "report --folded ($kind): exit $rc: $(head -3 $kind.err)"
	perf script -i $kind.data --no-inline -F comm,pid,tid,time,event,ip,sym,dso 2>/dev/null |
		"$py" "$DS_SRC/tests/lib/stackcollapse.py" >$kind.theirs
	grep -q ';main;caller_a;hot ' $kind.theirs || fail "$kind: perf unwound no main;caller_a;hot"
	"$py" "$DS_SRC/tests/lib/folded_cmp.py" $kind.theirs $kind.ours >$kind.cmp ||
		fail "$kind: stacks differ from perf script's: $(head -6 $kind.cmp)"
done
tl_case_end

# -------------------------------------------------- first principles
tl_case "the program's call paths, down to _start; frame pointers give none"
"$py" - folded.ours <<'PY' >paths.out || fail "$(cat paths.out)"
import re, sys
want = {"main;caller_a;hot": 0, "main;caller_b;hot": 0, "main;caller_c;hot": 0,
        "main;rec;rec;hot": 0, "main;lib_step;hot": 0, "main;lib_burn": 0}
total = rooted = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    frames = stack.split(";")
    if frames[0] != "dw" or "main" not in frames:
        continue
    n = int(n)
    total += n
    # _start (the program's), __libc_start_main, __libc_start_call_main
    if frames[1] == "_start" and frames[frames.index("main") - 1] == "__libc_start_call_main":
        rooted += n
    path = ";".join(frames[frames.index("main"):])
    for w in want:
        if path == w or (w.startswith("main;rec;rec") and re.fullmatch(r"main(;rec)+;hot", path)):
            want[w] += n
bad = [w for w, n in want.items() if not n]
if bad or total == 0 or rooted != total:
    print("paths never sampled: %s; %d of %d samples through main rooted at _start"
          % (bad, rooted, total))
    sys.exit(1)
PY
perf script -i fp.data -F comm,pid,tid,time,event,ip,sym,dso 2>/dev/null |
	"$py" "$DS_SRC/tests/lib/stackcollapse.py" >fp.theirs
grep -q ';caller_a;hot ' fp.theirs &&
	fail "perf -g (frame pointers) unwinds the program: the dwarf recording proves nothing"
tl_case_end

# --------------------------------------------- deeper than 127 frames
tl_case "a recursion 200 deep: unwound to --max-stack, as perf unwinds it"
# perf unwinds a user stack to its --max-stack (default: the sysctl's
# 127), so with --max-stack 250 its chains, and ours, go deeper.
cat >deep.c <<'EOF'
#define KEEP(x) __asm__ volatile("" : "+r"(x))
__attribute__((noinline)) unsigned long hot(unsigned long x)
{
	for (int i = 0; i < 200000; i++) {
		x = x * 6364136223846793005UL + 1;
		KEEP(x);
	}
	return x;
}
__attribute__((noinline)) unsigned long deep(int d, unsigned long x)
{
	if (!d)
		return hot(x);
	x = deep(d - 1, x);
	KEEP(x);
	return x + 1;
}
int main(void)
{
	unsigned long x = 1;
	for (int i = 0; i < 300; i++)
		x = deep(200, x);
	KEEP(x);
	return 0; /* perf record's status is the workload's */
}
EOF
gcc -O2 -g -fomit-frame-pointer -o deep deep.c || fail "gcc deep.c"
# A sample that lands in a PLT stub is the sampler's luck, and perf names
# some of libc's stubs "@plt" where we say NAME@plt: every stub is "@plt".
plt_any() { sed -E 's/[^][[:space:]]*@plt\b/@plt/g'; }
if perf record -N --call-graph dwarf,16384 -e cpu-clock -F 2000 -o deep.data -- ./deep \
	>rec-deep.log 2>&1; then
	for ms in "" 250 40; do
		# shellcheck disable=SC2086 # the option is two words or none
		perf report -i deep.data --stdio --no-inline --sort dso,sym --no-children -g caller \
			${ms:+--max-stack $ms} 2>/dev/null | grep -v -e '^#' -e '^$' | plt_any >"deep$ms.perf"
		# shellcheck disable=SC2086
		"$DSOSTORE" report --no-fetch --sort dso,sym --no-children -g caller \
			${ms:+--max-stack $ms} deep.data 2>/dev/null | grep -v -e '^#' -e '^$' | plt_any \
			>"deep$ms.ours"
		cmp -s "deep$ms.perf" "deep$ms.ours" ||
			fail "deep, --max-stack ${ms:-default}: $(diff "deep$ms.perf" "deep$ms.ours" | head -6)"
	done
	# perf's own graphs must change with the depth, or the case proves
	# nothing (the tables' lines are no measure of it: deeper chains can
	# draw fewer lines)
	! cmp -s deep.perf deep250.perf ||
		fail "perf report --max-stack 250 draws what it draws without: the case proves nothing"
	! cmp -s deep.perf deep40.perf ||
		fail "perf report --max-stack 40 draws what it draws without: the case proves nothing"
else
	fail "perf record --call-graph dwarf,16384: $(tail -3 rec-deep.log)"
fi
tl_case_end

# ------------------------------------ shapes every sample of a program has
# Samples that perf's unwinder and ours must agree on however the
# sampler's luck falls, since every sample of the program has the shape.
#
# A frame whose CFA is found from rbx, called by code that leaves rbx
# alone: glibc's _dl_runtime_resolve (CFA rbx+32) calling _dl_fixup, on the
# first call through each lazily bound PLT entry, where libdwfl lost rbx
# (elfutils' x86_64 ABI defaults name rax where rbx is meant, see
# resume_rbx() in lib/live/unwind.c) and our stack ended there (seen in the
# gcc -c case below, by the sampler's luck).  Here main calls tramp
# (rbx-based CFA, as _dl_runtime_resolve), which calls hot (a leaf that
# spins and never names rbx).  First principles: hot is called by tramp
# only, tramp by main only, so every stack of hot is main's, down to
# _start (perf 6.1's libunwind keeps rbx and says so too).
#
# A process whose map of the PC was not recorded (perf record loses
# records on a loaded machine): that program's recording with its
# executable's MMAP2 records moved away from where it runs; then the user
# PC from the registers is all either unwinder has (perf prints it as
# [unknown]), sample by sample as tests/lib/unwind_cmp.py compares.
cat >rbx.s <<'EOF'
	.text
	.globl	hot
	.type	hot, @function
hot:
	.cfi_startproc
	movq	%rdi, %rax
1:	subq	$1, %rax
	jnz	1b
	ret
	.cfi_endproc
	.size	hot, .-hot

	.globl	tramp
	.type	tramp, @function
tramp:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	movq	%rsp, %rbx
	.cfi_def_cfa_register %rbx
	andq	$-64, %rsp
	subq	$64, %rsp
	call	hot
	movq	%rbx, %rsp
	.cfi_def_cfa_register %rsp
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	tramp, .-tramp
	.section	.note.GNU-stack,"",@progbits
EOF
cat >rbxmain.c <<'EOF'
unsigned long tramp(unsigned long n);
int main(void)
{
	unsigned long x = 0;
	for (int i = 0; i < 4; i++)
		x += tramp(100000000);
	return x == 1; /* perf record's status is the workload's */
}
EOF
gcc -O2 -g -fomit-frame-pointer -o rbx rbxmain.c rbx.s || fail "gcc rbx.s"

n=0
tl_case "a CFA from rbx that the callee left alone"
if perf record -N --call-graph dwarf -e cpu-clock -F 2000 -o rbx.data -- ./rbx >rec-rbx.log 2>&1; then
	rc=0
	"$DSOSTORE" report --no-fetch --folded rbx.data >rbx.folded 2>rbx.err || rc=$?
	[ "$rc" = 0 ] || fail "report --folded: exit $rc: $(head -3 rbx.err)"
	perf script -i rbx.data --no-inline -F ip,sym >rbx.perf.txt 2>rbx.perferr ||
		fail "perf script: $(head -3 rbx.perferr)"
	# The user part of each stack (up to hot; a kernel tail after it is
	# the interrupt's), for stacks through hot.
	grep -o -E '^[^ ]*;tramp;hot' rbx.folded | sed 's/^rbx;//' | sort -u >rbx.ours.hot
	want='_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;main;tramp;hot'
	n=$(grep -c ';tramp;hot' rbx.folded)
	[ "$n" -gt 0 ] || fail "no stack through hot: $(head -3 rbx.folded)"
	bad=$(grep -v -x -F -e "$want" -e "${want/@@GLIBC_2.34/}" rbx.ours.hot)
	[ -z "$bad" ] || fail "stacks of hot not from main: $(echo "$bad" | head -3)"
	# perf's chains of the samples in hot, callers after it
	awk 'NF == 0 { if (s) print s; s = ""; inhot = 0; next }
	     $2 == "hot" { inhot = 1 }
	     inhot { s = s ? s ";" $2 : $2 }
	     END { if (s) print s }' rbx.perf.txt | sort -u >rbx.perf.hot
	grep -q -x -F 'hot;tramp;main;__libc_start_call_main;__libc_start_main@@GLIBC_2.34;_start' rbx.perf.hot ||
		grep -q -x -F 'hot;tramp;main;__libc_start_call_main;__libc_start_main;_start' rbx.perf.hot ||
		fail "perf's chains of hot: $(head -3 rbx.perf.hot)"
else
	fail "perf record --call-graph dwarf: $(tail -3 rec-rbx.log)"
fi
tl_case_end "($n folded stacks through hot)"

tl_case "no map at the user PC"
if [ -s rbx.data ]; then
	# file mode: the data section's offset and size at 40 and 48; an
	# MMAP2 record (type 10): pid, tid, start at 16, len at 24, pgoff at
	# 32, ..., the file name at 72 (perf's perf_event.h).  The maps as they
	# were go to nomap.maps: a caller of ours in rbx (a sample in ld.so or
	# libc called from it) is checked there (unwind_cmp.py --was-mapped).
	"$py" - rbx.data nomap.data nomap.maps >nomap.log 2>&1 <<'PY' || fail "moving the maps: $(cat nomap.log)"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
assert b[:8] == b"PERFILE2"
off, size = struct.unpack_from("<QQ", b, 40)
at, moved = off, 0
maps = open(sys.argv[3], "w")
while at + 8 <= off + size:
    typ, misc, rsz = struct.unpack_from("<IHH", b, at)
    if rsz < 8:
        sys.exit("record of size %d at %d" % (rsz, at))
    name = bytes(b[at + 72:at + rsz]).split(b"\0")[0]
    if typ == 10 and name.endswith(b"/rbx"):
        maps.write("%#x %#x %#x %s\n" % (struct.unpack_from("<QQQ", b, at + 16) +
                                          (name.decode(),)))
        struct.pack_into("<Q", b, at + 16, 0x10000 + 0x100000 * moved)
        moved += 1
    at += rsz
if not moved:
    sys.exit("no MMAP2 record of rbx")
open(sys.argv[2], "wb").write(b)
PY
	"$DS_BUILD/ds_perfchains" nomap.data >nomap.ours 2>nomap.err ||
		fail "ds_perfchains: $(head -3 nomap.err)"
	perf script -i nomap.data --no-inline -F tid,time,ip,dso >nomap.perf 2>nomap.perferr ||
		fail "perf script: $(head -3 nomap.perferr)"
	"$py" "$DS_SRC/tests/lib/unwind_cmp.py" --was-mapped nomap.maps nomap.perf nomap.ours >nomap.cmp ||
		fail "$(cat nomap.cmp)"
	# the case proves something only if perf has such samples
	grep -q -E '^[[:space:]]+[0-9a-f]+ \(\[unknown\]\)$' nomap.perf ||
		fail "no sample of perf's has an unmapped user PC: $(head -3 nomap.perf)"
else
	fail "no recording"
fi
tl_case_end "($(head -1 nomap.cmp 2>/dev/null))"

# ----------------------------------- a multi-process workload, per sample
# gcc -c (gcc, cc1, as: PIE and not, exec'ed children, syscalls in ld.so):
# where perf 6.1's libunwind stops early, skips a frame or writes
# 0xffffffffffffffff, the frames we have instead must be calls
# (tests/lib/unwind_cmp.py, docs/oracles.md).
tl_case "gcc -c, sample by sample: perf's chains, or frames that follow calls"
if perf record -N --call-graph dwarf -e cpu-clock -F 2000 -o cc.data -- gcc -O2 -c dw.c \
	-o dw.o >rec-cc.log 2>&1; then
	"$DS_BUILD/ds_perfchains" cc.data >cc.ours 2>cc.err || fail "ds_perfchains: $(head -3 cc.err)"
	perf script -i cc.data --no-inline -F tid,time,ip,dso >cc.perf 2>cc.perferr ||
		fail "perf script: $(head -3 cc.perferr)"
	"$py" "$DS_SRC/tests/lib/unwind_cmp.py" cc.perf cc.ours >cc.cmp || fail "$(cat cc.cmp)"
	grep -q 'same [1-9]' cc.cmp || fail "no chain is perf's: $(head -1 cc.cmp)"
else
	fail "perf record gcc -c: $(tail -3 rec-cc.log)"
fi
tl_case_end "($(head -1 cc.cmp 2>/dev/null))"

tl_finish report_dwarf
