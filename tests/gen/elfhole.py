#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile but structurally valid copies of an ELF file, for the tests.

  elfhole.py hole  IN OUT SECTION SIZE   SECTION becomes SIZE zero bytes,
                                         a hole in a sparse OUT
  elfhole.py zlib  IN OUT SECTION SIZE   SECTION becomes SHF_COMPRESSED,
                                         ELFCOMPRESS_ZLIB: a real zlib
                                         stream of SIZE zero bytes (about
                                         SIZE/1000 on disk), ch_size SIZE
  elfhole.py zstd  IN OUT SECTION SIZE   the same with ELFCOMPRESS_ZSTD: a
                                         zstd frame of RLE blocks (4 bytes
                                         per 128 KiB), ch_size SIZE

Only ELF64 little-endian input (what gcc makes here); anything else exits
2.  The section's new bytes go at the end of the file, at a page-aligned
offset, and the section header table after them (e_shoff moves): every
section stays inside the file and `readelf -S` reads it.  The old bytes
of the section stay where they were, unreferenced.  Zeros are never
written: the hole is made by seeking past it.

Written from the gABI (section header, Elf64_Chdr), RFC 1950/1951 (zlib,
deflate) and RFC 8878 (zstd frame, RLE block); stdlib only.
"""
import struct
import sys
import zlib

SHF_COMPRESSED = 0x800
ELFCOMPRESS_ZLIB, ELFCOMPRESS_ZSTD = 1, 2
SHDR = struct.Struct('<IIQQQQIIQQ')  # Elf64_Shdr
CHDR = struct.Struct('<IIQQ')  # Elf64_Chdr
PAGE = 4096


def align(n, a):
    return (n + a - 1) // a * a


def zlib_zeros(size):
    """A zlib stream of size zero bytes, built from one 1 MiB deflate chunk
    repeated: a full flush resets the dictionary, so every chunk compresses
    to the same bytes and compressing 4 GiB takes no time."""
    chunk = 1 << 20
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = co.compress(bytes(chunk)) + co.flush(zlib.Z_FULL_FLUSH)
    whole, rest = divmod(size, chunk)
    tail = co.compress(bytes(rest)) + co.flush(zlib.Z_FINISH)
    # Adler-32 of n zeros: A stays 1, B adds A once per byte (RFC 1950).
    adler = ((size % 65521) << 16) | 1
    return b'\x78\xda' + block * whole + tail + struct.pack('>I', adler)


def zstd_zeros(size):
    """One zstd frame of size zero bytes: RLE blocks of the largest block
    size (128 KiB), 4 bytes each; the content size in the header."""
    bmax = 128 << 10
    # Frame header descriptor: FCS field 8 bytes (3 << 6), single segment
    # (1 << 5), no checksum, no dictionary.
    out = [struct.pack('<IBQ', 0xFD2FB528, (3 << 6) | (1 << 5), size)]
    left = size
    while left:
        n = min(left, bmax)
        left -= n
        hdr = (1 if not left else 0) | (1 << 1) | (n << 3)  # last, RLE, size
        out.append(struct.pack('<I', hdr)[:3] + b'\0')
    if not size:
        out.append(struct.pack('<I', 1 | (1 << 1))[:3] + b'\0')  # empty last block
    return b''.join(out)


def main(argv):
    if len(argv) != 6 or argv[1] not in ('hole', 'zlib', 'zstd'):
        sys.stderr.write(__doc__)
        return 2
    mode, src, dst, name, size = argv[1], argv[2], argv[3], argv[4].encode(), int(argv[5], 0)
    data = bytearray(open(src, 'rb').read())
    if data[:4] != b'\x7fELF' or data[4] != 2 or data[5] != 1:
        sys.stderr.write('elfhole.py: %s is not ELF64 little-endian\n' % src)
        return 2
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
    if shentsize != SHDR.size or not shnum or shstrndx >= shnum:
        sys.stderr.write('elfhole.py: %s: unexpected section header table\n' % src)
        return 2
    shdrs = [list(SHDR.unpack_from(data, shoff + i * shentsize)) for i in range(shnum)]
    strtab = shdrs[shstrndx][4]
    index = None
    for i, sh in enumerate(shdrs):
        end = data.index(b'\0', strtab + sh[0])
        if bytes(data[strtab + sh[0]:end]) == name:
            index = i
    if index is None:
        sys.stderr.write('elfhole.py: %s has no %s\n' % (src, name.decode()))
        return 2
    sh = shdrs[index]
    if sh[2] & SHF_COMPRESSED:
        sys.stderr.write('elfhole.py: %s is compressed already\n' % name.decode())
        return 2

    offset = align(len(data), PAGE)
    if mode == 'hole':
        body = b''
        length = size
    else:
        stream = zlib_zeros(size) if mode == 'zlib' else zstd_zeros(size)
        kind = ELFCOMPRESS_ZLIB if mode == 'zlib' else ELFCOMPRESS_ZSTD
        body = CHDR.pack(kind, 0, size, 1) + stream
        length = len(body)
        sh[2] |= SHF_COMPRESSED
        sh[8] = 8  # sh_addralign: the Chdr's
    sh[4], sh[5] = offset, length
    new_shoff = align(offset + length, 8)
    struct.pack_into('<Q', data, 0x28, new_shoff)

    with open(dst, 'wb') as f:
        f.write(data)
        f.seek(offset)
        f.write(body)
        f.seek(new_shoff)  # past the hole: nothing written there
        for s in shdrs:
            f.write(SHDR.pack(*s))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
