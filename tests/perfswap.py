#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Byte-order tools for file-mode perf.data ("PERFILE2"), written from
tools/perf/Documentation/perf.data-file-format.txt, for the tests.

  perfswap.py IN OUT        IN converted to the other byte order, as far as
                            the header, the feature-section table and the
                            HEADER_BUILD_ID section go
  perfswap.py --layout IN   "table_off nfeatures build_off build_size"
                            (build_* are -1 when there is no build-ID table)
  perfswap.py --list IN     "<hex> <path>" per build-ID record, file order

Converted: the 13 u64 header fields (magic, size, attr_size, attrs, data,
event_types {offset, size}, the four feature bitmap words), every
{u64 offset, u64 size} entry of the feature table, and in each build-ID
record its u32 type, u16 misc, u16 size and s32 pid.  Build-ID bytes and
file names are bytes, not swapped.  The attrs, the data section and the
other feature sections are left as they are: a reader that looks at more
than the build-ID table must not be tested with this file.
"""
import struct
import sys

MAGIC = b"PERFILE2"  # the u64 0x32454c4946524550 stored little-endian
HEADER_SIZE = 104
FEAT_BUILD_ID = 2
BID_RECORD_MIN = 36
MISC_BUILD_ID_SIZE = 1 << 15


class Bad(Exception):
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


def swap(buf):
    e, h, table, bits = layout(buf)
    o = ">" if e == "<" else "<"
    out = bytearray(buf)
    if table + 16 * len(bits) > len(buf):
        raise Bad("feature table beyond the file")
    recs = records(buf)
    struct.pack_into(o + "13Q", out, 0, *h)
    for i in range(len(bits)):
        at = table + 16 * i
        struct.pack_into(o + "QQ", out, at, *struct.unpack_from(e + "QQ", buf, at))
    for off, _, _ in recs:
        struct.pack_into(o + "IHHi", out, off, *struct.unpack_from(e + "IHHi", buf, off))
    return bytes(out)


def listing(buf):
    lines = []
    for off, misc, size in records(buf):
        n = buf[off + 32] if misc & MISC_BUILD_ID_SIZE else 20
        name = buf[off + 36:off + size].split(b"\0", 1)[0]
        lines.append(buf[off + 12:off + 12 + n].hex() + " " + name.decode("utf-8", "replace"))
    return lines


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
        elif len(argv) == 3:
            data = swap(open(argv[1], "rb").read())
            with open(argv[2], "wb") as f:
                f.write(data)
        else:
            sys.stderr.write(__doc__)
            return 2
    except (Bad, OSError, struct.error) as exc:
        sys.stderr.write("perfswap: %s\n" % exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
