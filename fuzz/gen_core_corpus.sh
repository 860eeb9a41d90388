#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generates the seed corpus of the core-file fuzz target (fuzz_core.c) into
# OUTDIR (emptied first).  A core holds this machine's paths and memory, so
# nothing is committed; seeds are made on each run.
#
#   fuzz/gen_core_corpus.sh OUTDIR
#
# Seeds: small hand-built cores (python: both classes and byte orders, a
# thread, a signal, NT_FILE naming a mapping whose first page in memory is
# an ELF header with a build-ID note, an AUXV with a vDSO); a real core of a
# crashing program when this machine writes one (core_pattern a plain
# file name), cut down to its headers and notes and the first memory page,
# and copies cut at the notes.
set -euo pipefail

out=${1:?usage: gen_core_corpus.sh OUTDIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dscorecorpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out"
mkdir -p "$out"

python3 - "$out" <<'PY'
import struct, sys
out = sys.argv[1]

def note(name, typ, desc, e):
    n = name + b"\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)
    return struct.pack(e + "III", len(n), len(desc), typ) + pad(n) + pad(desc)

def core(is64, e, nfiles=1):
    L = "Q" if is64 else "I"
    ls = 8 if is64 else 4
    base = 0x400000
    # the module's ELF image in memory: header, one PT_LOAD, one PT_NOTE
    bid = bytes(range(0x11, 0x11 + 20))
    bnote = note(b"GNU", 3, bid, e)
    if is64:
        eh = struct.pack(e + "16sHHIQQQIHHHHHH", b"\x7fELF\x02" + (b"\x01" if e == "<" else b"\x02") + b"\x01" + b"\0" * 9,
                         3, 62, 1, 0, 64, 0, 0, 64, 56, 2, 64, 0, 0)
        ph = struct.pack(e + "IIQQQQQQ", 1, 5, 0, 0, 0, 0x1000, 0x1000, 0x1000)
        ph += struct.pack(e + "IIQQQQQQ", 4, 4, 0x100, 0x100, 0x100, len(bnote), len(bnote), 4)
    else:
        eh = struct.pack(e + "16sHHIIIIIHHHHHH", b"\x7fELF\x01" + (b"\x01" if e == "<" else b"\x02") + b"\x01" + b"\0" * 9,
                         3, 3, 1, 0, 52, 0, 0, 52, 32, 2, 40, 0, 0)
        ph = struct.pack(e + "IIIIIIII", 1, 0, 0, 0, 0x1000, 0x1000, 5, 0x1000)
        ph += struct.pack(e + "IIIIIIII", 4, 0x100, 0x100, 0x100, len(bnote), len(bnote), 4, 4)
    page = bytearray(4096)
    page[0:len(eh)] = eh
    page[len(eh):len(eh) + len(ph)] = ph
    page[0x100:0x100 + len(bnote)] = bnote
    # notes
    prs = bytearray(16 + 2 * ls + 16 + 200)
    struct.pack_into(e + "iii", prs, 0, 11, 0, 0)
    struct.pack_into(e + "h", prs, 12, 11)
    struct.pack_into(e + "i", prs, 16 + 2 * ls, 4242)
    sig = bytearray(128)
    struct.pack_into(e + "iii", sig, 0, 11, 0, 1)
    files = struct.pack(e + L + L, nfiles, 4096)
    names = b""
    for i in range(nfiles):
        files += struct.pack(e + L * 3, base + i * 0x10000, base + i * 0x10000 + 0x1000, 0)
        names += b"/usr/lib/libfuzz%d.so\0" % i
    auxv = struct.pack(e + L * 4, 33, base, 0, 0)
    notes = note(b"CORE", 1, bytes(prs), e) + note(b"CORE", 0x53494749, bytes(sig), e) + \
        note(b"CORE", 6, auxv, e) + note(b"CORE", 0x46494c45, files + names, e)
    if is64:
        ehdr_len, phl = 64, 56
    else:
        ehdr_len, phl = 52, 32
    phoff = ehdr_len
    noff = phoff + 2 * phl
    loff = (noff + len(notes) + 4095) & ~4095
    if is64:
        ceh = struct.pack(e + "16sHHIQQQIHHHHHH", eh[:16], 4, 62, 1, 0, phoff, 0, 0, 64, 56, 2, 64, 0, 0)
        cph = struct.pack(e + "IIQQQQQQ", 4, 0, noff, 0, 0, len(notes), 0, 4)
        cph += struct.pack(e + "IIQQQQQQ", 1, 5, loff, base, 0, 4096, 4096, 4096)
    else:
        ceh = struct.pack(e + "16sHHIIIIIHHHHHH", eh[:16], 4, 3, 1, 0, phoff, 0, 0, 52, 32, 2, 40, 0, 0)
        cph = struct.pack(e + "IIIIIIII", 4, noff, 0, 0, len(notes), 0, 0, 4)
        cph += struct.pack(e + "IIIIIIII", 1, loff, base, 0, 4096, 4096, 5, 4096)
    f = bytearray(loff + 4096)
    f[0:len(ceh)] = ceh
    f[phoff:phoff + len(cph)] = cph
    f[noff:noff + len(notes)] = notes
    f[loff:loff + 4096] = page
    return bytes(f), noff, len(notes)

for is64 in (True, False):
    for e in ("<", ">"):
        for nf in (1, 3):
            b, noff, nlen = core(is64, e, nf)
            tag = "%d%s%d" % (64 if is64 else 32, "le" if e == "<" else "be", nf)
            open("%s/hand-%s" % (out, tag), "wb").write(b)
            open("%s/cut-notes-%s" % (out, tag), "wb").write(b[:noff + nlen // 2])
            open("%s/cut-mem-%s" % (out, tag), "wb").write(b[:len(b) - 4000])

# PT_LOADs out of address order and overlapping: a 16-byte sliver of the
# page's own bytes at base+0x40 (where its program headers start), listed
# before the page.  Reading the headers takes the sliver, then must step
# back past it to the page (the reader sorts the segments by address and
# bisects); the module is found as in hand-64le1.
b, noff, nlen = core(True, "<", 1)
phoff = 64
note_ph, load_ph = b[phoff:phoff + 56], b[phoff + 56:phoff + 112]
notes = b[noff:noff + nlen]
noff3 = phoff + 3 * 56
loff = (noff3 + nlen + 4095) & ~4095
f = bytearray(loff + 4096)
f[0:64] = b[0:64]
struct.pack_into("<H", f, 56, 3)
f[phoff:phoff + 56] = note_ph
struct.pack_into("<Q", f, phoff + 8, noff3)
f[phoff + 56:phoff + 112] = struct.pack("<IIQQQQQQ", 1, 5, loff + 0x40, 0x400000 + 0x40, 0,
                                        16, 16, 16)
f[phoff + 112:phoff + 168] = load_ph
struct.pack_into("<Q", f, phoff + 112 + 8, loff)
f[noff3:noff3 + nlen] = notes
f[loff:loff + 4096] = b[len(b) - 4096:]
open("%s/hand-overlap" % out, "wb").write(bytes(f))
PY

# A real core, when the kernel writes one into the current directory.
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo '|')
if [ "${pattern:0:1}" != "|" ] && [ "${pattern#*/}" = "$pattern" ] && command -v gcc >/dev/null &&
	(ulimit -c unlimited) 2>/dev/null; then
	cat >"$tmp/crash.c" <<'C'
int *volatile p;
int main(void) { return *p; }
C
	gcc -O1 -o "$tmp/crash" "$tmp/crash.c"
	(cd "$tmp" && ulimit -c unlimited && exec ./crash) 2>/dev/null || true
	real=$(ls "$tmp"/core* 2>/dev/null | head -1 || true)
	if [ -n "$real" ]; then
		# The headers, the notes and the first page of memory: the
		# reader's whole input; the rest is page data the fuzzer would
		# only flip bits in.
		end=$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
phoff, = struct.unpack_from("<Q", b, 32); n, = struct.unpack_from("<H", b, 56)
m = 0
for i in range(n):
    t, fl, off, va, pa, fs, ms, al = struct.unpack_from("<IIQQQQQQ", b, phoff + 56 * i)
    if t == 4: m = max(m, off + fs)
print(m + 3 * 4096)' "$real")
		head -c "$end" "$real" >"$out/real"
		head -c $((end / 2)) "$real" >"$out/real-cut"
	fi
fi
ls "$out" | wc -l >/dev/null
