#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generates the seed corpus of the saved-index fuzz target (fuzz_symfile.c)
# into OUTDIR (emptied first).
#
#   fuzz/gen_symfile_corpus.sh OUTDIR [REPLAY]
#
# With REPLAY (fuzz_symfile_replay), every seed written here must parse.
#
# Two kinds of seeds:
#  - containers written here, in Python, from the format as lib/symbolize/symfile.c
#    describes it (a second reading of that description: the harness
#    counts how many it parses), with opaque blobs: no CU, empty CUs, many
#    CUs, overlapping ranges, the largest build ID;
#  - real saved indexes of small programs (gcc and clang, DWARF 4 and 5,
#    C++, inline chains), written by `dsostore index` ($DSOSTORE) into a
#    private directory, when a compiler is here and the index can be saved.
set -euo pipefail

out=${1:?usage: gen_symfile_corpus.sh OUTDIR [REPLAY]}
replay=${2:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dssymfilecorpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

rm -rf "$out"
mkdir -p "$out"

# The blob sums are XXH3 (lib/common/util.c's ds__blob_sum()): Debian's python3
# has the module (python3-xxhash); another python3 first in PATH may not.
py=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import xxhash' 2>/dev/null; then
		py=$p
		break
	fi
done
if [ -z "$py" ]; then
	echo "gen_symfile_corpus: no python3 with xxhash (python3-xxhash)" >&2
	exit 1
fi

"$py" - "$out" <<'EOF'
import os, struct, sys, zlib
import xxhash

def h(b):
    return xxhash.xxh3_64_intdigest(bytes(b)) & 0xffffffff

# A blob's sum: of the array of its 64 KiB chunks' sums (each XXH3's low
# 32 bits); a CU's array follows it in the file.
def chunk_sums(b):
    return struct.pack("=%dI" % ((len(b) + 65535) // 65536),
                       *[h(b[k:k + 65536]) for k in range(0, len(b), 65536)])

def blob_sum(b):
    return h(chunk_sums(b)) if b else 0

out = sys.argv[1]
word = struct.calcsize("P")
BLOB_VERSION = 3  # DS__SYMFILE_BLOB_VERSION (lib/symbolize/symbolize.h)

def align8(x):
    return (x + 7) & ~7

def container(name, bid, elf, cus, ranges, debug_size=4096, binary_size=0):
    ncus, nranges = len(cus), len(ranges)
    cus_off = 168
    ranges_off = cus_off + 24 * ncus
    pos = align8(ranges_off + 24 * nranges)
    elf_off = pos if elf else 0
    if elf:
        pos = align8(pos + len(elf))
    table = b""
    for c in cus:
        if c:
            table += struct.pack("=QQII", pos, len(c), blob_sum(c), 0)
            pos = align8(pos + len(c))
            pos = align8(pos + len(chunk_sums(c)))
        else:
            table += struct.pack("=QQII", 0, 0, 0, 0)
    rtab = b"".join(struct.pack("=QQII", lo, hi, cu, 0) for lo, hi, cu in ranges)
    def header(crc):
        # (the first number: the format version, lib/symbolize/symfile.c's
        # FORMAT_VERSION; the last: the blob version)
        return (b"DSOSYMIX" + struct.pack("=IIBBHI", 3, 0x01020304, word, len(bid), 168, BLOB_VERSION)
                + struct.pack("=QQQIIIIQQQQII", pos, debug_size, binary_size, 0x1234, 0,
                              ncus, nranges, cus_off, ranges_off, elf_off, len(elf),
                              blob_sum(elf) if elf else 0, crc)
                + bid + bytes(64 - len(bid)))
    crc = zlib.crc32(header(0) + table + rtab)
    body = header(crc) + table + rtab
    body += bytes(align8(len(body)) - len(body))
    if elf:
        body += elf + bytes(align8(len(elf)) - len(elf))
    for blob in cus:
        if blob:
            body += blob + bytes(align8(len(blob)) - len(blob))
            sums = chunk_sums(blob)
            body += sums + bytes(align8(len(sums)) - len(sums))
    assert len(body) == pos or (not elf and not any(cus) and len(body) == align8(ranges_off + 24 * nranges))
    with open(os.path.join(out, name), "wb") as f:
        f.write(body)

bid = bytes(range(0xa0, 0xb4))
container("empty", bid, b"", [], [])
container("elf-only", bid, b"E" * 13, [], [])
container("one-cu", bid, b"E" * 40, [b"C" * 64], [(0x1000, 0x1100, 0)])
container("empty-cus", bid, b"E" * 8, [b"", b"x" * 3, b""], [(0x1000, 0x1001, 0), (0x1000, 0x2000, 1), (0x3000, 0x3100, 2)])
container("many-cus", bid, b"E" * 100, [bytes([i]) * (i % 17) for i in range(200)],
          [(0x1000 + 0x40 * i, 0x1040 + 0x40 * i, i) for i in range(200)])
container("overlap", bid, b"E" * 16, [b"A" * 8, b"B" * 8], [(0x1000, 0x3000, 0), (0x2000, 0x2100, 1)])
container("bid64", bytes(range(64)), b"E" * 24, [b"C" * 24], [(0, 2**64 - 1, 0)], binary_size=8192)
# A CU of three chunks (the last one short): three sums after it.
container("chunks", bid, b"E" * 8, [bytes(range(256)) * 600], [(0x1000, 0x2000, 0)])
EOF

# The C parser and this description agree on every one.
if [ -n "$replay" ]; then
	summary=$("$replay" -n 0 "$out" 2>&1 | grep '^fuzz_symfile:')
	n=$(ls "$out" | wc -l)
	case $summary in
	"fuzz_symfile: $n inputs, $n parsed,"*) ;;
	*) echo "gen_symfile_corpus: not every seed parses: $summary" >&2; exit 1 ;;
	esac
fi

# Real saved indexes, when they can be made here.
cat >"$tmp/prog.c" <<'EOF'
volatile int sink;
static inline __attribute__((always_inline)) int leaf(int x) { return x * sink + 1; }
static inline __attribute__((always_inline)) int mid(int x) { return x > 2 ? leaf(x) : leaf(x + 3) * 2; }
__attribute__((noinline)) int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += mid(i); return s; }
int main(int argc, char **argv) { (void)argv; return work(argc); }
EOF
cat >"$tmp/other.c" <<'EOF'
int other(int x) { return x * 3; }
EOF
cat >"$tmp/prog.cc" <<'EOF'
namespace ns {
template <typename T> struct Box { T v; __attribute__((noinline)) T get(T k) const { return v * k; } };
}
int main(int argc, char **) { ns::Box<int> b{argc}; return b.get(3); }
EOF
real=0
build() { # NAME COMPILER FLAGS... SOURCES...
	local name=$1 cc=$2
	shift 2
	command -v "$cc" >/dev/null 2>&1 || return 0
	"$cc" "$@" -o "$tmp/$name" 2>/dev/null || return 0
	mkdir -p "$tmp/idx-$name"
	if [ -n "${DSOSTORE:-}" ] &&
		DSOSTORE_SYMINDEX_PATH="$tmp/idx-$name" DEBUGINFOD_URLS= \
			"$DSOSTORE" index --debug-dir "$tmp/nodebug" --perf-buildid-dir "" \
			"$tmp/$name" >/dev/null 2>&1; then
		for f in "$tmp/idx-$name"/*; do
			[ -f "$f" ] && cp "$f" "$out/real-$name" && real=$((real + 1))
		done
	fi
}
build gcc-o2 gcc -g -O2 "$tmp/prog.c" "$tmp/other.c"
build gcc-o0-dwarf4 gcc -g -gdwarf-4 -O0 "$tmp/prog.c" "$tmp/other.c"
build clang-o2-dwarf5 clang -g -gdwarf-5 -O2 "$tmp/prog.c" "$tmp/other.c"
build gxx g++ -g -O1 "$tmp/prog.cc"
echo "gen_symfile_corpus: $(ls "$out" | wc -l) seeds, $real real saved indexes"
