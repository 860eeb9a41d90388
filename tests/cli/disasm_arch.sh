#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ds_dso_disassemble() beyond x86-64 gcc code (annotate_insns.sh has that):
# one function with a loop, a call and forward and backward jumps, built by
# clang and lld (-nostdlib: no libc of these machines here) for
#  - aarch64: every instruction's address and mnemonic against llvm-objdump
#    (binutils here has no aarch64), capstone 4's "movz" being
#    llvm-objdump's "mov" alias; each branch's target against the one
#    llvm-objdump prints; the landings are exactly the targets of the
#    jumps that stay inside; bl a call, ret a return;
#  - i386: the same against binutils objdump (mnemonics normalised as
#    annotate_insns.sh does);
#  - riscv64: no disassembler: refused with "Operation not supported"
#    (ENOTSUP), which annotate turns into "no disassembler for its machine";
#  - capstone is loaded at the first disassembly: where the libcapstone.so.4
#    found first is none (an empty shared object first in LD_LIBRARY_PATH),
#    the i386 function is refused with ELIBACC, not crashed on.
# Through tests/lib/disasm.c (ds_disasm), the library's call alone.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DS_BUILD:?DS_BUILD must name the build directory}"
tl_need clang ld.lld llvm-objdump llvm-nm objdump python3
helper=$DS_BUILD/ds_disasm
[ -x "$helper" ] || { echo "FAIL: no $helper" >&2; exit 1; }

tl_tmpdir dsdisasm
cd "$tmp" || exit 2
tl_sanitizer_exitcodes
cat >f.c <<'C'
__attribute__((noinline)) long g(long x) { return x * 3 + 1; }
__attribute__((noinline)) long f(long n, long x)
{
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005L + i;
		if (x % 7 == 3)
			x += g(i);
		if ((x >> 3) & 1)
			continue;
		x ^= i;
	}
	return x;
}
void _start(void) { f(10, 1); for (;;) ; }
C
build() { # OUT FLAGS...
	local out=$1
	shift
	clang -O2 -g -nostdlib -fuse-ld=lld -static "$@" -o "$out" f.c 2>"$out.log" ||
		fail "clang $* failed: $(head -3 "$out.log")"
}
build a64 --target=aarch64-linux-gnu
build x32 -m32
build rv --target=riscv64-linux-gnu

addr_of() { llvm-nm "$1" | awk -v s="$2" '$3 == s { print $1 }'; }

# compare BINARY OBJDUMP-LISTING
compare() {
	local bin=$1 listing=$2 rc=0
	"$helper" "$bin" "$(addr_of "$bin" f)" >"$bin.ours" 2>"$bin.err" || rc=$?
	grep -q -E 'Sanitizer|runtime error' "$bin.err" && fail "$bin: sanitizer report: $(head -20 "$bin.err")"
	[ "$rc" -eq 0 ] || { fail "$bin: ds_disasm exit $rc: $(cat "$bin.err")"; return; }
	python3 - "$bin.ours" "$listing" "$bin" <<'PY' || fail "$bin: the instructions differ (above)"
import re, sys
ours_file, listing, name = sys.argv[1:4]
ours = {}
order = []
for line in open(ours_file):
    w = line.split()
    if w[0] == "arch":
        continue
    a = int(w[0], 16)
    t = int(w[w.index("->") + 1], 16) if "->" in w else None
    ours[a] = {"m": w[1], "target": t, "inside": "inside" in w, "landing": "@L" in w,
               "jump": "jump" in w, "call": "call" in w, "ret": "ret" in w}
    order.append(a)
PREFIX = {"cs", "ds", "es", "ss", "fs", "gs", "data16", "addr32", "notrack", "bnd"}
SAME = {"movz": "mov", "repz": "rep", "repe": "rep", "repnz": "repne"}
def norm(m):
    return SAME.get(m, m)
theirs = []
for line in open(listing):
    m = re.match(r"^\s+([0-9a-f]+):\s+(.*?)\s*$", line)
    if m and m.group(2):
        words = [w for w in m.group(2).split() if w not in PREFIX]
        # a direct branch's one operand "0x2102e8 <f+0x90>", not the
        # comment of an indirect one "jmp *0x10(%ebx) # 4010 <...>"
        tgt = re.match(r"^\S+\s+(?:0x)?([0-9a-f]+) <[^>]*>$", " ".join(words))
        theirs.append((int(m.group(1), 16), words[0], int(tgt.group(1), 16) if tgt else None))
bad = []
if [a for a, _, _ in theirs] != order:
    bad.append("addresses differ: ours %s, theirs %s" % ([hex(a) for a in order][:8],
               [hex(a) for a, _, _ in theirs][:8]))
inside_targets = set()
for a, m, t in theirs:
    o = ours.get(a)
    if o is None:
        continue
    if norm(o["m"]) != norm(m):
        bad.append("%x: mnemonic %s, theirs %s" % (a, o["m"], m))
    if t is not None and o["target"] != t:
        bad.append("%x: target %s, theirs %x" % (a, o["target"], t))
    if o["jump"] and o["target"] in ours:
        inside_targets.add(o["target"])
    if m in ("bl", "call") and not (o["call"] and not o["jump"]):
        bad.append("%x: %s is no call of ours" % (a, m))
    if m == "ret" and not o["ret"]:
        bad.append("%x: ret is no return of ours" % a)
landings = {a for a, o in ours.items() if o["landing"]}
if landings != inside_targets or not landings:
    bad.append("landings %s, the inside jumps' targets %s" % (sorted(map(hex, landings)),
               sorted(map(hex, inside_targets))))
for b in bad:
    print("FAIL: %s: %s" % (name, b), file=sys.stderr)
print("%s: %d instructions, %d landings" % (name, len(order), len(landings)))
sys.exit(1 if bad else 0)
PY
}

llvm-objdump -d --no-show-raw-insn --disassemble-symbols=f a64 >a64.llvm 2>a64.llvm.err ||
	fail "llvm-objdump a64: $(head -3 a64.llvm.err)"
compare a64 a64.llvm
objdump -d --no-show-raw-insn --disassemble=f x32 >x32.objdump 2>x32.objdump.err ||
	fail "objdump x32: $(head -3 x32.objdump.err)"
compare x32 x32.objdump

rc=0
"$helper" rv "$(addr_of rv f)" >rv.ours 2>rv.err || rc=$?
[ "$rc" -eq 1 ] && grep -q "^error: Operation not supported$" rv.err ||
	fail "riscv64: exit $rc, $(cat rv.err): not refused as a machine without a disassembler"

mkdir nocs && : >nocs/empty.c
cc -shared -fPIC -o nocs/libcapstone.so.4 nocs/empty.c || fail "building the empty library"
rc=0
LD_LIBRARY_PATH=$tmp/nocs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$helper" x32 "$(addr_of x32 f)" \
	>nocs.ours 2>nocs.err || rc=$?
[ "$rc" -eq 1 ] && grep -q "^error: $(python3 -c 'import errno, os; print(os.strerror(errno.ELIBACC))')$" nocs.err ||
	fail "no capstone: exit $rc, $(head -3 nocs.err): not refused with ELIBACC"

tl_finish disasm_arch.sh
