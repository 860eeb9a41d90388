#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generates the seed corpus of the .dwp index fuzz target (fuzz_dwp.c)
# into OUTDIR (emptied first).
#
#   fuzz/gen_dwp_corpus.sh OUTDIR
#
# Seeds: the .debug_cu_index (and .debug_tu_index) of real packages, made
# here (nothing is committed) with binutils' dwp (gcc, DWARF 4: index
# version 2) and llvm-dwp-14 (clang, DWARF 4 and 5, with type units), each
# behind the harness's header (flags, the package's section sizes), also
# as big-endian and with every section as "not read"; and hand-made
# indexes: empty, header only, both versions, slots not a power of two,
# rows and columns out of range, contributions past the sections.
set -euo pipefail

out=${1:?usage: gen_dwp_corpus.sh OUTDIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsdwpcorpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

rm -rf "$out"
mkdir -p "$out"

cat >"$tmp/a.c" <<'EOF'
struct pt { int x, y; };
static inline __attribute__((always_inline)) int f(struct pt p) { return p.x * p.y; }
int a(int x) { struct pt p = { x, x + 1 }; return f(p); }
EOF
cat >"$tmp/b.c" <<'EOF'
int a(int);
struct q { long v; };
int main(int argc, char **argv) { struct q q = { argc }; (void)argv; return a((int)q.v); }
EOF

pack() { # NAME CC FLAGS... : a program and its package in $tmp/NAME
	local name=$1 cc=$2
	shift 2
	mkdir -p "$tmp/$name"
	(cd "$tmp/$name" && $cc "$@" -gsplit-dwarf -c ../a.c ../b.c &&
		$cc -o prog a.o b.o &&
		case $cc in
		gcc) dwp -o prog.dwp a.dwo b.dwo ;;
		*) llvm-dwp-14 -o prog.dwp a.dwo b.dwo ;;
		esac) >/dev/null 2>&1
}
command -v gcc >/dev/null && command -v dwp >/dev/null && pack g4 gcc -O2 -gdwarf-4 || true
if command -v clang >/dev/null && command -v llvm-dwp-14 >/dev/null; then
	pack c4 clang -O2 -gdwarf-4 || true
	pack c5 clang -O2 -gdwarf-5 || true
	pack c4t clang++ -x c++ -O2 -gdwarf-4 -fdebug-types-section || true
	pack c5t clang++ -x c++ -O2 -gdwarf-5 -fdebug-types-section || true
fi

python3 - "$tmp" "$out" <<'EOF'
import os, struct, subprocess, sys

tmp, out = sys.argv[1:3]
NAMES = {1: ".debug_info.dwo", 2: ".debug_types.dwo", 3: ".debug_abbrev.dwo",
         4: ".debug_line.dwo", 5: (".debug_loc.dwo", ".debug_loclists.dwo"),
         6: ".debug_str_offsets.dwo", 7: ".debug_macro.dwo", 8: ".debug_rnglists.dwo",
         9: ".debug_macinfo.dwo"}


def seed(name, index, sizes, be=False):
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([1 if be else 0]))
        f.write(b"".join(struct.pack("<I", min(s, 0xffffffff)) for s in sizes))
        f.write(index)


def section_sizes(path):
    got = {}
    text = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    for line in text.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 6 and f[1].startswith(".debug"):
            got[f[1]] = int(f[5], 16)
    return got


def dump(path, sec):
    dst = os.path.join(tmp, "sec")
    subprocess.run(["objcopy", "-O", "binary", "--only-section=" + sec, path, dst],
                   check=True, capture_output=True)
    with open(dst, "rb") as f:
        return f.read()


def swap(index, v5):
    """The index as a big-endian file would have it."""
    b = bytearray(index)
    if len(b) < 16:
        return bytes(b)
    nslots = struct.unpack_from("<I", b, 12)[0]
    ncols = struct.unpack_from("<I", b, 4)[0]
    nunits = struct.unpack_from("<I", b, 8)[0]
    if v5:
        struct.pack_into(">HH", b, 0, *struct.unpack_from("<HH", b, 0))
    else:
        struct.pack_into(">I", b, 0, struct.unpack_from("<I", b, 0)[0])
    for o in (4, 8, 12):
        struct.pack_into(">I", b, o, struct.unpack_from("<I", b, o)[0])
    pos = 16
    for _ in range(nslots):
        struct.pack_into(">Q", b, pos, struct.unpack_from("<Q", b, pos)[0])
        pos += 8
    while pos + 4 <= 16 + nslots * 12 + ncols * 4 + nunits * ncols * 8 and pos + 4 <= len(b):
        struct.pack_into(">I", b, pos, struct.unpack_from("<I", b, pos)[0])
        pos += 4
    return bytes(b)


real = 0
for d in sorted(os.listdir(tmp)):
    path = os.path.join(tmp, d, "prog.dwp")
    if not os.path.exists(path):
        continue
    have = section_sizes(path)
    sizes = []
    for i in range(1, 10):
        n = NAMES[i]
        n = n if isinstance(n, tuple) else (n,)
        sizes.append(next((have[x] for x in n if x in have), 0))
    for sec in (".debug_cu_index", ".debug_tu_index"):
        if sec not in have:
            continue
        index = dump(path, sec)
        tag = "%s-%s" % (d, sec[7:9])
        v5 = index[:2] == b"\x05\x00"
        seed(tag, index, sizes)
        seed(tag + "-unread", index, [0xffffffff] * 9)
        seed(tag + "-small", index, [s // 2 for s in sizes])
        seed(tag + "-be", swap(index, v5), sizes, be=True)
        real += 1


def index(version, ncols, nunits, nslots, ids, sigs, rows, offs, sizes):
    head = struct.pack("<HHIII", 5, 0, ncols, nunits, nslots) if version == 5 else \
        struct.pack("<IIII", 2, ncols, nunits, nslots)
    return head + b"".join(struct.pack("<Q", s) for s in sigs) + \
        b"".join(struct.pack("<I", r) for r in rows) + \
        b"".join(struct.pack("<I", i) for i in ids) + \
        b"".join(struct.pack("<I", o) for o in offs) + \
        b"".join(struct.pack("<I", s) for s in sizes)


big = [0x1000] * 9
seed("empty", b"", big)
seed("header-only-v5", struct.pack("<HHIII", 5, 0, 0, 0, 0), big)
seed("header-only-v2", struct.pack("<IIII", 2, 0, 0, 0), big)
seed("version-3", struct.pack("<IIII", 3, 0, 0, 0), big)
good = dict(ncols=2, nunits=1, nslots=2, ids=[1, 3], sigs=[0x1234, 0], rows=[1, 0],
            offs=[0, 0], sizes=[0x10, 0x10])
seed("one-v5", index(5, **good), big)
seed("one-v2", index(2, **good), big)
for name, change in [("slots-3", dict(nslots=3, sigs=[0x1234, 0, 0], rows=[1, 0, 0])),
                     ("units-past-slots", dict(nunits=3)),
                     ("row-past-units", dict(rows=[2, 0])),
                     ("column-twice", dict(ids=[1, 1])),
                     ("column-unknown", dict(ids=[1, 99])),
                     ("no-abbrev", dict(ids=[1, 6])),
                     ("columns-10", dict(ncols=10)),
                     ("past-section", dict(offs=[0xff0, 0], sizes=[0x20, 0x10])),
                     ("offset-overflow", dict(offs=[0xffffffff, 0], sizes=[0xffffffff, 1])),
                     ("full-table", dict(nunits=2, sigs=[0x1234, 0x5678], rows=[1, 2],
                                         offs=[0, 0, 0x10, 0x10],
                                         sizes=[0x10] * 4))]:
    p = dict(good)
    p.update(change)
    seed(name, index(5, **p), big)
    seed(name + "-cut", index(5, **p)[:-3], big)
print("gen_dwp_corpus: %d real indexes, %d seeds" % (real, len(os.listdir(out))))
EOF
