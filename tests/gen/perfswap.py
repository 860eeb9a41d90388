#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Byte-order tools for perf.data, for the tests.  Written from
tools/perf/Documentation/perf.data-file-format.txt and perf's own readers
(util/header.c process_*, util/session.c perf_event__*_swap,
util/evsel.c evsel__parse_sample).

  perfswap.py IN OUT        IN rewritten in the other byte order, as a perf
                            of that byte order would have written it
  perfswap.py --layout IN   "table_off nfeatures build_off build_size"
                            (build_* are -1 when there is no build-ID table)
  perfswap.py --list IN     "<hex> <path>" per build-ID record, file order

The conversion covers file mode (PERFILE2 header, attrs and their ids, the
data section, every feature section perf 6.1 writes) and pipe mode (header,
then records to the end of the file: HEADER_ATTR, HEADER_FEATURE,
HEADER_BUILD_ID, tracing data and AUXTRACE payloads included).  Every field
is reversed by its own size.  Bytes are left alone: strings, build IDs,
tracepoint RAW data and tracing data (self-describing: they carry their
own byte order), AUX data, BTF blobs.  Bitfields: perf_event_attr's flags
word gets perf's swap_bitfield (the bits of each byte reversed), a branch
entry's flags word gets perf's evsel__bitfield_swap_branch_flags field
layout.  A user stack (SAMPLE_STACK_USER) is swapped as u64 words, which
is what perf undoes on reading.

Records are decoded with the attr perf would pick (a single attr, or the
one whose id sits at evlist id_pos / is_pos); samples field by field from
that attr's sample_type, read_format, branch_sample_type and register
masks; the sample_id trailer of other kernel records likewise.

Compressed records (perf record -z, types 81 and 83) hold native-order
records in zstd frames: they are decompressed (one stream across records,
as perf does), converted, and compressed again with libzstd through
ctypes, at the level the COMPRESSED feature names.  The data section may
then change size: the feature sections move with it.  Without libzstd
the conversion is refused with exit status 3.  Compressed files do not come
back byte-identical after two conversions (the frames are new); their
content does.

Left as they are, with a note on stderr where it matters: features and
record types perf 6.1 does not know (user types after 83 are swapped as
u64 words), the arrays after a BPF_PROG_INFO entry's bpf_prog_info (perf
does not read them from a swapped file), attr fields after config3.

Exit status: 0 done, 1 malformed input, 2 usage, 3 cannot convert this
file here (zstd unavailable).
"""
import ctypes
import ctypes.util
import struct
import sys

MAGIC = b"PERFILE2"  # the u64 0x32454c4946524550 stored little-endian
HEADER_SIZE = 104
FEAT_BUILD_ID = 2
BID_RECORD_MIN = 36
MISC_BUILD_ID_SIZE = 1 << 15
MISC_MMAP_BUILD_ID = 1 << 14

# perf_event_attr.sample_type
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU = (1 << i for i in range(8))
S_PERIOD, S_STREAM_ID, S_RAW, S_BRANCH_STACK = (1 << i for i in range(8, 12))
S_REGS_USER, S_STACK_USER, S_WEIGHT, S_DATA_SRC = (1 << i for i in range(12, 16))
S_IDENTIFIER, S_TRANSACTION, S_REGS_INTR, S_PHYS_ADDR = (1 << i for i in range(16, 20))
S_AUX, S_CGROUP, S_DATA_PAGE_SIZE, S_CODE_PAGE_SIZE = (1 << i for i in range(20, 24))
S_WEIGHT_STRUCT = 1 << 24
# read_format
F_TOTAL_TIME_ENABLED, F_TOTAL_TIME_RUNNING, F_ID, F_GROUP, F_LOST = (1 << i for i in range(5))
# branch_sample_type
B_HW_INDEX = 1 << 17
B_COUNTERS = 1 << 19
ATTR_FLAG_SAMPLE_ID_ALL = 1 << 18

# perf_event_attr fields after the flags word, (offset, size), as far as
# attr.size reaches: wakeup_events, bp_type, config1, config2,
# branch_sample_type, sample_regs_user, sample_stack_user, clockid,
# sample_regs_intr, aux_watermark, sample_max_stack, reserved,
# aux_sample_size, reserved, sig_data, config3.
ATTR_FIELDS = ((0, 4), (4, 4), (8, 8), (16, 8), (24, 8), (32, 8),
               (48, 4), (52, 4), (56, 8), (64, 8), (72, 8), (80, 8), (88, 4),
               (92, 4), (96, 8), (104, 4), (108, 2), (110, 2), (112, 4),
               (116, 4), (120, 8), (128, 8))
ATTR_FLAGS_OFF = 40
ATTR_SIZE_VER0 = 64

# struct branch_flags as a little-endian compiler lays it out: (bit, width)
# of mispred, predicted, in_tx, abort, cycles, type, spec, new_type, priv,
# reserved.  A big-endian compiler puts each field at 64 - bit - width.
BRANCH_FLAGS = ((0, 1), (1, 1), (2, 1), (3, 1), (4, 16), (20, 4), (24, 2),
                (26, 4), (30, 3), (33, 31))

REVBITS = bytes(int("{:08b}".format(i)[::-1], 2) for i in range(256))

# Record types.
R_MMAP, R_LOST, R_COMM, R_EXIT, R_THROTTLE, R_UNTHROTTLE, R_FORK = range(1, 8)
R_READ, R_SAMPLE, R_MMAP2, R_AUX, R_ITRACE_START, R_LOST_SAMPLES = range(8, 14)
R_SWITCH, R_SWITCH_CPU_WIDE, R_NAMESPACES, R_KSYMBOL, R_BPF_EVENT = range(14, 19)
R_CGROUP, R_TEXT_POKE, R_AUX_OUTPUT_HW_ID = range(19, 22)
R_USER_START = 64
R_HEADER_ATTR, R_EVENT_TYPE, R_TRACING_DATA, R_BUILD_ID = range(64, 68)
R_FINISHED_ROUND, R_ID_INDEX, R_AUXTRACE_INFO, R_AUXTRACE = range(68, 72)
R_AUXTRACE_ERROR, R_THREAD_MAP, R_CPU_MAP, R_STAT_CONFIG = range(72, 76)
R_STAT, R_STAT_ROUND, R_EVENT_UPDATE, R_TIME_CONV = range(76, 80)
R_HEADER_FEATURE, R_COMPRESSED, R_FINISHED_INIT, R_COMPRESSED2 = range(80, 84)

# Kernel records: the fixed fields before bytes (file names, strings) and
# the sample_id trailer.
KERNEL_FIELDS = {
    R_MMAP: (4, 4, 8, 8, 8),
    R_LOST: (8, 8),
    R_COMM: (4, 4),
    R_EXIT: (4, 4, 4, 4, 8),
    R_THROTTLE: (8, 8, 8),
    R_UNTHROTTLE: (8, 8, 8),
    R_FORK: (4, 4, 4, 4, 8),
    R_AUX: (8, 8, 8),
    R_ITRACE_START: (4, 4),
    R_LOST_SAMPLES: (8,),
    R_SWITCH: (),
    R_SWITCH_CPU_WIDE: (4, 4),
    R_KSYMBOL: (8, 4, 2, 2),
    R_BPF_EVENT: (2, 2, 4),
    R_CGROUP: (8,),
    R_TEXT_POKE: (8, 2, 2),
    R_AUX_OUTPUT_HW_ID: (8,),
}

# Header features.
(FEAT_TRACING_DATA, _, FEAT_HOSTNAME, FEAT_OSRELEASE, FEAT_VERSION, FEAT_ARCH,
 FEAT_NRCPUS, FEAT_CPUDESC, FEAT_CPUID, FEAT_TOTAL_MEM, FEAT_CMDLINE,
 FEAT_EVENT_DESC, FEAT_CPU_TOPOLOGY, FEAT_NUMA_TOPOLOGY, FEAT_BRANCH_STACK,
 FEAT_PMU_MAPPINGS, FEAT_GROUP_DESC, FEAT_AUXTRACE, FEAT_STAT, FEAT_CACHE,
 FEAT_SAMPLE_TIME, FEAT_MEM_TOPOLOGY, FEAT_CLOCKID, FEAT_DIR_FORMAT,
 FEAT_BPF_PROG_INFO, FEAT_BPF_BTF, FEAT_COMPRESSED, FEAT_CPU_PMU_CAPS,
 FEAT_CLOCK_DATA, FEAT_HYBRID_TOPOLOGY, FEAT_PMU_CAPS,
 FEAT_CPU_DOMAIN_INFO) = range(1, 33)

# struct bpf_prog_info, (offset, size) of its numbers; tag and name are
# bytes, gpl_compatible (84) a bitfield.
BPF_PROG_INFO_FIELDS = ((0, 4), (4, 4), (16, 4), (20, 4), (24, 8), (32, 8),
                        (40, 8), (48, 4), (52, 4), (56, 8), (80, 4), (88, 8),
                        (96, 8), (104, 4), (108, 4), (112, 8), (120, 8),
                        (128, 4), (132, 4), (136, 8), (144, 4), (148, 4),
                        (152, 8), (160, 8), (168, 4), (172, 4), (176, 4),
                        (180, 4), (184, 8), (192, 8), (200, 8), (208, 8),
                        (216, 4), (220, 4), (224, 4))

MAX_RECORD = 0xffff


class Bad(Exception):
    pass


class Refused(Exception):
    pass


def order_of(buf):
    """'<' or '>' from the magic."""
    if buf[:8] == MAGIC:
        return "<"
    if buf[:8] == MAGIC[::-1]:
        return ">"
    raise Bad("not a file-mode perf.data (magic)")


def layout(buf):
    """(byte order, header fields, feature table offset, set feature bits)."""
    e = order_of(buf)
    if len(buf) < 16:
        raise Bad("shorter than a header")
    if struct.unpack_from(e + "Q", buf, 8)[0] == 16:
        raise Bad("pipe-mode perf.data has no header to convert")
    if len(buf) < HEADER_SIZE:
        raise Bad("shorter than a header")
    h = struct.unpack_from(e + "13Q", buf, 0)
    data_off, data_size = h[5], h[6]
    words = h[9:13]
    bits = [i for i in range(256) if words[i // 64] >> (i % 64) & 1]
    return e, h, data_off + data_size, bits


def build_id_section(buf):
    """(offset, size) of the HEADER_BUILD_ID section, or None."""
    e, _, table, bits = layout(buf)
    if FEAT_BUILD_ID not in bits:
        return None
    at = table + 16 * bits.index(FEAT_BUILD_ID)
    if at + 16 > len(buf):
        raise Bad("feature table cut at %d" % at)
    off, size = struct.unpack_from(e + "QQ", buf, at)
    if off + size > len(buf):
        raise Bad("build-ID section beyond the file")
    return off, size


def records(buf):
    """(offset, misc, size) of each build-ID record, in file order."""
    sec = build_id_section(buf)
    if not sec:
        return []
    e = order_of(buf)
    off, end = sec[0], sec[0] + sec[1]
    out = []
    while off < end:
        if end - off < 8:
            raise Bad("record header cut at %d" % off)
        _, misc, size = struct.unpack_from(e + "IHH", buf, off)
        if size < BID_RECORD_MIN or size > end - off:
            raise Bad("record of size %d at %d" % (size, off))
        out.append((off, misc, size))
        off += size
    return out


def listing(buf):
    lines = []
    for off, misc, size in records(buf):
        n = buf[off + 32] if misc & MISC_BUILD_ID_SIZE else 20
        name = buf[off + 36:off + size].split(b"\0", 1)[0]
        lines.append(buf[off + 12:off + 12 + n].hex() + " " + name.decode("utf-8", "replace"))
    return lines


# ----------------------------------------------------------------- zstd

class _InBuf(ctypes.Structure):
    _fields_ = [("src", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


class _OutBuf(ctypes.Structure):
    _fields_ = [("dst", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


class Zstd:
    """libzstd through ctypes: one decompression stream, one-shot frames."""

    def __init__(self):
        name = ctypes.util.find_library("zstd")
        lib = None
        for cand in ([name] if name else []) + ["libzstd.so.1", "libzstd.so"]:
            try:
                lib = ctypes.CDLL(cand)
                break
            except OSError:
                continue
        if lib is None:
            raise Refused("compressed records (perf record -z) need libzstd, "
                          "which this python cannot load; install libzstd1")
        lib.ZSTD_createDCtx.restype = ctypes.c_void_p
        lib.ZSTD_freeDCtx.argtypes = [ctypes.c_void_p]
        lib.ZSTD_decompressStream.restype = ctypes.c_size_t
        lib.ZSTD_decompressStream.argtypes = [ctypes.c_void_p, ctypes.POINTER(_OutBuf),
                                              ctypes.POINTER(_InBuf)]
        lib.ZSTD_isError.restype = ctypes.c_uint
        lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
        lib.ZSTD_getErrorName.restype = ctypes.c_char_p
        lib.ZSTD_getErrorName.argtypes = [ctypes.c_size_t]
        lib.ZSTD_compressBound.restype = ctypes.c_size_t
        lib.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
        lib.ZSTD_compress.restype = ctypes.c_size_t
        lib.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                      ctypes.c_size_t, ctypes.c_int]
        self.lib = lib
        self.dctx = lib.ZSTD_createDCtx()
        if not self.dctx:
            raise Refused("ZSTD_createDCtx failed")

    def close(self):
        self.lib.ZSTD_freeDCtx(self.dctx)

    def _check(self, ret, what):
        if self.lib.ZSTD_isError(ret):
            raise Bad("%s: zstd: %s" % (what, self.lib.ZSTD_getErrorName(ret).decode()))
        return ret

    def feed(self, data, what):
        """Decompresses DATA, the next part of the stream; returns the bytes."""
        src = ctypes.create_string_buffer(bytes(data), len(data))
        inb = _InBuf(ctypes.cast(src, ctypes.c_void_p), len(data), 0)
        cap = 1 << 18
        dst = ctypes.create_string_buffer(cap)
        got = []
        while True:
            outb = _OutBuf(ctypes.cast(dst, ctypes.c_void_p), cap, 0)
            self._check(self.lib.ZSTD_decompressStream(self.dctx, ctypes.byref(outb),
                                                       ctypes.byref(inb)), what)
            got.append(dst.raw[:outb.pos])
            if inb.pos == inb.size and outb.pos < cap:
                return b"".join(got)

    def compress(self, data, level):
        cap = self.lib.ZSTD_compressBound(len(data))
        dst = ctypes.create_string_buffer(cap)
        src = ctypes.create_string_buffer(bytes(data), len(data))
        n = self._check(self.lib.ZSTD_compress(dst, cap, src, len(data), level), "compress")
        return dst.raw[:n]


# ------------------------------------------------------------ the swap

class Mem:
    """A source buffer in byte order E and its converted copy."""

    def __init__(self, src, e, what):
        self.src = src
        self.e = e
        self.o = ">" if e == "<" else "<"
        self.out = bytearray(src)
        self.what = what  # "" for the file, else where the bytes came from

    def where(self, off):
        return "%s%d" % (self.what, off)

    def check(self, off, n, end=None):
        lim = len(self.src) if end is None else end
        if off < 0 or n < 0 or off + n > lim:
            raise Bad("%d bytes at offset %s run past %s" % (n, self.where(off), self.where(lim)))

    def get(self, fmt, off, end=None):
        self.check(off, struct.calcsize(fmt), end)
        return struct.unpack_from(self.e + fmt, self.src, off)[0]

    def put(self, fmt, off, value):
        struct.pack_into(self.o + fmt, self.out, off, value)

    def flip(self, off, n, end=None):
        self.check(off, n, end)
        self.out[off:off + n] = self.src[off:off + n][::-1]

    def words(self, off, end, n=8):
        """Field of N bytes after field of N bytes from OFF to END."""
        while off + n <= end:
            self.out[off:off + n] = self.src[off:off + n][::-1]
            off += n
        return off

    def revbits(self, off, n, end=None):
        self.check(off, n, end)
        for i in range(off, off + n):
            self.out[i] = REVBITS[self.src[i]]


class Cur:
    """Reads fields from a Mem in order, converting each."""

    def __init__(self, m, off, end):
        m.check(off, end - off)
        self.m, self.off, self.end = m, off, end

    def left(self):
        return self.end - self.off

    def num(self, n):
        fmt = {1: "B", 2: "H", 4: "I", 8: "Q"}[n]
        v = self.m.get(fmt, self.off, self.end)
        self.m.flip(self.off, n)
        self.off += n
        return v

    def u16(self):
        return self.num(2)

    def u32(self):
        return self.num(4)

    def u64(self):
        return self.num(8)

    def skip(self, n):
        self.m.check(self.off, n, self.end)
        self.off += n

    def string(self):
        """u32 length, then that many bytes (do_read_string)."""
        self.skip(self.u32())

    def strings(self, n):
        for _ in range(n):
            self.string()

    def fields(self, sizes):
        for n in sizes:
            self.num(n)

    def rest_words(self, n=8):
        self.off = self.m.words(self.off, self.end, n)


class Attr:
    def __init__(self, sample_type=0, read_format=0, flags=0, branch_sample_type=0,
                 regs_user=0, regs_intr=0):
        self.sample_type = sample_type
        self.read_format = read_format
        self.sample_id_all = bool(flags & ATTR_FLAG_SAMPLE_ID_ALL)
        self.branch_sample_type = branch_sample_type
        self.regs_user = regs_user
        self.regs_intr = regs_intr


def swap_attr(m, off, limit):
    """Converts the perf_event_attr at OFF (at most LIMIT bytes); returns
    (Attr, its size)."""
    m.check(off, ATTR_SIZE_VER0, off + limit)
    size = m.get("I", off + 4) or ATTR_SIZE_VER0
    if size < ATTR_SIZE_VER0:
        raise Bad("perf_event_attr of size %d at offset %s" % (size, m.where(off)))
    have = min(size, limit)
    vals = {}
    for foff, n in ATTR_FIELDS:
        if foff + n <= have:
            vals[foff] = m.get({2: "H", 4: "I", 8: "Q"}[n], off + foff)
            m.flip(off + foff, n)
    raw = bytes(m.src[off + ATTR_FLAGS_OFF:off + ATTR_FLAGS_OFF + 8])
    if m.e == ">":
        raw = bytes(REVBITS[b] for b in raw)
    m.revbits(off + ATTR_FLAGS_OFF, 8)
    attr = Attr(vals.get(24, 0), vals.get(32, 0), int.from_bytes(raw, "little"),
                vals.get(72, 0), vals.get(80, 0), vals.get(96, 0))
    return attr, size


def id_pos(st):
    """Where a sample's id is, in u64 words from the start (evsel id_pos)."""
    if st & S_IDENTIFIER:
        return 0
    if not st & S_ID:
        return -1
    return bin(st & (S_IP | S_TID | S_TIME | S_ADDR)).count("1")


def is_pos(st):
    """Where a non-sample record's id is, in u64 words from the end."""
    if st & S_IDENTIFIER:
        return 1
    if not st & S_ID:
        return -1
    return 1 + bin(st & (S_CPU | S_STREAM_ID)).count("1")


def trailer_size(st):
    return 8 * bin(st & (S_TID | S_TIME | S_ID | S_STREAM_ID | S_CPU | S_IDENTIFIER)).count("1")


def branch_flags(value, from_le):
    """A branch entry's flags word from one compiler's bitfield layout to
    the other's."""
    out = 0
    for bit, width in BRANCH_FLAGS:
        mask = (1 << width) - 1
        mirror = 64 - bit - width
        if from_le:
            out |= ((value >> bit) & mask) << mirror
        else:
            out |= ((value >> mirror) & mask) << bit
    return out


class Swapper:
    def __init__(self, buf):
        if len(buf) < 16:
            raise Bad("shorter than a header")
        self.e = order_of(buf)
        self.m = Mem(buf, self.e, "")
        self.pipe = self.m.get("Q", 8) == 16
        self.attrs = []
        self.by_id = {}
        self.nr_cpus_avail = None
        self.comp_level = 1
        self.zstd = None

    # ---------------------------------------------------------- attrs

    def add_attr(self, attr, ids):
        self.attrs.append(attr)
        for i in ids:
            self.by_id.setdefault(i, attr)

    def attr_of(self, m, off, size, typ):
        """The attr perf would pick for the record (evlist__event2evsel)."""
        if not self.attrs:
            return None
        first = self.attrs[0]
        if len(self.attrs) == 1:
            return first
        if typ != R_SAMPLE and not first.sample_id_all:
            return first
        n = (size - 8) // 8
        if typ == R_SAMPLE:
            p = id_pos(first.sample_type)
            if p < 0 or p >= n:
                return first
            rid = m.get("Q", off + 8 + 8 * p)
        else:
            p = is_pos(first.sample_type)
            if p < 0 or p > n:
                return first
            rid = m.get("Q", off + 8 + 8 * (n - p))
        return self.by_id.get(rid, first) if rid else first

    # -------------------------------------------------------- records

    def sample(self, m, off, end, a):
        c = Cur(m, off + 8, end)
        st = a.sample_type
        if st & S_IDENTIFIER:
            c.u64()
        if st & S_IP:
            c.u64()
        if st & S_TID:
            c.fields((4, 4))
        for bit in (S_TIME, S_ADDR, S_ID, S_STREAM_ID):
            if st & bit:
                c.u64()
        if st & S_CPU:
            c.fields((4, 4))
        if st & S_PERIOD:
            c.u64()
        if st & S_READ:
            rf = a.read_format
            nr = c.u64()  # nr for a group, else the value
            if rf & F_TOTAL_TIME_ENABLED:
                c.u64()
            if rf & F_TOTAL_TIME_RUNNING:
                c.u64()
            per = bool(rf & F_ID) + bool(rf & F_LOST)
            if rf & F_GROUP:
                c.m.check(c.off, nr * 8 * (1 + per), end)
                for _ in range(nr * (1 + per)):
                    c.u64()
            else:
                for _ in range(per):
                    c.u64()
        if st & S_CALLCHAIN:
            nr = c.u64()
            c.m.check(c.off, 8 * nr, end)
            for _ in range(nr):
                c.u64()
        if st & S_RAW:
            c.skip(c.u32())  # tracepoint data: read with the tracing data's order
        if st & S_BRANCH_STACK:
            nr = c.u64()
            if a.branch_sample_type & B_HW_INDEX:
                c.u64()
            c.m.check(c.off, 24 * nr, end)
            for _ in range(nr):
                c.u64()
                c.u64()
                v = m.get("Q", c.off)
                m.put("Q", c.off, branch_flags(v, m.e == "<"))
                c.off += 8
            if a.branch_sample_type & B_COUNTERS:
                for _ in range(nr):
                    c.u64()
        if st & S_REGS_USER and c.u64():
            for _ in range(bin(a.regs_user).count("1")):
                c.u64()
        if st & S_STACK_USER:
            size = c.u64()
            c.m.check(c.off, size, end)
            m.words(c.off, c.off + size)
            c.off += size
            if size:
                c.u64()
        for bit in (S_WEIGHT | S_WEIGHT_STRUCT, S_DATA_SRC, S_TRANSACTION):
            if st & bit:
                c.u64()
        if st & S_REGS_INTR and c.u64():
            for _ in range(bin(a.regs_intr).count("1")):
                c.u64()
        for bit in (S_PHYS_ADDR, S_CGROUP, S_DATA_PAGE_SIZE, S_CODE_PAGE_SIZE):
            if st & bit:
                c.u64()
        if st & S_AUX:
            c.skip(c.u64())  # perf reads AUX data as the file's bytes
        c.rest_words()

    def trailer(self, m, off, end, st):
        c = Cur(m, off, end)
        if st & S_TID:
            c.fields((4, 4))
        for bit in (S_TIME, S_ID, S_STREAM_ID):
            if st & bit:
                c.u64()
        if st & S_CPU:
            c.fields((4, 4))
        if st & S_IDENTIFIER:
            c.u64()

    def kernel(self, m, off, end, typ, misc, a):
        tl = trailer_size(a.sample_type) if a and a.sample_id_all else 0
        if tl > end - off - 8:
            raise Bad("record type %d at offset %s: %d bytes, too short for its "
                      "%d-byte sample_id" % (typ, m.where(off), end - off, tl))
        bend = end - tl
        c = Cur(m, off + 8, bend)
        if typ in KERNEL_FIELDS:
            c.fields(KERNEL_FIELDS[typ])
        elif typ == R_MMAP2:
            c.fields((4, 4, 8, 8, 8))
            if misc & MISC_MMAP_BUILD_ID:
                c.skip(2)
                c.u16()
                c.skip(20)
            else:
                c.fields((4, 4, 8, 8))
            c.fields((4, 4))
        elif typ == R_NAMESPACES:
            c.fields((4, 4))
            nr = c.u64()
            c.m.check(c.off, 16 * nr, bend)
            for _ in range(2 * nr):
                c.u64()
        else:  # READ and types perf 6.1 does not know: u64 words
            if typ == R_READ:
                c.fields((4, 4))
            c.rest_words()
        if tl:
            self.trailer(m, bend, end, a.sample_type)

    def cpu_map(self, c):
        """perf_record_cpu_map_data (packed)."""
        kind = c.u16()
        if kind == 0:  # CPUS: u16 nr, u16 cpu[nr]
            for _ in range(c.u16()):
                c.u16()
        elif kind == 1:  # MASK: u16 nr, u16 long_size, masks
            nr_at = c.off
            nr = c.u16()
            long_size = c.u16()
            if long_size == 4:
                for _ in range(nr):
                    c.u32()
            elif long_size == 8:
                c.skip(4)
                for _ in range(nr):
                    c.u64()
            else:
                raise Bad("cpu map mask at offset %s: long size %d" % (c.m.where(nr_at), long_size))
        elif kind == 2:  # RANGE_CPUS: u8 any_cpu, u8 pad, u16 start, u16 end
            c.skip(2)
            c.fields((2, 2))

    def user(self, m, off, end, typ, misc):
        """Returns the length of a payload that follows the record."""
        c = Cur(m, off + 8, end)
        if typ == R_HEADER_ATTR:
            attr, size = swap_attr(m, c.off, end - c.off)
            c.skip(min(size, end - c.off))
            ids = []
            while c.left() >= 8:
                ids.append(c.u64())
            self.add_attr(attr, ids)
        elif typ == R_EVENT_TYPE:
            c.u64()
        elif typ == R_TRACING_DATA:
            return c.u32()
        elif typ == R_BUILD_ID:
            c.u32()  # pid
        elif typ in (R_FINISHED_ROUND, R_FINISHED_INIT):
            pass
        elif typ == R_AUXTRACE_INFO:
            c.fields((4, 4))
            c.rest_words()
        elif typ == R_AUXTRACE:
            size = c.u64()
            c.fields((8, 8, 4, 4, 4, 4))
            return size
        elif typ == R_AUXTRACE_ERROR:
            for n in (4, 4, 4, 4, 4, 4, 8, 8):
                if c.left() >= n:
                    c.num(n)
            if c.left() >= 64 + 8:
                c.skip(64)
                c.fields((4, 4))
        elif typ == R_THREAD_MAP:
            nr = c.u64()
            for _ in range(nr):
                c.u64()
                c.skip(16)
        elif typ == R_CPU_MAP:
            self.cpu_map(c)
        elif typ == R_STAT:
            c.fields((8, 4, 4, 8, 8, 8))
        elif typ == R_EVENT_UPDATE:
            kind = c.u64()
            c.u64()
            if kind == 1:  # SCALE: double
                c.u64()
            elif kind == 3:  # CPUS
                self.cpu_map(c)
        elif typ == R_TIME_CONV:
            # time_shift, time_mult, time_zero, time_cycles, time_mask, then bytes
            for _ in range(5):
                if c.left() >= 8:
                    c.u64()
        elif typ == R_HEADER_FEATURE:
            feat = c.u64()
            self.feature(feat, c)
        else:  # ID_INDEX, STAT_CONFIG, STAT_ROUND and types after 6.1
            c.rest_words()
        return 0

    def walk(self, m, off, end, out):
        """Converts the records from OFF to END in M; appends to OUT one
        (offset, length, compressed payload or None) per piece of output."""
        while off < end:
            if end - off < 8:
                raise Bad("record header cut at offset %s" % m.where(off))
            typ, misc, size = m.get("I", off), m.get("H", off + 4), m.get("H", off + 6)
            if size < 8 or size > end - off:
                raise Bad("record of type %d and size %d at offset %s (section ends at %s)"
                          % (typ, size, m.where(off), m.where(end)))
            m.flip(off, 4)
            m.flip(off + 4, 2)
            m.flip(off + 6, 2)
            rend = off + size
            extra = 0
            if typ in (R_COMPRESSED, R_COMPRESSED2):
                if typ == R_COMPRESSED2:
                    dsize = m.get("Q", off + 8, rend)
                    m.check(off + 16, dsize, rend)
                    payload = m.src[off + 16:off + 16 + dsize]
                else:
                    payload = m.src[off + 8:rend]
                out.append((off, size, (typ, payload)))
                off = rend
                continue
            if typ == R_SAMPLE:
                a = self.attr_of(m, off, size, typ)
                if a is None:
                    raise Bad("sample at offset %s before any attr" % m.where(off))
                self.sample(m, off, rend, a)
            elif typ < R_USER_START:
                self.kernel(m, off, rend, typ, misc, self.attr_of(m, off, size, typ))
            else:
                extra = self.user(m, off, rend, typ, misc)
                m.check(rend, extra, end)
            out.append((off, size + extra, None))
            off = rend + extra

    def compressed(self, pieces, rec_order):
        """Decompresses the compressed records of PIECES as one stream,
        converts the records in it and compresses them again; returns a
        list of new record bytes per compressed piece."""
        if self.zstd is None:
            self.zstd = Zstd()
        parts = []
        for off, _, (typ, payload) in pieces:
            parts.append(self.zstd.feed(payload, "compressed record at offset %d" % off))
        stream = b"".join(parts)
        sm = Mem(stream, self.e, "decompressed ")
        inner = []
        self.walk(sm, 0, len(stream), inner)
        for _, _, comp in inner:
            if comp:
                raise Bad("a compressed record inside a compressed record")
        result = []
        at = 0
        for (_, _, (typ, _)), part in zip(pieces, parts):
            chunk = bytes(sm.out[at:at + len(part)])
            at += len(part)
            result.append(b"".join(self.pack(typ, chunk, rec_order)))
        return result

    def pack(self, typ, chunk, o):
        """COMPRESSED records holding CHUNK, in byte order O, each within
        the u16 record size (halving the chunk until it fits)."""
        if not chunk:
            return []
        frame = self.zstd.compress(chunk, self.comp_level)
        if typ == R_COMPRESSED2:
            size = 16 + len(frame)
            pad = -size % 8
            if size + pad <= MAX_RECORD:
                return [struct.pack(o + "IHHQ", typ, 0, size + pad, len(frame)) + frame +
                        bytes(pad)]
        elif 8 + len(frame) <= MAX_RECORD:
            return [struct.pack(o + "IHH", typ, 0, 8 + len(frame)) + frame]
        if len(chunk) < 2:
            raise Bad("cannot fit %d compressed bytes in a record" % len(frame))
        half = len(chunk) // 2
        return self.pack(typ, chunk[:half], o) + self.pack(typ, chunk[half:], o)

    # -------------------------------------------------------- features

    def feature(self, feat, c):
        """Converts the feature FEAT from the cursor C to its end."""
        if c.left() == 0:
            return
        if feat in (FEAT_HOSTNAME, FEAT_OSRELEASE, FEAT_VERSION, FEAT_ARCH,
                    FEAT_CPUDESC, FEAT_CPUID):
            c.string()
        elif feat == FEAT_NRCPUS:
            self.nr_cpus_avail = c.u32()
            c.u32()
        elif feat in (FEAT_TOTAL_MEM, FEAT_SAMPLE_TIME, FEAT_MEM_TOPOLOGY,
                      FEAT_CLOCKID, FEAT_DIR_FORMAT, FEAT_AUXTRACE):
            c.rest_words()
        elif feat == FEAT_CMDLINE:
            c.strings(c.u32())
        elif feat == FEAT_EVENT_DESC:
            nre = c.u32()
            sz = c.u32()
            for _ in range(nre):
                swap_attr(c.m, c.off, min(sz, c.left()))
                c.skip(sz)
                nri = c.u32()
                c.string()
                for _ in range(nri):
                    c.u64()
        elif feat == FEAT_CPU_TOPOLOGY:
            c.strings(c.u32())  # sibling cores
            c.strings(c.u32())  # sibling threads
            if c.left():
                if self.nr_cpus_avail is None:
                    raise Bad("CPU_TOPOLOGY before NRCPUS")
                for _ in range(2 * self.nr_cpus_avail):
                    c.u32()  # core_id, socket_id
            if c.left():
                c.strings(c.u32())  # sibling dies
                c.rest_words(4)  # die_id per cpu
        elif feat == FEAT_NUMA_TOPOLOGY:
            for _ in range(c.u32()):
                c.fields((4, 8, 8))
                c.string()
        elif feat == FEAT_PMU_MAPPINGS:
            for _ in range(c.u32()):
                c.u32()
                c.string()
        elif feat == FEAT_GROUP_DESC:
            for _ in range(c.u32()):
                c.string()
                c.fields((4, 4))
        elif feat == FEAT_CACHE:
            c.u32()  # version
            for _ in range(c.u32()):
                c.fields((4, 4, 4, 4))
                c.strings(3)
        elif feat == FEAT_BPF_PROG_INFO:
            for _ in range(c.u32()):
                info_len = c.u32()
                data_len = c.u32()
                c.u64()  # arrays
                m, base = c.m, c.off
                c.skip(info_len)
                for foff, n in BPF_PROG_INFO_FIELDS:
                    if foff + n <= info_len:
                        m.flip(base + foff, n)
                if info_len >= 88:
                    m.revbits(base + 84, 4)
                c.skip(data_len)  # the arrays: left as they are
        elif feat == FEAT_BPF_BTF:
            for _ in range(c.u32()):
                c.u32()  # id
                c.skip(c.u32())  # BTF: carries its own byte order
        elif feat == FEAT_COMPRESSED:
            c.fields((4, 4))
            self.comp_level = c.u32()
            c.fields((4, 4))
        elif feat == FEAT_CPU_PMU_CAPS:
            c.strings(2 * c.u32())
        elif feat == FEAT_CLOCK_DATA:
            c.fields((4, 4, 8, 8))
        elif feat == FEAT_HYBRID_TOPOLOGY:
            c.strings(2 * c.u32())
        elif feat == FEAT_PMU_CAPS:
            for _ in range(c.u32()):
                c.strings(2 * c.u32())
                c.string()
        elif feat == FEAT_CPU_DOMAIN_INFO:
            version = c.u32()
            c.u32()
            while c.left():
                c.u32()  # cpu
                for _ in range(c.u32()):
                    c.u32()
                    c.strings(3 if version >= 17 else 2)
        elif feat == FEAT_BUILD_ID:
            while c.left():
                at = c.off
                c.fields((4, 2))
                size = c.m.get("H", c.off)
                c.u16()
                if size < BID_RECORD_MIN or size > c.end - at:
                    raise Bad("build-ID record of size %d at offset %s" % (size, c.m.where(at)))
                c.u32()  # pid
                c.off = at + size
        elif feat in (FEAT_TRACING_DATA, FEAT_BRANCH_STACK, FEAT_STAT):
            return  # no numbers perf reads (tracing data carries its own order)
        else:
            sys.stderr.write("perfswap: feature %d left as it is (unknown)\n" % feat)

    # ------------------------------------------------------------ file

    def assemble(self, pieces, end):
        """The converted records of PIECES; the compressed ones rebuilt.
        Returns (bytes, old offset -> new offset)."""
        comp = [p for p in pieces if p[2]]
        rebuilt = iter(self.compressed(comp, self.m.o) if comp else [])
        chunks, moved, at = [], {}, pieces[0][0] if pieces else end
        for off, length, c in pieces:
            moved[off] = at
            data = next(rebuilt) if c else bytes(self.m.out[off:off + length])
            chunks.append(data)
            at += len(data)
        return b"".join(chunks), moved

    def run_pipe(self):
        m = self.m
        m.flip(0, 8)
        m.flip(8, 8)
        pieces = []
        self.walk(m, 16, len(m.src), pieces)
        data, _ = self.assemble(pieces, len(m.src))
        return bytes(m.out[:16]) + data

    def run_file(self):
        m = self.m
        e, h, table, bits = layout(m.src)
        data_off, data_size = h[5], h[6]
        if data_off + data_size > len(m.src) or table + 16 * len(bits) > len(m.src):
            raise Bad("data section or feature table beyond the file (%d bytes)" % len(m.src))
        m.words(0, HEADER_SIZE)
        # attrs, each followed by the {offset, size} of its ids
        attr_size, attrs_off, attrs_size = h[2], h[3], h[4]
        if not attr_size:
            raise Bad("attr_size 0 in the header")
        off = attrs_off
        for _ in range(attrs_size // attr_size):
            attr, size = swap_attr(m, off, len(m.src) - off)
            off += size
            ids_off, ids_size = m.get("Q", off), m.get("Q", off + 8)
            m.flip(off, 8)
            m.flip(off + 8, 8)
            off += 16
            m.check(ids_off, ids_size)
            ids = [m.get("Q", ids_off + 8 * i) for i in range(ids_size // 8)]
            m.words(ids_off, ids_off + ids_size)
            self.add_attr(attr, ids)
        # features first: COMPRESSED names the level to compress with
        secs = [struct.unpack_from(e + "QQ", m.src, table + 16 * i) for i in range(len(bits))]
        for feat, (soff, ssize) in zip(bits, secs):
            self.feature(feat, Cur(m, soff, soff + ssize))
        pieces = []
        self.walk(m, data_off, data_off + data_size, pieces)
        data, moved = self.assemble(pieces, data_off + data_size)
        delta = len(data) - data_size
        if delta and FEAT_AUXTRACE in bits:
            soff, ssize = secs[bits.index(FEAT_AUXTRACE)]
            c = Cur(m, soff, soff + ssize)
            nr = m.get("Q", soff)
            c.off += 8
            for _ in range(nr):
                old = m.get("Q", c.off, c.end)
                if old not in moved:
                    raise Bad("AUXTRACE index names offset %d, not a record" % old)
                m.put("Q", c.off, moved[old])
                c.off += 16

        def moved_after(x):
            return x + delta if x >= data_off + data_size else x

        m.put("Q", 48, len(data))
        for i, (soff, ssize) in enumerate(secs):
            struct.pack_into(m.o + "QQ", m.out, table + 16 * i, moved_after(soff), ssize)
        if attrs_off >= data_off + data_size:
            m.put("Q", 24, moved_after(attrs_off))
        return bytes(m.out[:data_off]) + data + bytes(m.out[data_off + data_size:])


def swap(buf):
    s = Swapper(buf)
    try:
        return s.run_pipe() if s.pipe else s.run_file()
    finally:
        if s.zstd:
            s.zstd.close()


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "--layout":
            buf = open(argv[2], "rb").read()
            _, _, table, bits = layout(buf)
            sec = build_id_section(buf) or (-1, -1)
            print(table, len(bits), sec[0], sec[1])
        elif len(argv) == 3 and argv[1] == "--list":
            for line in listing(open(argv[2], "rb").read()):
                print(line)
        elif len(argv) == 3 and not argv[1].startswith("--"):
            data = swap(open(argv[1], "rb").read())
            with open(argv[2], "wb") as f:
                f.write(data)
        else:
            sys.stderr.write(__doc__)
            return 2
    except Refused as exc:
        sys.stderr.write("perfswap: %s: %s\n" % (argv[1], exc))
        return 3
    except (Bad, OSError, struct.error) as exc:
        sys.stderr.write("perfswap: %s\n" % exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
