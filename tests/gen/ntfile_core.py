#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A made-up x86_64 core whose NT_FILE names many files, and the modules a
reader must find in it, from first principles.

    tests/gen/ntfile_core.py ENTRIES CORE EXPECTED

ENTRIES NT_FILE entries: files f = 0 .. ENTRIES/2 - 1, each mapped twice
in a row, as the kernel lists a library's segments: [s, s+H) at page
offset 0 and [s+H, s+2H) at page offset 1, s = BASE + f*2H.  Each mapping
has its own PT_LOAD, as the kernel writes one per mapping; the first
holds a small ELF image (header, a PT_LOAD at vaddr 0, a PT_NOTE with the
build ID 00 00 f>>8 f ... repeated to 20 bytes).  All names are distinct
and of one length (what makes a name-by-name search per entry cost the
most).  One thread (NT_PRSTATUS), no AUXV (no vDSO).

EXPECTED gets the modules as `dsostore stack --list-modules` lays them
out, nothing found for them (START+SIZE BUILDID@ADDR - - PATH): each file
one module from s to s+2H (its later mapping extends it), bias s, the
build ID's address in the image.
"""
import struct
import sys

BASE = 0x10000000
H = 256  # bytes of one mapping (the reader needs no page alignment)
PAGE = 4096


def note(name, typ, desc):
    n = name + b"\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)
    return struct.pack("<III", len(n), len(desc), typ) + pad(n) + pad(desc)


def build_id(f):
    return (struct.pack(">I", f) * 5)[:20]


def image(f):
    """The ELF image at s: header, 2 program headers, the build-ID note."""
    bnote = note(b"GNU", 3, build_id(f))
    eh = struct.pack("<16sHHIQQQIHHHHHH",
                     b"\x7fELF\x02\x01\x01" + b"\0" * 9, 3, 62, 1, 0, 64, 0, 0,
                     64, 56, 2, 64, 0, 0)
    noff = 64 + 2 * 56
    ph = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, 2 * H, 2 * H, PAGE)
    ph += struct.pack("<IIQQQQQQ", 4, 4, noff, noff, noff, len(bnote), len(bnote), 4)
    img = eh + ph + bnote
    assert len(img) <= H
    # the build ID's bytes: after the note header (12) and "GNU\0" (4)
    return img + b"\0" * (H - len(img)), noff + 16


def main():
    entries, core_path, expected_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    nfiles = entries // 2
    name = lambda f: b"/nonexistent/ntfile/lib%07d.so" % f

    prs = bytearray(336)  # x86_64 elf_prstatus
    struct.pack_into("<iii", prs, 0, 11, 0, 0)
    struct.pack_into("<h", prs, 12, 11)
    struct.pack_into("<i", prs, 32, 4242)  # pr_pid after 3 ints, short, 2 longs
    files = struct.pack("<QQ", 2 * nfiles, PAGE)
    names = []
    for f in range(nfiles):
        s = BASE + f * 2 * H
        files += struct.pack("<QQQ", s, s + H, 0)
        files += struct.pack("<QQQ", s + H, s + 2 * H, 1)
        names += [name(f) + b"\0"] * 2
    notes = note(b"CORE", 1, bytes(prs)) + note(b"CORE", 0x46494C45, files + b"".join(names))

    nph = 1 + 2 * nfiles
    phoff = 64
    noff = phoff + nph * 56
    loff = noff + len(notes)
    eh = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + b"\0" * 9, 4, 62, 1,
                     0, phoff, 0, 0, 64, 56, nph, 64, 0, 0)
    ph = [struct.pack("<IIQQQQQQ", 4, 0, noff, 0, 0, len(notes), 0, 4)]
    mem = []
    with open(expected_path, "w") as exp:
        for f in range(nfiles):
            s = BASE + f * 2 * H
            img, bid_off = image(f)
            ph.append(struct.pack("<IIQQQQQQ", 1, 5, loff + f * 2 * H, s, 0, H, H, PAGE))
            ph.append(struct.pack("<IIQQQQQQ", 1, 6, loff + f * 2 * H + H, s + H, 0, H, H,
                                  PAGE))
            mem += [img, b"\0" * H]
            exp.write("0x%x+0x%x %s@0x%x - - %s\n" % (s, 2 * H, build_id(f).hex(),
                                                     s + bid_off, name(f).decode()))
    with open(core_path, "wb") as out:
        out.write(eh)
        out.write(b"".join(ph))
        out.write(notes)
        out.write(b"".join(mem))


if __name__ == "__main__":
    main()
