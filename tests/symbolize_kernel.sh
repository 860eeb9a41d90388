#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dsostore symbolize --kernel and the "kernel ADDR" stream line (lib/ksym.c).
#  - live: 300 addresses in the running kernel's text (symbols of
#    /proc/kallsyms plus offsets) named as an independent reading of the
#    same text names them: the text symbol with the greatest address <=
#    ADDR, of several at one address the last one listed (perf's pick,
#    lib/kernel.c); skipped where kptr_restrict shows zeros;
#  - modules: a kallsyms file (--kallsyms) with "[mod]" symbols: JSON's
#    ModuleName is perf's "[mod]", the name the same rule's;
#  - a synthetic vmlinux (gcc -g, linked at 0xffffffff81000000, a build
#    ID of the test's choosing) behind a kernel root whose kallsyms is
#    its symbols moved by a KASLR offset and whose sys/kernel/notes holds
#    its build ID: found by build ID in a debug directory, or given with
#    -k, file:line and inline frames equal addr2line -f -i (and
#    llvm-symbolizer for the LLVM style) on the vmlinux at the unshifted
#    address;
#  - kallsyms of zeros (kptr_restrict): a message, exit 1.
set -uo pipefail
. "$DS_SRC/tests/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need gcc python3 addr2line objcopy nm
tl_tmpdir dsksym
cd "$tmp" || exit 2
export HOME=$tmp/home DEBUGINFOD_URLS= DSOSTORE_SYMINDEX_PATH=$tmp/derived
unset PERF_BUILDID_DIR DSOSTORE_KERNEL_ROOT
mkdir -p "$HOME"
tl_sanitizer_exitcodes

# expect.py KALLSYMS ADDRS: "name<TAB>[module]" per address, from first
# principles (no dsostore code).
cat >expect.py <<'EOF'
import bisect, sys
syms = {}
for line in open(sys.argv[1], errors="replace"):
    f = line.split()
    if len(f) < 3 or f[1] not in "TtWw":
        continue
    mod = f[3] if len(f) > 3 else "[kernel.kallsyms]"
    syms[int(f[0], 16)] = (f[2], mod)  # the last one listed wins
addrs = sorted(syms)
for a in open(sys.argv[2]):
    a = int(a, 16)
    i = bisect.bisect_right(addrs, a)
    print("%s\t%s" % syms[addrs[i - 1]] if i else "??\t[kernel.kallsyms]")
EOF

tl_case live
if [ "$(awk '$2 ~ /^[Tt]$/ {print $1; exit}' /proc/kallsyms)" = 0000000000000000 ]; then
	echo "skip live: /proc/kallsyms shows no addresses to this user (kptr_restrict)"
	CASE=
else
	cp /proc/kallsyms live.kallsyms
	awk '$2 ~ /^[TtWw]$/ && NF == 3 {print $1}' live.kallsyms |
		python3 -c '
import random, sys
v = sys.stdin.read().split()
random.seed(7)
for a in random.sample(v, 300):
    print("%x" % (int(a, 16) + random.randrange(0, 48)))' >live.addrs
	python3 expect.py live.kallsyms live.addrs | cut -f1 >live.want
	# GNU -f: name, then "??:?" (no line): every other line.
	"$DSOSTORE" symbolize --kernel -f $(cat live.addrs) >live.out 2>live.err ||
		fail "symbolize --kernel: exit $?: $(head -3 live.err)"
	awk 'NR % 2 == 1' live.out >live.got
	diff live.want live.got >live.diff || fail "names differ: $(head -6 live.diff)"
	[ "$(awk 'NR % 2 == 0' live.out | sort -u)" = "??:?" ] || fail "a line where none is known"
	# The stream form, mixed with a bad line: same answers, in order.
	{ sed 's/^/kernel 0x/' live.addrs | head -5; echo "kernel zz"; } >live.lines
	"$DSOSTORE" symbolize -f <live.lines >live.sout 2>/dev/null
	head -5 live.want >live.swant
	awk 'NR % 2 == 1' live.sout | head -5 >live.sgot
	diff live.swant live.sgot >/dev/null || fail "stream kernel lines: $(paste live.swant live.sgot | head -3)"
	[ "$(awk 'NR % 2 == 1' live.sout | sed -n 6p)" = "??" ] || fail "a bad kernel line answered"
fi
[ -n "$CASE" ] && tl_case_end "(300 addresses of /proc/kallsyms)"

tl_case modules
cat >mods.kallsyms <<'EOF'
ffffffff81000000 T _text
ffffffff81000000 T _stext
ffffffff81000100 T core_one
ffffffff81000200 t core_two
ffffffff81000300 D not_text
ffffffffc0100000 t ext_init	[ext4]
ffffffffc0100040 T ext_read	[ext4]
ffffffffc0100040 T __pi_ext_read	[ext4]
ffffffffc0200000 t nf_hook	[nf_tables]
EOF
printf '%s\n' ffffffff81000150 ffffffff81000310 ffffffffc0100001 ffffffffc0100050 \
	ffffffffc0200010 ffffffff80000000 >mods.addrs
python3 expect.py mods.kallsyms mods.addrs >mods.want
"$DSOSTORE" symbolize --kernel --kallsyms mods.kallsyms --output-style=JSON $(cat mods.addrs) \
	>mods.json 2>mods.err || fail "exit $?: $(head -3 mods.err)"
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    f = o["Symbol"][0]["FunctionName"] or "??"
    print("%s\t%s" % (f, o["ModuleName"]))' mods.json >mods.got
diff mods.want mods.got >mods.diff || fail "module names: $(cat mods.diff)"
tl_case_end "(kallsyms file with [ext4], [nf_tables])"

tl_case vmlinux
bid=5eed1e55c0ffee00112233445566778899aabbcc
cat >k.c <<'EOF'
static int counter;
static inline __attribute__((always_inline)) int deep(int x)
{
	counter += x;
	return counter * 3;
}
__attribute__((noinline)) int middle(int x)
{
	int r = deep(x + 1);

	return r + deep(r);
}
__attribute__((noinline)) int do_sys_thing(int x)
{
	return middle(x) - 1;
}
void _start(void)
{
	do_sys_thing(2);
	for (;;)
		;
}
EOF
cat >k.lds <<'EOF'
SECTIONS
{
	. = 0xffffffff81000000;
	_text = .;
	.text : { _stext = .; *(.text .text.*) _etext = .; }
	.notes : { *(.note.gnu.build-id) }
	/DISCARD/ : { *(.note.*) }
	.bss : { *(.bss .bss.*) }
}
EOF
gcc -g -O2 -ffreestanding -fno-pie -no-pie -nostdlib -mcmodel=kernel -fno-asynchronous-unwind-tables \
	-Wl,-T,k.lds -Wl,--build-id=0x$bid -o vmlinux k.c 2>gcc.err || fail "gcc: $(head -3 gcc.err)"
[ "$(tl_build_id vmlinux)" = "$bid" ] || fail "vmlinux build ID: $(tl_build_id vmlinux)"
kaslr=$((0x1e400000))
mkdir -p root/proc root/sys/kernel dbg/.build-id/${bid:0:2}
objcopy -O binary --only-section=.notes vmlinux root/sys/kernel/notes
nm vmlinux | python3 -c '
import sys
for l in sys.stdin:
    a, t, n = l.split()
    print("%016x %s %s" % (int(a, 16) + '$kaslr', t, n))' >root/proc/kallsyms
cp vmlinux dbg/.build-id/${bid:0:2}/${bid:2}.debug
# Every 3rd byte of the text: inline, call and plain code alike.
start=$(nm vmlinux | awk '$3=="middle"{print $1}')
end=$(nm vmlinux | awk '$3=="_etext"{print $1}')
python3 -c "
for a in range(0x$start, 0x$end, 3): print('%x' % a)" >vm.addrs
python3 -c "
import sys
for l in open('vm.addrs'): print('0x%x' % (int(l, 16) + $kaslr))" >vm.shifted
addr2line -f -i -e vmlinux $(cat vm.addrs) >vm.want
"$DSOSTORE" symbolize --kernel --kernel-root root --debug-dir "$tmp/dbg" -f -i $(cat vm.shifted) \
	>vm.got 2>vm.err || fail "by build ID: exit $?: $(head -3 vm.err)"
diff vm.want vm.got >vm.diff || fail "by build ID, vs addr2line: $(head -8 vm.diff)"
grep -q "^deep$" vm.got || fail "no inline frame of deep() in: $(head -4 vm.got)"
"$DSOSTORE" symbolize --kernel --kernel-root root -k vmlinux -f -i $(cat vm.shifted) >vm.got2 2>&1 ||
	fail "-k: exit $?"
diff vm.want vm.got2 >/dev/null || fail "-k, vs addr2line: $(diff vm.want vm.got2 | head -6)"
if command -v llvm-symbolizer >/dev/null; then
	# Addresses llvm-symbolizer names a function at: in the padding after
	# a function (past its DWARF high_pc, inside its ELF symbol) it says
	# "??" where dsostore, as with -e, names the symbol.
	: >vm.lwant
	: >vm.lshifted
	for a in $(cat vm.addrs); do
		llvm-symbolizer --obj=vmlinux 0x$a >vm.one
		[ "$(head -1 vm.one)" = "??" ] && continue
		cat vm.one >>vm.lwant
		printf '0x%x\n' $((0x$a + kaslr)) >>vm.lshifted
	done
	"$DSOSTORE" symbolize --kernel --kernel-root root -k vmlinux --output-style=LLVM \
		$(cat vm.lshifted) >vm.lgot 2>&1
	[ -s vm.lshifted ] || fail "llvm-symbolizer named nothing"
	diff vm.lwant vm.lgot >/dev/null || fail "LLVM style vs llvm-symbolizer: $(diff vm.lwant vm.lgot | head -6)"
fi
# Without the debuginfo: the names of the kernel root's kallsyms.
"$DSOSTORE" symbolize --kernel --kernel-root root -f $(sed -n 1p vm.shifted) | head -1 >vm.name
[ "$(cat vm.name)" = middle ] || fail "kallsyms name without debuginfo: $(cat vm.name)"
tl_case_end "($(wc -l <vm.addrs) addresses, KASLR offset $(printf %#x $kaslr))"

tl_case kptr_restrict
awk '{ $1 = "0000000000000000"; print }' mods.kallsyms >zero.kallsyms
"$DSOSTORE" symbolize --kernel --kallsyms zero.kallsyms -f ffffffff81000150 >zero.out 2>zero.err
rc=$?
[ $rc = 1 ] || fail "exit $rc, not 1"
grep -q kptr_restrict zero.err || fail "no word of kptr_restrict: $(cat zero.err)"
[ "$(head -1 zero.out)" = "??" ] || fail "answered: $(cat zero.out)"
tl_case_end

tl_finish symbolize_kernel
