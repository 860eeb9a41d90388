#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dsostore symbolize --kernel and the "kernel ADDR" stream line (lib/live/ksym.c).
#  - live: 300 addresses in the running kernel's text (symbols of
#    /proc/kallsyms plus offsets) named as an independent reading of the
#    same text names them: the text symbol with the greatest address <=
#    ADDR, of several at one address the last one listed (perf's pick,
#    lib/live/kernel.c); skipped where kptr_restrict shows zeros;
#  - modules: a kallsyms file (--kallsyms) with "[mod]" symbols: JSON's
#    ModuleName is perf's "[mod]", the name the same rule's;
#  - a synthetic vmlinux (gcc -g, linked at 0xffffffff81000000, a build
#    ID of the test's choosing) behind a kernel root whose kallsyms is
#    its symbols moved by a KASLR offset and whose sys/kernel/notes holds
#    its build ID: found by build ID in a debug directory, or given with
#    -k, file:line and inline frames equal addr2line -f -i (and
#    llvm-symbolizer for the LLVM style) on the vmlinux at the unshifted
#    address;
#  - a module's DWARF: a synthetic .ko (ET_REL) placed by the kernel
#    root's sys/module/M/sections, found by the build ID of its
#    sys/module/M/notes: file:line and inline frames equal addr2line -j
#    SECTION on the .ko at the section offset, for two load addresses;
#  - both fetched by build ID from a debuginfod server (dsserver);
#  - kallsyms of zeros (kptr_restrict): a message, exit 1.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

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
tl_vmlinux vmlinux $bid || fail "gcc: $(head -3 gcc.err)"
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
	llvm-symbolizer --obj=vmlinux $(sed "s/^/0x/" vm.addrs) >vm.lall
	python3 - vm.lall vm.addrs $kaslr <<'EOF'
import sys
recs = open(sys.argv[1]).read().split("\n\n")
addrs = open(sys.argv[2]).read().split()
with open("vm.lwant", "w") as w, open("vm.lshifted", "w") as a:
    for rec, addr in zip(recs, addrs):
        if rec.split("\n")[0] != "??":
            w.write(rec + "\n\n")
            a.write("0x%x\n" % (int(addr, 16) + int(sys.argv[3])))
EOF
	"$DSOSTORE" symbolize --kernel --kernel-root root -k vmlinux --output-style=LLVM \
		$(cat vm.lshifted) >vm.lgot 2>&1
	[ -s vm.lshifted ] || fail "llvm-symbolizer named nothing"
	diff vm.lwant vm.lgot >/dev/null || fail "LLVM style vs llvm-symbolizer: $(diff vm.lwant vm.lgot | head -6)"
fi
# perf's place for it under the kernel root, for its release.
mkdir -p root/proc/sys/kernel root/usr/lib/debug/boot
echo 6.1.0-dstest >root/proc/sys/kernel/osrelease
cp vmlinux root/usr/lib/debug/boot/vmlinux-6.1.0-dstest
"$DSOSTORE" symbolize --kernel --kernel-root root -f -i $(cat vm.shifted) >vm.got3 2>&1 ||
	fail "place: exit $?"
diff vm.want vm.got3 >/dev/null || fail "usr/lib/debug/boot, vs addr2line: $(diff vm.want vm.got3 | head -6)"
# Another build's vmlinux there is not this kernel's: kallsyms names.
tl_vmlinux root/usr/lib/debug/boot/vmlinux-6.1.0-dstest 0123456789
"$DSOSTORE" symbolize --kernel --kernel-root root -f $(sed -n 1p vm.shifted) >vm.other
[ "$(cat vm.other)" = "$(printf 'middle\n??:?')" ] || fail "another build's vmlinux used: $(cat vm.other)"
rm -r root/usr
# Without the debuginfo: the names of the kernel root's kallsyms.
"$DSOSTORE" symbolize --kernel --kernel-root root -f $(sed -n 1p vm.shifted) | head -1 >vm.name
[ "$(cat vm.name)" = middle ] || fail "kallsyms name without debuginfo: $(cat vm.name)"
tl_case_end "($(wc -l <vm.addrs) addresses, KASLR offset $(printf %#x $kaslr))"

tl_case module-dwarf
# A module: an ET_REL .ko with DWARF (gcc -c -g, ld -r --build-id), two
# text sections; the kernel root places them (sys/module/kmodx/sections)
# and has its build ID (sys/module/kmodx/notes); its debuginfo is found by
# that build ID.  addr2line on the .ko itself, at section offsets (-j),
# is the oracle; loaded at two places in turn, the answers are the same
# (nothing of one load kept for the next: no saved index of the copy).
mbid=6d6f64756c652d6275696c642d69642d6b6d6f64
tl_kmod kmodx.ko $mbid || fail "cannot build the module: $(head -3 gcc.err)"
[ "$(tl_build_id kmodx.ko)" = "$mbid" ] || fail "module build ID: $(tl_build_id kmodx.ko)"
mkdir -p mdbg/.build-id/${mbid:0:2}
cp kmodx.ko mdbg/.build-id/${mbid:0:2}/${mbid:2}.debug
size_of() { readelf -SW kmodx.ko | sed 's/\[ */[/' | awk -v s="$1" '$2 == s { print $6 }'; }
tsize=$((0x$(size_of .text)))
isize=$((0x$(size_of .init.text)))
: >m.want
: >m.offs
for o in $(seq 0 2 $((tsize - 1))); do
	echo ".text $o" >>m.offs
done
for o in $(seq 0 2 $((isize - 1))); do
	echo ".init.text $o" >>m.offs
done
addr2line -f -i -j .text -e kmodx.ko $(awk '$1 == ".text" { printf "%x\n", $2 }' m.offs) >m.want
addr2line -f -i -j .init.text -e kmodx.ko $(awk '$1 == ".init.text" { printf "%x\n", $2 }' m.offs) >>m.want
grep -q "^deep$" m.want || fail "addr2line sees no inline frame in the module"
for load in 0xffffffffc0400000:0xffffffffc0a00000 0xffffffffc1230000:0xffffffffc0010000; do
	text=${load%:*}
	init=${load#*:}
	rm -rf mroot
	mkdir -p mroot/proc mroot/sys/kernel mroot/sys/module/kmodx/notes mroot/sys/module/kmodx/sections
	cp root/sys/kernel/notes mroot/sys/kernel/notes
	objcopy -O binary --only-section=.note.gnu.build-id kmodx.ko \
		mroot/sys/module/kmodx/notes/.note.gnu.build-id
	echo $text >mroot/sys/module/kmodx/sections/.text
	echo $init >mroot/sys/module/kmodx/sections/.init.text
	{
		echo "ffffffff81000000 T _text"
		echo "ffffffff81000100 T core_fn"
		nm kmodx.ko | while read -r a t n; do
			case $n in
			x_init) printf '%016x %s %s\t[kmodx]\n' $((init + 0x$a)) $t $n ;;
			x_*) printf '%016x %s %s\t[kmodx]\n' $((text + 0x$a)) $t $n ;;
			esac
		done
	} | sort >mroot/proc/kallsyms
	while read -r sec o; do
		[ "$sec" = .text ] && printf '0x%x\n' $((text + o)) || printf '0x%x\n' $((init + o))
	done <m.offs >m.addrs
	"$DSOSTORE" symbolize --kernel --kernel-root mroot --debug-dir "$tmp/mdbg" -f -i \
		$(cat m.addrs) >m.got 2>m.err || fail "module at $text: exit $?: $(head -3 m.err)"
	diff m.want m.got >m.diff || fail "module at $text, vs addr2line: $(head -8 m.diff)"
done
[ ! -e "$DSOSTORE_SYMINDEX_PATH/$mbid" ] || fail "an index of the relocated copy was saved"
# Found in its package's place: usr/lib/debug/lib/modules/RELEASE/...,
# under a dashed file name (nf-foo.ko is module nf_foo; kmodx has none).
mkdir -p mroot/proc/sys/kernel mroot/usr/lib/debug/lib/modules/6.1.0-dstest/kernel/drivers/x
echo 6.1.0-dstest >mroot/proc/sys/kernel/osrelease
cp kmodx.ko mroot/usr/lib/debug/lib/modules/6.1.0-dstest/kernel/drivers/x/kmodx.ko
"$DSOSTORE" symbolize --kernel --kernel-root mroot -f -i $(cat m.addrs) >m.got2 2>m.err ||
	fail "local module: exit $?: $(head -3 m.err)"
diff m.want m.got2 >/dev/null || fail "usr/lib/debug/lib/modules, vs addr2line: $(diff m.want m.got2 | head -6)"
rm -r mroot/usr
# Without its debuginfo: kallsyms' names, the module's.
"$DSOSTORE" symbolize --kernel --kernel-root mroot --output-style=JSON $(head -1 m.addrs) >m.json
grep -q '"ModuleName":"\[kmodx\]".*"FunctionName":"x_read"' m.json || fail "no kallsyms name: $(cat m.json)"
tl_case_end "($(wc -l <m.offs) addresses in .text and .init.text, two loads)"

tl_case debuginfod
# Nothing local: the vmlinux and the .ko fetched by their build IDs from a
# debuginfod server (dsserver, on 127.0.0.1), the same answers.
tl_need_dsserver
mkdir -p srv
cp vmlinux kmodx.ko srv/
tl_no_proxy
if tl_start_dsserver port srv --max-runtime 120 "$tmp/srv"; then
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/dcache \
		"$DSOSTORE" symbolize --kernel --kernel-root root -f -i $(cat vm.shifted) >d.vm 2>d.err ||
		fail "vmlinux: exit $?: $(head -3 d.err)"
	diff vm.want d.vm >/dev/null || fail "fetched vmlinux vs addr2line: $(diff vm.want d.vm | head -6)"
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/dcache \
		"$DSOSTORE" symbolize --kernel --kernel-root mroot -f -i $(cat m.addrs) >d.m 2>d.err ||
		fail "module: exit $?: $(head -3 d.err)"
	diff m.want d.m >/dev/null || fail "fetched .ko vs addr2line: $(diff m.want d.m | head -6)"
	grep -q "/buildid/$bid/debuginfo" srv.log || fail "the vmlinux was not asked for: $(cat srv.log)"
	grep -q "/buildid/$mbid/debuginfo" srv.log || fail "the .ko was not asked for: $(cat srv.log)"
else
	fail "dsserver did not start"
fi
tl_case_end "(vmlinux and .ko by build ID)"

tl_case kptr_restrict
awk '{ $1 = "0000000000000000"; print }' mods.kallsyms >zero.kallsyms
"$DSOSTORE" symbolize --kernel --kallsyms zero.kallsyms -f ffffffff81000150 >zero.out 2>zero.err
rc=$?
[ $rc = 1 ] || fail "exit $rc, not 1"
grep -q kptr_restrict zero.err || fail "no word of kptr_restrict: $(cat zero.err)"
[ "$(head -1 zero.out)" = "??" ] || fail "answered: $(cat zero.out)"
tl_case_end

tl_finish symbolize_kernel
