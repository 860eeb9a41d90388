#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kernel module samples named where the module is now (lib/perf/profile.c
# module_delta, lib/live/ksym.c).  This machine has no modules, so the kernel
# is made up: a recording (tests/gen/perfgen.py) of a kernel whose build ID is
# the test's, with two module maps ("[kmodx]", and a .ko path whose name
# has a dash), samples in both modules and in the core kernel; and a
# kernel root (--kernel-root: proc/kallsyms, sys/kernel/notes, maybe
# proc/modules) for the kernel as it is "now".
#  - same place: the modules and the kernel where they were recorded; perf
#    report --kallsyms on the same kallsyms file is the oracle (rows equal,
#    shares to 0.01);
#  - moved: the kernel by one KASLR offset, each module by its own; perf
#    6.1 names module samples by the recorded address in the new layout
#    (docs/oracles.md), so the expected rows come from first principles:
#    the symbol of the module at IP - recorded start + start now;
#  - proc/modules: the module's start now is /proc/modules' address (what
#    perf record wrote as the MMAP start), not its lowest symbol (here
#    0x80 past it: taken for the start, a sample at +0x10 would be named
#    x_read, not x_init);
#  - no module: samples in an ftrace trampoline and a BPF program (kallsyms'
#    pseudo-modules, which no MMAP names) and past them are perf's
#    "[unknown]" addresses, not the nearest kallsyms name.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf python3
tl_tmpdir dskmod
cd "$tmp" || exit 2
export HOME=$tmp/home DSOSTORE_SYMINDEX_PATH=$tmp/derived DEBUGINFOD_URLS=
mkdir -p "$HOME"
unset DSOSTORE_KERNEL_ROOT
tl_sanitizer_exitcodes

# gen.py OUT KDELTA XDELTA NDELTA [MODULES-PAD]: the recording (OUT.data),
# the kernel root (OUT.root), the expected rows (OUT.want: "SHARE SYMBOL"
# of each kernel-side row, from first principles).
cat >gen.py <<'EOF'
import collections, os, sys
sys.path.insert(0, os.environ["DS_SRC"] + "/tests/gen")
from perfgen import Recording, MISC_KERNEL
out, kd, xd, nd = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3], 0), int(sys.argv[4], 0)
pad = int(sys.argv[5], 0) if len(sys.argv) > 5 else 0
bid = bytes.fromhex("6b65726e656c2d6f662d7468652d74657374")  # 18 bytes
K, X, N = 0xffffffff81000000, 0xffffffffc0400000, 0xffffffffc0800000
core = [(0x0, "_text"), (0x0, "_stext"), (0x100, "do_one"), (0x200, "do_two"), (0x300, "do_three")]
xmod = [(0x0, "x_init"), (0x80, "x_read"), (0x80, "__x_read_alias"), (0x200, "x_write")]
nmod = [(0x0, "nf_hook"), (0x140, "nf_drop")]
r = Recording()
r.build_id(bid, "[kernel.kallsyms]", cpumode=MISC_KERNEL)
r.comm(100, 100, "load", 1)
r.mmap(-1, 0, K, 0x1000000, K, "[kernel.kallsyms]_text", 1, misc=MISC_KERNEL)
r.mmap(-1, 0, X, 0x4000, 0, "[kmodx]", 1, misc=MISC_KERNEL)
r.mmap(-1, 0, N, 0x4000, 0, "/lib/modules/6.1.0-perfgen/kernel/net/nf-foo.ko", 1,
       misc=MISC_KERNEL)
ips = [K + 0x110] * 3 + [K + 0x2f0] * 2 + [X + pad + 0x10] * 4 + [X + pad + 0x90] * 5 + \
      [X + pad + 0x250] * 2 + [N + pad + 0x20] * 6 + [N + pad + 0x150] * 1
for t, ip in enumerate(ips):
    r.sample(100, 100, ip, 10 + t, misc=MISC_KERNEL)
r.write(out + ".data")
root = out + ".root"
os.makedirs(root + "/proc")
os.makedirs(root + "/sys/kernel")
with open(root + "/sys/kernel/notes", "wb") as f:
    f.write((4).to_bytes(4, "little") + len(bid).to_bytes(4, "little") + (3).to_bytes(4, "little")
            + b"GNU\0" + bid + b"\0" * (-len(bid) % 4))
# Now: core moved by kd, modules by xd and nd; symbols from "pad" on
# (proc/modules then says where each module starts).
with open(root + "/proc/kallsyms", "w") as f:
    for o, n in core:
        f.write("%016x T %s\n" % (K + kd + o, n))
    f.write("%016x D some_data\n" % (K + kd + 0x400))
    for o, n in xmod:
        f.write("%016x t %s\t[kmodx]\n" % (X + xd + pad + o, n))
    for o, n in nmod:
        f.write("%016x T %s\t[nf_foo]\n" % (N + nd + pad + o, n))
if pad:
    with open(root + "/proc/modules", "w") as f:
        f.write("kmodx 16384 0 - Live 0x%016x\n" % (X + xd))
        f.write("nf_foo 16384 0 - Live 0x%016x (O)\n" % (N + nd))
# First principles: the symbol with the greatest start <= the address
# where it is now (the last listed of aliases), in the sample's own part.
def name(table, base_now, ip_now):
    best = None
    for o, n in table:
        if base_now + o <= ip_now and (best is None or o >= best[0]):
            best = (o, n)
    return best[1]
rows = collections.Counter()
for ip in ips:
    if K <= ip < X:
        rows["[kernel.kallsyms]", name(core, K + kd, ip + kd)] += 1
    elif X <= ip < N:
        rows["[kmodx]", name(xmod, X + xd + pad, ip + xd)] += 1
    else:
        rows["[nf_foo]", name(nmod, N + nd + pad, ip + nd)] += 1
with open(out + ".want", "w") as f:
    for (dso, sym), c in rows.items():
        f.write("%.2f%% %s %s\n" % (100.0 * c / len(ips), dso, sym))
EOF

rows() { # FILE: "SHARE DSO SYMBOL" of each [k] row, sorted
	awk '$3 == "[k]" { print $1, $2, $4 }' "$1" | sort
}
check() { # NAME WANT-FILE GOT-FILE
	python3 "$DS_SRC/tests/lib/rows_cmp.py" "$2" "$3" "$1" || fail "$1: rows differ (above)"
}
ours() { # NAME
	"$DSOSTORE" report --no-fetch -i $1.data --kernel-root $1.root --sort dso,sym >$1.out \
		2>$1.err || fail "$1: report: $(tail -3 $1.err)"
	rows $1.out >$1.rows
}

tl_case same-place
DS_SRC=$DS_SRC python3 gen.py same 0 0 0 || fail "gen.py"
perf report -i same.data --kallsyms same.root/proc/kallsyms --stdio --sort dso,sym \
	>same.perf 2>same.perferr || fail "perf report: $(tail -2 same.perferr)"
rows same.perf >same.perfrows
ours same
check same-place same.perfrows same.rows
check same-place-principles same.want same.rows
grep -q "x_read_alias" same.rows || fail "perf's pick among aliases: $(grep kmodx same.rows)"
tl_case_end "(perf report --kallsyms as the oracle)"

tl_case moved
DS_SRC=$DS_SRC python3 gen.py moved 0x1c00000 0x7000 -0x30000 || fail "gen.py"
ours moved
check moved moved.want moved.rows
perf report -i moved.data --kallsyms moved.root/proc/kallsyms --stdio --sort dso,sym \
	>moved.perf 2>/dev/null
rows moved.perf >moved.perfrows
# Where perf is right (the core kernel: its KASLR delta), it agrees.
grep kernel.kallsyms moved.want | sort >moved.kwant
grep kernel.kallsyms moved.perfrows >moved.kperf
check moved-core-perf moved.kwant moved.kperf
tl_case_end "(kernel +0x1c00000, [kmodx] +0x7000, [nf_foo] -0x30000)"

tl_case proc-modules
DS_SRC=$DS_SRC python3 gen.py mods 0 0x7000 0x5000 0x80 || fail "gen.py"
ours mods
check proc-modules mods.want mods.rows
tl_case_end "(symbols 0x80 past /proc/modules' start)"

# Module space with no module there: an ftrace trampoline and a BPF
# program, which kallsyms lists under pseudo-modules ("[__builtin__ftrace]",
# "[bpf]") that no MMAP event names, and an address past both.  The kernel's
# MMAP ends at _etext, as perf record writes it: perf report gives such
# samples no DSO ("[unknown]", the address), and so must we.
tl_case no-module
cat >nomod.py <<'EOF'
import os, sys
sys.path.insert(0, os.environ["DS_SRC"] + "/tests/gen")
from perfgen import Recording, MISC_KERNEL
bid = bytes.fromhex("6b65726e656c2d6f662d7468652d74657374")
K, F, B = 0xffffffff81000000, 0xffffffffc0201000, 0xffffffffc0300000
r = Recording()
r.build_id(bid, "[kernel.kallsyms]", cpumode=MISC_KERNEL)
r.comm(100, 100, "load", 1)
r.mmap(-1, 0, K, 0x1000, K, "[kernel.kallsyms]_text", 1, misc=MISC_KERNEL)
ips = [K + 0x110] * 5 + [K + 0x210] * 3 + [F + 0x10] * 4 + [F + 0x5000] + [B + 0x20] * 2
for t, ip in enumerate(ips):
    r.sample(100, 100, ip, 10 + t, misc=MISC_KERNEL)
r.write("nomod.data")
os.makedirs("nomod.root/proc")
os.makedirs("nomod.root/sys/kernel")
with open("nomod.root/sys/kernel/notes", "wb") as f:
    f.write((4).to_bytes(4, "little") + len(bid).to_bytes(4, "little") + (3).to_bytes(4, "little")
            + b"GNU\0" + bid + b"\0" * (-len(bid) % 4))
with open("nomod.root/proc/kallsyms", "w") as f:
    for o, n in [(0, "_text"), (0, "_stext"), (0x100, "do_one"), (0x200, "do_two"),
                 (0x1000, "_etext")]:
        f.write("%016x T %s\n" % (K + o, n))
    f.write("%016x t ftrace_trampoline\t[__builtin__ftrace]\n" % F)
    f.write("%016x t bpf_prog_6deef7357e7b4530_sd_fw_ingress\t[bpf]\n" % B)
EOF
DS_SRC=$DS_SRC python3 nomod.py || fail "nomod.py"
perf report -i nomod.data --kallsyms nomod.root/proc/kallsyms --stdio --sort dso,sym \
	>nomod.perf 2>nomod.perferr || fail "perf report: $(tail -2 nomod.perferr)"
rows nomod.perf >nomod.perfrows
[ "$(grep -c '^[0-9.]*% \[unknown\] 0xffffffffc0' nomod.perfrows)" = 3 ] ||
	fail "perf's rows are not the three unnamed ones expected: $(cat nomod.perfrows)"
ours nomod
check no-module nomod.perfrows nomod.rows
tl_case_end "(an ftrace trampoline and a BPF program: [unknown], as perf report --kallsyms)"

tl_finish report_kmod
