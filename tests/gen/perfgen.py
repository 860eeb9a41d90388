#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Synthetic perf.data files that perf 6.1 reads, for tests, the fuzz corpus
and the benchmarks.  Python 3 standard library only.  Layout written from
tools/perf/Documentation/perf.data-file-format.txt and what `perf record`
6.1 writes (little-endian, x86_64).

  perfgen.py --dsos-from DIR --out F [--map-prefix P] [--table|--mmap2-build-id|
             --no-build-ids] [--samples N] [--unsampled K] [--pipe] [...]
  perfgen.py --ndsos N --out F ...        N made-up DSOs /opt/perfgen/libN.so
  perfgen.py --clone ELF N DIR            N copies of ELF (DIR/libx007.so for
                                          libx.so), distinct build IDs (the
                                          note's bytes patched)

Module use:
  dsos = dsos_from_dir(d, map_prefix="/opt/x")  # or [Dso(path, bid, samples)]
  rec = synth(dsos, where="table")   # a Recording; Dso.samples each
  rec.write(path, pipe=False)       # or rec.file_bytes(), rec.pipe_bytes()
A Recording can also be built event by event (comm, fork, exit, mmap,
mmap2, sample, finished_round, build_id) for odd cases.

One process (pid 4242) forks, execs, maps every DSO (r-x, at its own 1 MiB
slot from 0x7f0000000000), takes the samples in each, exits.  Build IDs go
in the header table (perf's normal layout; in pipe mode HEADER_BUILD_ID
records), in MMAP2 events (misc bit 14, like `perf record --buildid-mmap`)
or nowhere.
"""
import argparse
import hashlib
import os
import shutil
import struct
import sys

# event types (include/uapi/linux/perf_event.h, tools/lib/perf/.../event.h)
MMAP, COMM, EXIT, FORK, SAMPLE, MMAP2 = 1, 3, 4, 7, 9, 10
HEADER_ATTR, HEADER_BUILD_ID, FINISHED_ROUND, HEADER_FEATURE = 64, 67, 68, 80
MISC_KERNEL, MISC_USER = 1, 2
MISC_COMM_EXEC = 1 << 13
MISC_MMAP_BUILD_ID = 1 << 14
MISC_BUILD_ID_SIZE = 1 << 15
# sample_type bits
S_IP, S_TID, S_TIME, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD = (
    1 << 0, 1 << 1, 1 << 2, 1 << 5, 1 << 6, 1 << 7, 1 << 8)
# feature bits (tools/perf/util/header.h)
F_BUILD_ID, F_HOSTNAME, F_OSRELEASE, F_VERSION, F_ARCH, F_NRCPUS = 2, 3, 4, 5, 6, 7
F_CMDLINE, F_EVENT_DESC, F_SAMPLE_TIME = 11, 12, 21
ATTR_SIZE = 128  # PERF_ATTR_SIZE_VER7, what perf 6.1 writes
NAME_ALIGN = 64
PID, PPID = 4242, 4241
BASE, SLOT = 0x7F0000000000, 0x100000
KERNEL = 0xFFFFFFFF81000000


def pad(b, align=8):
    return b + b"\0" * (-len(b) % align)


def cstr(s, align=8):
    """NUL-terminated, padded: at least one NUL."""
    return pad(s.encode() + b"\0", align)


def string_feature(s):
    """perf's do_write_string: u32 length (padded), then the padded string."""
    b = cstr(s, NAME_ALIGN)
    return struct.pack("<I", len(b)) + b


def derived_build_id(key):
    """20 bytes fixed by KEY (any string): distinct keys, distinct IDs."""
    return hashlib.sha1(("perfgen:" + key).encode()).digest()


# ------------------------------------------------------------- ELF notes
def elf_build_id(path):
    """(build ID bytes, file offset of them) of an ELF file's NT_GNU_BUILD_ID
    note (SHT_NOTE sections, else PT_NOTE segments), or None."""
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < 64 or b[:4] != b"\x7fELF" or b[4] not in (1, 2) or b[5] not in (1, 2):
        return None
    e = "<" if b[5] == 1 else ">"
    if b[4] == 2:  # ELF64: Shdr offset @24, Phdr offset @8, filesz @32
        w, wsz, sh_at, ph_at, phsz_at = "Q", 8, 24, 8, 32
        phoff, shoff = struct.unpack_from(e + "QQ", b, 32)
        phent, phnum, shent, shnum = struct.unpack_from(e + "HHHH", b, 54)
    else:  # ELF32: Shdr offset @16, Phdr offset @4, filesz @16
        w, wsz, sh_at, ph_at, phsz_at = "I", 4, 16, 4, 16
        phoff, shoff = struct.unpack_from(e + "II", b, 28)
        phent, phnum, shent, shnum = struct.unpack_from(e + "HHHH", b, 42)
    get = lambda fmt, at: struct.unpack_from(e + fmt, b, at)[0]
    try:
        shdrs = [shoff + i * shent for i in range(shnum if shoff else 0)]
        areas = [(get(w, o + sh_at), get(w, o + sh_at + wsz))
                 for o in shdrs if get("I", o + 4) == 7]  # SHT_NOTE
        if not areas:
            phdrs = [phoff + i * phent for i in range(phnum if phoff else 0)]
            areas = [(get(w, o + ph_at), get(w, o + phsz_at))
                     for o in phdrs if get("I", o) == 4]  # PT_NOTE
    except struct.error:
        return None
    for off, size in areas:
        at, end = off, min(off + size, len(b))
        while at + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from(e + "III", b, at)
            name_at = at + 12
            desc_at = name_at + (namesz + 3 & ~3)
            if ntype == 3 and b[name_at:name_at + namesz] == b"GNU\0" \
                    and desc_at + descsz <= end:
                return b[desc_at:desc_at + descsz], desc_at
            at = desc_at + (descsz + 3 & ~3)
    return None


def clone_elf(src, dst, build_id):
    """Copy SRC to DST with its build-ID note's bytes replaced (same length)."""
    bid, off = elf_build_id(src)
    assert len(build_id) == len(bid), "build ID length differs from the note's"
    shutil.copyfile(src, dst)
    with open(dst, "r+b") as f:
        f.seek(off)
        f.write(build_id)


class Dso:
    def __init__(self, path, build_id, samples=1):
        self.path, self.build_id, self.samples = path, build_id, samples


def dsos_from_dir(d, map_prefix=None):
    """A Dso per ELF file with a build ID in D (sorted by name); its path is
    MAP_PREFIX/name when given (a path that need not exist), else real."""
    out = []
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if not os.path.isfile(p) or os.path.islink(p):
            continue
        note = elf_build_id(p)
        if note:
            path = os.path.join(map_prefix, name) if map_prefix else os.path.abspath(p)
            out.append(Dso(path, note[0]))
    return out


def made_up_dsos(n, prefix="/opt/perfgen"):
    return [Dso("%s/lib%03d.so" % (prefix, i), derived_build_id("%s/%d" % (prefix, i)))
            for i in range(n)]


# ------------------------------------------------------------- recording
class Recording:
    """One cpu-clock attr, a list of records, a build-ID table, features."""

    def __init__(self, sample_id=False, cpu=False, callchain=False):
        self.sample_type = S_IP | S_TID | S_TIME | S_PERIOD
        self.sample_type |= (S_ID if sample_id else 0) | (S_CPU if cpu else 0) | \
            (S_CALLCHAIN if callchain else 0)
        self.ids = [1001]
        self.records = []      # bytes, in order
        self.table = []        # (misc, pid, build id, path)
        self.cmdline = ["perf", "record", "-e", "cpu-clock"]
        self.times = []        # of the samples
        self.features = {F_HOSTNAME: string_feature("perfgen"),
                         F_OSRELEASE: string_feature("6.1.0-perfgen"),
                         F_VERSION: string_feature("6.1.perfgen"),
                         F_ARCH: string_feature("x86_64"),
                         F_NRCPUS: struct.pack("<II", 2, 2)}

    def attr(self):
        flags = 0
        for bit in (0, 1, 8, 9, 10, 12, 13, 18, 20, 23, 24):
            # disabled inherit mmap comm freq enable_on_exec task
            # sample_id_all exclude_guest mmap2 comm_exec
            flags |= 1 << bit
        a = struct.pack("<IIQQQQQ", 1, ATTR_SIZE, 0, 4000, self.sample_type, 0, flags)
        return a + b"\0" * (ATTR_SIZE - len(a))

    def _id_trailer(self, pid, tid, time, cpu):
        t = struct.pack("<iIQ", pid, tid, time)
        if self.sample_type & S_ID:
            t += struct.pack("<Q", self.ids[0])
        if self.sample_type & S_CPU:
            t += struct.pack("<II", cpu, 0)
        return t

    def _add(self, rtype, misc, body):
        body = pad(body)
        self.records.append(struct.pack("<IHH", rtype, misc, 8 + len(body)) + body)

    def comm(self, pid, tid, name, time, exec_=True, cpu=0):
        self._add(COMM, MISC_COMM_EXEC if exec_ else 0,
                  struct.pack("<II", pid, tid) + cstr(name) +
                  self._id_trailer(pid, tid, time, cpu))

    def fork(self, pid, ppid, tid, ptid, time, cpu=0, rtype=FORK):
        self._add(rtype, 0, struct.pack("<IIIIQ", pid, ppid, tid, ptid, time) +
                  self._id_trailer(pid, tid, time, cpu))

    def exit(self, pid, ppid, tid, ptid, time, cpu=0):
        self.fork(pid, ppid, tid, ptid, time, cpu, rtype=EXIT)

    def mmap(self, pid, tid, addr, length, pgoff, path, time, cpu=0, misc=MISC_USER):
        self._add(MMAP, misc, struct.pack("<iIQQQ", pid, tid, addr, length, pgoff) +
                  cstr(path) + self._id_trailer(pid, tid, time, cpu))

    def mmap2(self, pid, tid, addr, length, pgoff, path, time, build_id=None,
              inode=(8, 1, 1000, 0), prot=5, flags=2, cpu=0):
        """build_id: the build-ID variant (misc bit 14), else inode's
        (maj, min, ino, ino_generation)."""
        misc = MISC_USER
        if build_id is not None:
            misc |= MISC_MMAP_BUILD_ID
            mid = struct.pack("<BBH", len(build_id), 0, 0) + build_id.ljust(20, b"\0")
        else:
            mid = struct.pack("<IIQQ", *inode)
        self._add(MMAP2, misc, struct.pack("<IIQQQ", pid, tid, addr, length, pgoff) + mid +
                  struct.pack("<II", prot, flags) + cstr(path) +
                  self._id_trailer(pid, tid, time, cpu))

    def sample(self, pid, tid, ip, time, period=250000, cpu=0, callchain=None,
               misc=MISC_USER):
        st = self.sample_type
        b = struct.pack("<QIIQ", ip, pid, tid, time)
        if st & S_ID:
            b += struct.pack("<Q", self.ids[0])
        if st & S_CPU:
            b += struct.pack("<II", cpu, 0)
        b += struct.pack("<Q", period)
        if st & S_CALLCHAIN:
            chain = [0xFFFFFFFFFFFFFE00] + list(callchain or [ip])  # PERF_CONTEXT_USER
            b += struct.pack("<Q%dQ" % len(chain), len(chain), *chain)
        self.times.append(time)
        self._add(SAMPLE, misc, b)

    def finished_round(self):
        self.records.append(struct.pack("<IHH", FINISHED_ROUND, 0, 8))

    def build_id(self, build_id, path, pid=-1, cpumode=MISC_USER):
        self.table.append((cpumode | MISC_BUILD_ID_SIZE, pid, build_id, path))

    # ----------------------------------------------------------- output
    def _build_id_records(self, rtype=HEADER_BUILD_ID):
        out = b""
        for misc, pid, bid, path in self.table:
            name = cstr(path, NAME_ALIGN)
            out += struct.pack("<IHHi", rtype, misc, 36 + len(name), pid) + \
                bid.ljust(20, b"\0") + struct.pack("<BBH", len(bid), 0, 0) + name
        return out

    def _features(self):
        f = dict(self.features)
        f[F_CMDLINE] = struct.pack("<I", len(self.cmdline)) + \
            b"".join(string_feature(s) for s in self.cmdline)
        f[F_EVENT_DESC] = struct.pack("<II", 1, ATTR_SIZE) + self.attr() + \
            struct.pack("<I", len(self.ids)) + string_feature("cpu-clock") + \
            struct.pack("<%dQ" % len(self.ids), *self.ids)
        if self.times:
            f[F_SAMPLE_TIME] = struct.pack("<QQ", min(self.times), max(self.times))
        return f

    def file_bytes(self):
        ids = struct.pack("<%dQ" % len(self.ids), *self.ids)
        ids_off = 104
        attrs_off = ids_off + len(ids)
        attr_rec = self.attr() + struct.pack("<QQ", ids_off, len(ids))
        data_off = attrs_off + len(attr_rec)
        data = b"".join(self.records)
        feats = self._features()
        if self.table:
            feats[F_BUILD_ID] = self._build_id_records()
        bits = sorted(feats)
        at = data_off + len(data) + 16 * len(bits)
        table, body = b"", b""
        for bit in bits:
            table += struct.pack("<QQ", at + len(body), len(feats[bit]))
            body += feats[bit]
        words = [0, 0, 0, 0]
        for bit in bits:
            words[bit // 64] |= 1 << bit % 64
        head = b"PERFILE2" + struct.pack("<12Q", 104, len(attr_rec), attrs_off, len(attr_rec),
                                         data_off, len(data), 0, 0, *words)
        return head + ids + attr_rec + data + table + body

    def pipe_bytes(self):
        """`perf record -o -` style: attr and features as records, the
        build-ID table as HEADER_BUILD_ID records before the events."""
        out = b"PERFILE2" + struct.pack("<Q", 16)
        attr = self.attr() + struct.pack("<%dQ" % len(self.ids), *self.ids)
        out += struct.pack("<IHH", HEADER_ATTR, 0, 8 + len(attr)) + attr
        for bit, body in sorted(self._features().items()):
            # unpadded, as perf writes them
            out += struct.pack("<IHHQ", HEADER_FEATURE, 0, 16 + len(body), bit) + body
        return out + self._build_id_records() + b"".join(self.records)

    def write(self, path, pipe=False):
        data = self.pipe_bytes() if pipe else self.file_bytes()
        if path == "-":
            sys.stdout.buffer.write(data)
        else:
            with open(path, "wb") as f:
                f.write(data)


def synth(dsos, where="table", mmap_kind="mmap2", sample_id=False, cpu=False,
          callchain=False, kernel_build_id=None, kernel_samples=0, t0=1000000000):
    """A recording of one process mapping every Dso in DSOS and taking
    dso.samples samples in each.  WHERE the build IDs go: "table" (header
    table, DSOs with samples, as perf record), "table-all" (every DSO, as
    --buildid-all), "mmap2" (MMAP2 build-ID variant), "both" or "none".
    MMAP_KIND "mmap" writes the old MMAP events (no build ID in them).
    The kernel is mapped as perf does ([kernel.kallsyms]_text, pid -1);
    KERNEL_SAMPLES land in it, KERNEL_BUILD_ID goes in the table."""
    rec = Recording(sample_id=sample_id, cpu=cpu, callchain=callchain)
    t = t0
    rec.mmap(-1, 0, KERNEL, 0x1000000, KERNEL, "[kernel.kallsyms]_text", 0,
             misc=MISC_KERNEL)
    if kernel_build_id and where in ("table", "table-all", "both"):
        rec.build_id(kernel_build_id, "[kernel.kallsyms]", cpumode=MISC_KERNEL)
    rec.fork(PID, PPID, PID, PPID, t)
    rec.comm(PID, PID, "perfgen-load", t + 1)
    t += 10
    for i, d in enumerate(dsos):
        t += 10
        addr = BASE + i * SLOT
        if mmap_kind == "mmap":
            rec.mmap(PID, PID, addr, SLOT // 2, 0, d.path, t)
        else:
            bid = d.build_id if where in ("mmap2", "both") else None
            rec.mmap2(PID, PID, addr, SLOT // 2, 0, d.path, t, build_id=bid,
                      inode=(8, 1, 1000 + i, 0))
        if where == "table-all" or where in ("table", "both") and d.samples > 0:
            rec.build_id(d.build_id, d.path)  # perf's table: DSOs with hits
    rec.finished_round()
    for i, d in enumerate(dsos):
        for k in range(d.samples):
            t += 1000
            ip = BASE + i * SLOT + 0x1000 + 16 * k
            caller = BASE + ((i + 1) % len(dsos)) * SLOT + 0x1040
            rec.sample(PID, PID, ip, t, cpu=k % 2, callchain=[ip, caller])
    for k in range(kernel_samples):
        t += 1000
        rec.sample(PID, PID, KERNEL + 0x1000 + 16 * k, t, misc=MISC_KERNEL)
    rec.finished_round()
    rec.exit(PID, PPID, PID, PPID, t + 10)
    rec.finished_round()
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--dsos-from", metavar="DIR", help="one DSO per ELF file in DIR")
    src.add_argument("--ndsos", type=int, metavar="N", help="N made-up DSOs")
    src.add_argument("--clone", nargs=3, metavar=("ELF", "N", "DIR"),
                     help="write N copies of ELF with distinct build IDs to DIR")
    ap.add_argument("--out", "-o", metavar="F", help="perf.data to write ('-': stdout)")
    ap.add_argument("--map-prefix", metavar="P", help="map DIR/x as P/x")
    w = ap.add_mutually_exclusive_group()
    for opt, val in (("--table", "table"), ("--table-all", "table-all"),
                     ("--mmap2-build-id", "mmap2"),
                     ("--both", "both"), ("--no-build-ids", "none")):
        w.add_argument(opt, dest="where", action="store_const", const=val)
    ap.add_argument("--mmap", action="store_true", help="MMAP events, not MMAP2")
    ap.add_argument("--samples", type=int, default=1, metavar="N", help="per DSO (1)")
    ap.add_argument("--unsampled", type=int, default=0, metavar="K",
                    help="the last K DSOs get no sample")
    ap.add_argument("--kernel-build-id", metavar="HEX", help="[kernel.kallsyms]'s, in the table")
    ap.add_argument("--kernel-samples", type=int, default=0, metavar="N")
    ap.add_argument("--pipe", action="store_true", help="pipe mode (perf record -o -)")
    ap.add_argument("--sample-id", action="store_true", help="PERF_SAMPLE_ID")
    ap.add_argument("--cpu", action="store_true", help="PERF_SAMPLE_CPU")
    ap.add_argument("--callchain", action="store_true", help="PERF_SAMPLE_CALLCHAIN")
    a = ap.parse_args(argv)
    if a.clone:
        elf, n, d = a.clone[0], int(a.clone[1]), a.clone[2]
        os.makedirs(d, exist_ok=True)
        root, ext = os.path.splitext(os.path.basename(elf))  # libx.so: libx007.so
        for i in range(n):
            clone_elf(elf, os.path.join(d, "%s%03d%s" % (root, i, ext)),
                      derived_build_id("%s/%d" % (root, i)))
        return 0
    if not a.out:
        ap.error("--out is required")
    dsos = dsos_from_dir(a.dsos_from, a.map_prefix) if a.dsos_from else made_up_dsos(a.ndsos)
    if not dsos:
        ap.error("no DSO")
    for i, d in enumerate(dsos):
        d.samples = a.samples if i < len(dsos) - a.unsampled else 0
    rec = synth(dsos, where=a.where or "table", mmap_kind="mmap" if a.mmap else "mmap2",
                sample_id=a.sample_id, cpu=a.cpu, callchain=a.callchain,
                kernel_samples=a.kernel_samples,
                kernel_build_id=bytes.fromhex(a.kernel_build_id) if a.kernel_build_id else None)
    rec.write(a.out, pipe=a.pipe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
