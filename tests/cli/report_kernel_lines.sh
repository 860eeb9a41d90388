#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report's kernel samples with the kernel's DWARF (lib/perf/profile.c
# profile_vmlinux, vmlinux_names, module_lines).  The kernel is made up:
# a synthetic vmlinux (gcc -g, linked at 0xffffffff81000000, a build ID of
# the test's), a recording of it (tests/gen/perfgen.py) made where KASLR put
# it 0x1e400000 higher, and, for modules, an ET_REL .ko with DWARF.
#  - -k vmlinux on a recording of another machine: names and srclines are
#    perf report -k's (perf as the oracle, -s sym,srcline and -s sym);
#  - the same vmlinux found by the recorded build ID in a debug directory,
#    in the debuginfod cache, and in perf's place for the recorded release (usr/lib/debug/boot/
#    vmlinux-RELEASE under the kernel root, where a names-only report
#    looks too): the same rows;
#  - a vmlinux of another build given with -k: said so (without -v), not
#    used;
#  - --inline: each row's inline chains and shares as addr2line -f -i at
#    the samples' link-time addresses gives them (first principles);
#  - a module sampled at one place and loaded now at another (its .text;
#    x_init's .init.text is not placed): its rows'
#    srclines are addr2line -j .text's on the .ko at the offset into the
#    module, while the core kernel, in another boot (kallsyms moved), keeps
#    its lines.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc python3 addr2line objcopy nm ld readelf
tl_tmpdir dskline
cd "$tmp" || exit 2
export HOME=$tmp/home DSOSTORE_SYMINDEX_PATH=$tmp/derived DEBUGINFOD_URLS=
mkdir -p "$HOME"
unset DSOSTORE_KERNEL_ROOT PERF_BUILDID_DIR
tl_sanitizer_exitcodes

bid=5eed1e55c0ffee00112233445566778899aabbcc
mbid=6d6f64756c652d6275696c642d69642d6b6d6f64
tl_vmlinux vmlinux $bid || fail "gcc: $(head -3 gcc.err)"
sed 's/counter \* 3/counter * 5/' k.c >k2.c
tl_vmlinux vmlinux.other 0123456789abcdef0123456789abcdef01234567 k2.c || fail "gcc: $(head -3 gcc.err)"
tl_kmod kmodx.ko $mbid || fail "cannot build the module: $(head -3 gcc.err)"
[ "$(tl_build_id vmlinux)" = "$bid" ] || fail "vmlinux build ID: $(tl_build_id vmlinux)"
[ "$(tl_build_id kmodx.ko)" = "$mbid" ] || fail "module build ID: $(tl_build_id kmodx.ko)"
[ -s vmlinux ] && [ -s vmlinux.other ] && [ -s kmodx.ko ] || tl_finish report_kernel_lines

# The samples: every byte of the functions' text (nm -S; not the padding
# between them, which perf names by file offset), 1-3 each (link-time
# addresses, "ADDR COUNT"); the module's every 2nd byte of .text.
nm -S vmlinux | python3 -c "
import sys
i = 0
for l in sys.stdin:
    f = l.split()
    if len(f) == 4 and f[2] in 'Tt':
        for a in range(int(f[0], 16), int(f[0], 16) + int(f[1], 16)):
            print('%x %d' % (a, 1 + i % 3))
            i += 1" >k.samples
[ "$(wc -l <k.samples)" -gt 40 ] || fail "few samples: $(nm -S vmlinux)"
msize=$((0x$(readelf -SW kmodx.ko | sed 's/\[ */[/' | awk '$2 == ".text" { print $6 }')))
python3 -c "
for i, o in enumerate(range(0, $msize, 2)): print('%x %d' % (o, 1 + i % 2))" >m.samples

KASLR_REC=0x1e400000 # where the kernel was when recorded
KASLR_NOW=0x2a000000 # where it is in the kernel root's boot
X_REC=0xffffffffc0400000 X_NOW=0xffffffffc1230000 # the module's .text

# gen.py OUT WITH-MODULE: OUT.data (WITH-MODULE 2: and its build ID in
# the header, $MBID, as perf record writes it)
cat >gen.py <<'EOF'
import os, sys
sys.path.insert(0, os.environ["DS_SRC"] + "/tests/gen")
from perfgen import Recording, MISC_KERNEL
out, with_module = sys.argv[1], sys.argv[2] in ("1", "2")
bid = bytes.fromhex(os.environ["BID"])
kaslr, xrec = int(os.environ["KASLR_REC"], 0), int(os.environ["X_REC"], 0)
K = 0xffffffff81000000 + kaslr
r = Recording()
r.build_id(bid, "[kernel.kallsyms]", cpumode=MISC_KERNEL)
if sys.argv[2] == "2":
    r.build_id(bytes.fromhex(os.environ["MBID"]), "[kmodx]", cpumode=MISC_KERNEL)
r.comm(100, 100, "load", 1)
r.mmap(-1, 0, K, 0x1000000, K, "[kernel.kallsyms]_text", 1, misc=MISC_KERNEL)
if with_module:
    r.mmap(-1, 0, xrec, 0x4000, 0, "[kmodx]", 1, misc=MISC_KERNEL)
t = 10
for line in open("k.samples"):
    a, n = line.split()
    for _ in range(int(n)):
        r.sample(100, 100, int(a, 16) + kaslr, t, misc=MISC_KERNEL)
        t += 1
if with_module:
    for line in open("m.samples"):
        o, n = line.split()
        for _ in range(int(n)):
            r.sample(100, 100, xrec + int(o, 16), t, misc=MISC_KERNEL)
            t += 1
r.write(out + ".data")
EOF
export BID=$bid MBID=$mbid KASLR_REC X_REC
DS_SRC=$DS_SRC python3 gen.py k 0 && DS_SRC=$DS_SRC python3 gen.py km 1 &&
	DS_SRC=$DS_SRC python3 gen.py kmb 2 || fail "gen.py"

rows() { # FILE: "SHARE SYMBOL SRCLINE" of each [k] row
	awk '$2 == "[k]" { $2 = ""; print }' "$1" | tr -s ' ' | sort
}
ours() { # OUT ARGS...: report -s sym,srcline unless ARGS say
	local out=$1
	shift
	"$DSOSTORE" report --no-fetch --no-progress --stdio "$@" >$out.out 2>$out.err ||
		fail "$out: report: exit $?: $(tail -3 $out.err)"
	rows $out.out >$out.rows
}
check() { # NAME WANT GOT
	python3 "$DS_SRC/tests/lib/rows_cmp.py" "$2" "$3" "$1" || fail "$1: rows differ (above)"
}

# ---------------------------------------------------------------- -k
tl_case "-k vmlinux: perf report -k's rows"
for sort in sym,srcline sym; do
	perf report -i k.data -k vmlinux --stdio -s $sort >perf-$sort.out 2>perf-$sort.err ||
		fail "perf report -s $sort: $(tail -2 perf-$sort.err)"
	rows perf-$sort.out >perf-$sort.rows
	grep -q "middle" perf-$sort.rows || fail "perf named nothing: $(head -5 perf-$sort.out)"
	ours k-$sort -i k.data -k vmlinux -s $sort
	check "-k, -s $sort" perf-$sort.rows k-$sort.rows
done
grep -q " k.c:[0-9]" k-sym,srcline.rows || fail "no k.c line: $(head -3 k-sym,srcline.rows)"
tl_case_end "($(wc -l <perf-sym,srcline.rows) sym,srcline rows)"

tl_case "found by the recorded build ID, and in perf's place"
mkdir -p dbg/.build-id/${bid:0:2}
cp vmlinux dbg/.build-id/${bid:0:2}/${bid:2}.debug
ours dbg -i k.data --debug-dir "$tmp/dbg" -s sym,srcline
check "debug dir" perf-sym,srcline.rows dbg.rows
# What debuginfod fetched before (a report itself asks no server for it).
mkdir -p dcache/$bid
chmod 700 dcache dcache/$bid
cp vmlinux dcache/$bid/debuginfo
DEBUGINFOD_CACHE_PATH=$tmp/dcache ours dcache -i k.data -s sym,srcline
check "debuginfod cache" perf-sym,srcline.rows dcache.rows
mkdir -p root/usr/lib/debug/boot
cp vmlinux root/usr/lib/debug/boot/vmlinux-6.1.0-perfgen
for sort in sym,srcline sym; do
	ours place-$sort -i k.data --kernel-root root -s $sort
	check "perf's place, -s $sort" perf-$sort.rows place-$sort.rows
done
rm -r root/usr
# Not there: kernel samples stay unnamed, and report says why.
ours none -i k.data --kernel-root root -s sym -v
grep -q "middle" none.rows && fail "named without a vmlinux: $(head -3 none.rows)"
grep -q "kernel samples unnamed" none.err || fail "no word on unnamed kernel samples: $(cat none.err)"
tl_case_end

tl_case "a vmlinux of another build"
ours other -i k.data -k vmlinux.other -s sym,srcline
grep -q "not the recorded kernel" other.err || fail "no word on the wrong vmlinux: $(cat other.err)"
grep -q "k2\?.c:" other.rows && fail "another build's lines used: $(head -3 other.rows)"
tl_case_end

# ---------------------------------------------------------- --inline
tl_case "--inline: addr2line -f -i's chains at the link-time addresses"
awk '{ print $1 }' k.samples >k.addrs
addr2line -f -i -e vmlinux $(cat k.addrs) >k.a2l
grep -q "^deep$" k.a2l || fail "addr2line sees no inline frame"
"$DSOSTORE" report --no-fetch --no-progress --stdio -i k.data -k vmlinux -s sym,srcline --inline \
	>inl.out 2>inl.err || fail "report --inline: $(tail -3 inl.err)"
# ADDRS A2L SAMPLES REPORT: the rows' inline chains, as expected and ours
python3 - k.addrs k.a2l k.samples inl.out >inl.cmp <<'PY' || fail "$(cat inl.cmp)"
import collections, os, sys
addrs = [l.strip() for l in open(sys.argv[1])]
a2l = [l.rstrip("\n") for l in open(sys.argv[2])]
counts = {l.split()[0]: int(l.split()[1]) for l in open(sys.argv[3])}
total = sum(counts.values())
# addr2line -f -i: per address, pairs of lines (function, file:line),
# innermost first, up to the outermost: a function that is not inlined
# (deep is the only one the source inlines).
pairs = [(a2l[i], a2l[i + 1]) for i in range(0, len(a2l), 2)]
inlined = {"deep"}
chains, cur = [], []
for fn, loc in pairs:
    cur.append((fn, os.path.basename(loc).split(" ")[0]))
    if fn not in inlined:
        chains.append(cur)
        cur = []
assert len(chains) == len(addrs), (len(chains), len(addrs))
want = collections.Counter()
for a, ch in zip(addrs, chains):
    if len(ch) < 2:
        continue
    row = (ch[-1][0], ch[0][1])  # outer function, the innermost line
    want[row, tuple(ch)] += counts[a]
# ours: a row "SHARE [k] SYM SRCLINE", then its chains: "SHARE FN (inlined) LOC"
# and then the caller lines "FN LOC" (indented, no share)
got = collections.Counter()
row = chain = share = None
def flush():
    if chain:
        got[row, tuple(chain)] += share
for line in open(sys.argv[4]):
    f = line.split()
    if not f or line.startswith("#"):
        continue
    if len(f) >= 4 and f[1] == "[k]":
        flush(); chain = None
        row = (f[2], f[3])
    elif f[0].endswith("%"):
        flush()
        share = float(f[0].rstrip("%"))
        chain = [(f[1], f[-1])]
    elif chain is not None:
        chain.append((f[0], f[-1]))
flush()
bad = 0
for k, n in want.items():
    w = 100.0 * n / total
    if abs(got.get(k, -1) - w) > 0.0100001:
        print("  chain %s: want %.2f%%, ours %s" % (k, w, got.get(k)))
        bad += 1
for k in got:
    if k not in want:
        print("  chain %s: ours only (%.2f%%)" % (k, got[k]))
        bad += 1
print("%d chains" % len(want))
sys.exit(1 if bad or not want else 0)
PY
tl_case_end "($(tail -1 inl.cmp))"

# ------------------------------------------------------------ modules
tl_case "a module moved since the recording: its lines from the .ko"
mkdir -p mroot/proc/sys/kernel mroot/sys/kernel mroot/sys/module/kmodx/notes \
	mroot/sys/module/kmodx/sections mroot/usr/lib/debug/lib/modules/6.1.0-dstest/extra
objcopy -O binary --only-section=.notes vmlinux mroot/sys/kernel/notes
objcopy -O binary --only-section=.note.gnu.build-id kmodx.ko \
	mroot/sys/module/kmodx/notes/.note.gnu.build-id
echo $X_NOW >mroot/sys/module/kmodx/sections/.text
echo 6.1.0-dstest >mroot/proc/sys/kernel/osrelease
cp kmodx.ko mroot/usr/lib/debug/lib/modules/6.1.0-dstest/extra/kmodx.ko
printf 'kmodx 16384 0 - Live 0x%016x\n' $((X_NOW)) >mroot/proc/modules
{
	nm vmlinux | while read -r a t n; do
		printf '%016x %s %s\n' $((0x$a + KASLR_NOW)) $t $n
	done
	nm kmodx.ko | while read -r a t n; do
		case $n in x_init) ;; x_*) printf '%016x %s %s\t[kmodx]\n' $((X_NOW + 0x$a)) $t $n ;; esac
	done
} | sort >mroot/proc/kallsyms
# The recording's kernel build ID is the kernel root's: named from its
# kallsyms, in this boot's layout.
ours km -i km.data --kernel-root mroot --debug-dir "$tmp/dbg" -s dso,sym,srcline
awk '{ print $1 }' m.samples >m.offs
# The row's symbol: the module's ELF symbol (nm); its line: the innermost
# one (addr2line without -i).
addr2line -j .text -e kmodx.ko $(cat m.offs) >m.a2l
nm kmodx.ko | awk '$3 ~ /^x_/ && $3 != "x_init" { print $1, $3 }' >m.syms
python3 - m.samples m.a2l k.samples m.syms >km.want <<'PY' || fail "expected rows: $(cat km.want)"
import collections, os, sys
m = [l.split() for l in open(sys.argv[1])]
a2l = [l.rstrip("\n") for l in open(sys.argv[2])]
total = sum(int(n) for _, n in m) + sum(int(l.split()[1]) for l in open(sys.argv[3]))
syms = sorted((int(a, 16), n) for a, n in (l.split() for l in open(sys.argv[4])))
rows = collections.Counter()
for (o, n), loc in zip(m, a2l):
    fn = [s for a, s in syms if a <= int(o, 16)][-1]
    rows[fn, os.path.basename(loc).split(" ")[0]] += int(n)
for (fn, loc), n in rows.items():
    print("%.2f%% %s %s" % (100.0 * n / total, fn, loc))
PY
awk '$2 == "[kmodx]" { print $1, $4, $5 }' km.out | sort >km.mrows
check "module rows" km.want km.mrows
grep -q "x_read m.c:[0-9]" km.mrows || fail "no x_read line: $(head -3 km.mrows)"
# The core kernel's rows: its lines, whatever boot it is in.
awk '$2 == "[kernel.kallsyms]" { print $1, $4, $5 }' km.out | sort >km.krows
[ -s km.krows ] && grep -q " k.c:" km.krows || fail "no core kernel lines: $(head -3 km.out)"
tl_case_end "($(wc -l <km.mrows) module rows)"

tl_case "the module's debuginfo fetched in the report's one batch"
# Its .ko only behind a debuginfod server (dsserver, on 127.0.0.1), the
# recording naming its build ID: a line report fetches it with the rest,
# before naming (the progress line counts it), and only once.
tl_need_dsserver
rm -f mroot/usr/lib/debug/lib/modules/6.1.0-dstest/extra/kmodx.ko
mkdir -p srv
cp kmodx.ko srv/
tl_no_proxy
if tl_start_dsserver port srv --max-runtime 120 "$tmp/srv"; then
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/kmb-cache \
		"$DSOSTORE" report --progress --stdio -i kmb.data --kernel-root mroot \
		--debug-dir "$tmp/dbg" -s dso,sym,srcline >kmb.out 2>kmb.err ||
		fail "report: exit $?: $(tail -3 kmb.err)"
	grep -q '\[1/1\] .* 0 failed' kmb.err || fail "the .ko was not in the batch: $(cat kmb.err)"
	n=$(grep -c "/buildid/$mbid/debuginfo" srv.log)
	[ "$n" = 1 ] || fail "the .ko asked for $n times: $(cat srv.log)"
	grep -q "/buildid/$bid/" srv.log && fail "the vmlinux was asked for: $(cat srv.log)"
	awk '$2 == "[kmodx]" { print $1, $4, $5 }' kmb.out | sort >kmb.mrows
	check "fetched module rows" km.want kmb.mrows
else
	fail "dsserver did not start"
fi
tl_case_end "($(cat kmb.mrows 2>/dev/null | wc -l) module rows)"

tl_finish report_kernel_lines
