#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sample by sample, the callchains of a --call-graph dwarf recording as
perf unwinds them against ours:

  unwind_cmp.py [--was-mapped MAPS] PERF_SCRIPT OURS

PERF_SCRIPT: `perf script --no-inline -F tid,time,ip,dso`; OURS: the
output of ds_perfchains (tests/lib/perfchains.c) on the same recording.  Both
list the samples in time order, each entry as perf prints it (kernel
addresses, file offsets of user code).  The rules (docs/oracles.md):

- the kernel part of every chain is perf's;
- perf 6.1 (libunwind) ends a chain it could not unwind further with
  0xffffffffffffffff, or 0xfffffffffffffffe (that, less the 1 perf takes
  from a return address): those trailing entries are left out of its
  chain;
- then our chain is perf's, or perf's is a proper prefix of ours (perf
  stopped; we went on), or the two part after a common prefix (perf
  skipped a frame); in the last two cases every caller entry of ours
  past the common prefix must be a return address - 1 that follows a
  call instruction in its file: the first-principles check of frames
  perf does not have;
- our chain is never a proper prefix of perf's (we stop no earlier).
MAPS, for a recording whose map records were edited away: lines of
"START LEN PGOFF PATH" as the maps were; an entry of ours without a map
("[unknown]", an address) is checked in PATH at ADDR - START + PGOFF.
Prints the counts per kind; exit 1 on a broken rule."""
import sys

# libunwind's -1, as is and as a return address - 1: no user code is there
BAD_IPS = (0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFE)

def perf_samples(path):
    out, cur = [], None
    for line in open(path, errors="replace"):
        if not line.strip():
            continue
        if not line[0].isspace() or not line.startswith(("\t", "        ")):
            f = line.split()
            tid, t = int(f[0].split("/")[-1]), f[1].rstrip(":")
            s, us = t.split(".")
            cur = [tid, int(s) * 1000000 + int(us), []]
            out.append(cur)
            continue
        f = line.split(None, 1)
        dso = f[1].strip() if len(f) > 1 else ""
        if dso.startswith("(") and dso.endswith(")"):
            dso = dso[1:-1]
        cur[2].append((int(f[0], 16), dso))
    return out

def our_samples(path):
    out, cur = [], None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line:
            cur = None
            continue
        f = line.split(" ", 1)
        if cur is None:
            cur = [int(f[0]), int(f[1]) // 1000, []]
            out.append(cur)
        else:
            cur[2].append((int(f[0], 16), f[1]))
    return out

def is_kernel(e):
    return e[0] >= 0xFFFF800000000000 and e[0] not in BAD_IPS

files = {}

def vdso_image():
    """The vdso has no file: its bytes are read from this process, which
    runs on the kernel that ran the recording.  perf prints vdso entries as
    offsets into that image (it is mapped from offset 0)."""
    for line in open("/proc/self/maps"):
        if line.rstrip().endswith("[vdso]"):
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            with open("/proc/self/mem", "rb") as mem:
                mem.seek(lo)
                return mem.read(hi - lo)
    return None

was_mapped = []

def follows_call(entry):
    """entry: (file offset of return address - 1, path)."""
    off, path = entry
    if path == "[unknown]":
        for start, size, pgoff, p in was_mapped:
            if start <= off < start + size:
                off, path = off - start + pgoff, p
                break
        else:
            return False
    if path not in files:
        try:
            files[path] = vdso_image() if path == "[vdso]" else open(path, "rb").read()
        except OSError:
            files[path] = None
    data = files[path]
    ra = off + 1
    if data is None or ra < 7 or ra > len(data):
        return False
    b = data[ra - 7:ra]
    if b[2] == 0xE8:  # call rel32
        return True
    # call r/m64: ff /2, its length from the ModRM byte (and SIB)
    for at in range(6):
        m = b[at + 1]
        if b[at] != 0xFF or (m >> 3) & 7 != 2:
            continue
        mod, rm = m >> 6, m & 7
        sib_base = b[at + 2] & 7 if at + 2 < 7 else None
        if rm == 4 and mod != 3:
            n = {0: 7 if sib_base == 5 else 3, 1: 4, 2: 7}[mod]
        else:
            n = {0: 6 if rm == 5 else 2, 1: 3, 2: 6, 3: 2}[mod]
        if at + n == 7:
            return True
    return False

def main():
    args = sys.argv[1:]
    if args[:1] == ["--was-mapped"]:
        for line in open(args[1]):
            f = line.split(None, 3)
            was_mapped.append((int(f[0], 0), int(f[1], 0), int(f[2], 0), f[3].strip()))
        args = args[2:]
    perf, ours = perf_samples(args[0]), our_samples(args[1])
    bad = []
    kinds = {"same": 0, "perf stopped": 0, "perf skipped": 0, "perf -1 dropped": 0}
    checked = 0
    if len(perf) != len(ours):
        print("%d samples from perf, %d from us" % (len(perf), len(ours)))
        return 1
    for (ptid, pt, pc), (otid, ot, oc) in zip(perf, ours):
        where = "sample of %d at %d" % (ptid, pt)
        if ptid != otid or abs(pt - ot) > 1:
            bad.append("%s: ours is of %d at %d" % (where, otid, ot))
            break
        pk, ok = [e for e in pc if is_kernel(e)], [e for e in oc if is_kernel(e)]
        if pk != ok:
            bad.append("%s: kernel parts differ" % where)
            continue
        pu, ou = pc[len(pk):], oc[len(ok):]
        while pu and pu[-1][0] in BAD_IPS:
            pu.pop()
            kinds["perf -1 dropped"] += 1
        if pu == ou:
            kinds["same"] += 1
            continue
        n = 0
        while n < min(len(pu), len(ou)) and pu[n] == ou[n]:
            n += 1
        if n == len(ou):
            bad.append("%s: we stop after %d user frames, perf goes on: %s" %
                       (where, n, ["%x %s" % e for e in pu[n:n + 3]]))
            continue
        kinds["perf stopped" if n == len(pu) else "perf skipped"] += 1
        for i in range(max(n, 1), len(ou)):
            checked += 1
            if not follows_call(ou[i]):
                bad.append("%s: our frame %d (%x in %s) follows no call instruction" %
                           (where, i, ou[i][0], ou[i][1]))
                break
    print(", ".join("%s %d" % kv for kv in kinds.items()) +
          ", %d frames of ours past perf's checked" % checked)
    for b in bad[:10]:
        print(b)
    return 1 if bad else 0

sys.exit(main())
