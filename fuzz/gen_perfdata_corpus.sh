#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generates the seed corpus of the perf.data fuzz target (fuzz_perfdata.c)
# into OUTDIR (emptied first).  Nothing here is committed: a recorded
# perf.data holds this machine's paths, so seeds are made on each run.
#
#   fuzz/gen_perfdata_corpus.sh OUTDIR
#
# Seeds: a recording of `true` (when perf record -e cpu-clock works here)
# and its copy in the other byte order (tests/gen/perfswap.py); one of
# --call-graph dwarf with its samples broken where the user registers and
# stack are decoded (dwarf_mutants()); recordings with
# no sample (perf's, when it works, and tests/gen/perfgen.py's); hand-built
# files with a small build-ID table, in both byte orders (so the corpus
# exists without perf too); a pipe-mode header; and copies cut and
# corrupted where the reader steers: in the header, in the feature table,
# inside build-ID records (size fields, the size byte, the name's NUL).
set -euo pipefail

out=${1:?usage: gen_perfdata_corpus.sh OUTDIR}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsperfcorpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

rm -rf "$out"
mkdir -p "$out"

recorded=
if command -v perf >/dev/null &&
	HOME=$tmp perf record -N -e cpu-clock -o "$tmp/rec.data" -- true >"$tmp/rec.log" 2>&1; then
	recorded=$tmp/rec.data
	# Events of every kind the reader decodes: callchains and two attrs
	# (sample ids), zstd-compressed records, build IDs in MMAP2, user stacks
	# (--call-graph dwarf), pipe mode.
	busy='i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done'
	rec() {
		local name=$1
		shift
		HOME=$tmp perf record -N "$@" -- sh -c "$busy" >"$tmp/$name.log" 2>&1 ||
			echo "gen_perfdata_corpus: perf record $* failed" >&2
	}
	rec g -g -e cpu-clock,task-clock -o "$tmp/ev-g"
	rec z -z -e cpu-clock -o "$tmp/ev-z"
	rec mm --buildid-mmap -e cpu-clock -o "$tmp/ev-mm"
	# --call-graph dwarf: user registers and stack copies (1 KiB each).
	rec dwarf --call-graph dwarf,1024 -e cpu-clock -F 2000 -o "$tmp/ev-dwarf"
	HOME=$tmp perf record -N -e cpu-clock -o - -- sh -c "$busy" >"$tmp/ev-pipe" 2>"$tmp/pipe.log" ||
		echo "gen_perfdata_corpus: perf record -o - failed" >&2
	# No samples at all: a period of 1 s of CPU time, and `true` exits
	# long before it.
	HOME=$tmp perf record -N -e cpu-clock -c 1000000000 -o "$tmp/nosamples.data" -- true \
		>"$tmp/nosamples.log" 2>&1 || echo "gen_perfdata_corpus: perf record -c failed" >&2
else
	echo "gen_perfdata_corpus: no perf recording (hand-built seeds only)" >&2
fi

# One python run for everything: it starts slowly on some machines.
python3 - "$src/tests/gen" "$out" "$recorded" "$tmp" <<'PY'
import glob, os, struct, sys
sys.path.insert(0, sys.argv[1])
import perfswap

out, recorded, tmp = sys.argv[2], sys.argv[3], sys.argv[4]


def put(name, data):
    with open("%s/%s" % (out, name), "wb") as f:
        f.write(data)


def record(misc, pid, bid, name, pad_to=8, size_byte=None):
    body = struct.pack("<i", pid) + bid.ljust(20, b"\0")
    body += bytes([len(bid) if size_byte is None else size_byte]) + b"\0" * 3
    body += name.encode() + b"\0"
    size = 8 + len(body)
    size += -size % pad_to
    return struct.pack("<IHH", 67, misc, size) + body.ljust(size - 8, b"\0")


def synth(recs, extra_feats=()):
    """A little-endian file-mode perf.data: header, one attr, 64 bytes of
    data, then the feature table and sections (build IDs, HOSTNAME...)."""
    # cpu-clock (type 1), attr.size 120, no ids: {offset 0, size 0}.
    attr = struct.pack("<II", 1, 120) + b"\0" * 112 + struct.pack("<QQ", 0, 0)
    data = struct.pack("<IHH", 68, 0, 8) * 8  # FINISHED_ROUND records
    bits = sorted({2} | set(extra_feats))
    table = 104 + len(attr) + len(data)
    secs = []
    at = table + 16 * len(bits)
    for b in bits:
        string = struct.pack("<I", 8) + b"host\0\0\0\0"
        body = (b"".join(recs) if b == 2 else
                struct.pack("<I", 1) + string if b == 11 else string)
        secs.append((at, body))
        at += len(body)
    words = [0, 0, 0, 0]
    for b in bits:
        words[b // 64] |= 1 << (b % 64)
    hdr = b"PERFILE2" + struct.pack("<12Q", 104, 136, 104, len(attr), 104 + len(attr),
                                    len(data), 0, 0, *words)
    tbl = b"".join(struct.pack("<QQ", o, len(body)) for o, body in secs)
    return hdr + attr + data + tbl + b"".join(body for _, body in secs)


def cuts_and_flips(tag, src):
    """Copies of src cut and corrupted where the reader looks."""
    _, _, table, bits = perfswap.layout(src)
    boff, bsize = perfswap.build_id_section(src)
    recs = perfswap.records(src)
    nf = len(bits)
    cuts = {15, 16, 103, 104, table, table + 8, table + 16 * nf - 1, boff + 7,
            boff + 35, boff + bsize - 1}
    for off, _, size in recs[:3]:
        cuts |= {off + 6, off + 36, off + size - 1}
    for c in sorted(c for c in cuts if 0 < c < len(src)):
        put("%s-cut%d" % (tag, c), src[:c])
    big = 0xffffffffffffffff
    for name, at, fmt, val in [
        ("datasize", 48, "<Q", big - 1), ("dataoff", 40, "<Q", len(src)),
        ("hsize", 8, "<Q", 16), ("feat", 72, "<Q", big),
        ("tbloff", table + 16 * bits.index(2), "<Q", big - 7),
        ("tblsize", table + 16 * bits.index(2) + 8, "<Q", 1 << 63),
        ("recsize0", boff + 6, "<H", 0), ("recsize35", boff + 6, "<H", 35),
        ("recsizemax", boff + 6, "<H", 0xffff), ("misc", boff + 4, "<H", 0xffff),
    ]:
        b = bytearray(src)
        struct.pack_into(fmt, b, at, val)
        put("%s-%s" % (tag, name), b)
    # No NUL in the first name: fill it up to the record's end.
    off, _, size = recs[0]
    b = bytearray(src)
    b[off + 36:off + size] = b"A" * (size - 36)
    put("%s-nonul" % tag, b)


seeds = {}
if recorded:
    seeds["rec"] = open(recorded, "rb").read()
bid = bytes(range(1, 21))
seeds["synth"] = synth([
    record(0x8001, -1, bid, "[kernel.kallsyms]", 64),
    record(0x8002, -1, bid[:16], "/usr/bin/x", 64),
    record(0x0002, 1234, bid, "/guest/lib.so"),
    record(0x8002, -1, bid[:1], "/one-byte-id"),
], extra_feats=(3, 4, 11))
seeds["synth1"] = synth([record(0x0002, -1, bid, "/a")])
for tag, src in list(seeds.items()):
    put(tag, src)
    put(tag + "-swapped", perfswap.swap(src))
    cuts_and_flips(tag, src)
    cuts_and_flips(tag + "-sw", perfswap.swap(src))


def event_mutants(tag, src, limit=40):
    """Copies of a recording broken inside its records: cut, sizes made
    0, 7 and huge, and words of the bodies (sample fields, callchain
    sizes, MMAP lengths, file names' NULs, zstd bytes) overwritten."""
    if src[8:16] == struct.pack("<Q", 16):
        off, end = 16, len(src)
    else:
        off, size = struct.unpack_from("<QQ", src, 40)
        end = off + size
    n = 0
    while off + 8 <= end and n < limit:
        typ, misc, size = struct.unpack_from("<IHH", src, off)
        if size < 8:
            break
        if n % 4 == 0 or typ in (10, 81, 83, 64):
            put("%s-r%d-cut" % (tag, n), src[:off + size // 2])
            for v in (0, 7, 0xffff):
                b = bytearray(src)
                struct.pack_into("<H", b, off + 6, v)
                put("%s-r%d-size%d" % (tag, n, v), b)
            for at in range(off + 8, min(off + size, off + 80), 16):
                b = bytearray(src)
                struct.pack_into("<Q", b, at, 0xfffffffffffffff0)
                put("%s-r%d-w%d" % (tag, n, at - off), b)
        off += size
        n += 1


for f in sorted(glob.glob(os.path.join(tmp, "ev-*"))):
    src = open(f, "rb").read()
    if len(src) < 16:
        continue
    tag = os.path.basename(f)
    put(tag, src)
    # the dwarf seed's records are large: a few, and dwarf_mutants() below
    event_mutants(tag, src, 8 if tag == "ev-dwarf" else 40)

def dwarf_mutants(tag, src):
    """Samples of a --call-graph dwarf recording (file mode) broken where
    the session decodes the user registers and stack (the record's end:
    abi, regs, size, stack bytes, dyn_size): abi 0 and unknown, a size past
    the record, dyn_size over size or 0, stack bytes and registers made
    0xff.., and the attr's register mask made absurd."""
    if src[8:16] == struct.pack("<Q", 16):
        return
    attr_size, attrs_off = struct.unpack_from("<QQ", src, 16)
    if attr_size < 104:
        return
    mask, = struct.unpack_from("<Q", src, attrs_off + 80)
    nregs = bin(mask).count("1")
    off, size = struct.unpack_from("<QQ", src, 40)
    end, n = off + size, 0
    while off + 8 <= end and n < 3:
        typ, misc, rsize = struct.unpack_from("<IHH", src, off)
        if rsize < 8:
            break
        # [size][size bytes][dyn_size], then up to 3 u64 fields (DATA_SRC,
        # WEIGHT...: perf adds DATA_SRC to --call-graph dwarf events)
        for ssize, tail in [(z, t) for t in range(4) for z in (1024, 0)]:
            at = off + rsize - 8 * tail - (8 + ssize + 8 if ssize else 8)
            if (typ == 9 and at >= off + 8 and
                    struct.unpack_from("<Q", src, at)[0] == ssize):
                break
        else:
            off += rsize
            continue
        regs = at - 8 * nregs
        abi = regs - 8
        muts = {"abi0": (abi, 0), "abi9": (abi, 9), "size-past": (at, 1 << 40),
                "size-odd": (at, 1023)}
        if ssize:
            muts.update({"dyn-over": (at + 8 + ssize, ssize + 1), "dyn0": (at + 8 + ssize, 0),
                         "stack-ff": (at + 8, 0xffffffffffffffff)})
        for k in range(0, nregs, 4):
            muts["reg%d-ff" % k] = (regs + 8 * k, 0xffffffffffffffff)
        for name, (where, val) in muts.items():
            b = bytearray(src)
            struct.pack_into("<Q", b, where, val)
            if name == "stack-ff":
                b[at + 8:at + 8 + ssize] = b"\xff" * ssize
            put("%s-s%d-%s" % (tag, n, name), b)
        n += 1
        off += rsize
    b = bytearray(src)
    struct.pack_into("<Q", b, attrs_off + 80, 0xffffffffffffffff)
    put("%s-mask-all" % tag, b)


if os.path.exists(os.path.join(tmp, "ev-dwarf")):
    dwarf_mutants("ev-dwarf", open(os.path.join(tmp, "ev-dwarf"), "rb").read())

# Recordings without a sample: perf's, and one of tests/gen/perfgen.py (its
# two DSOs mapped, none sampled, both in the table), also in pipe mode.
if os.path.exists(os.path.join(tmp, "nosamples.data")):
    put("rec-nosamples", open(os.path.join(tmp, "nosamples.data"), "rb").read())
import perfgen
quiet = perfgen.made_up_dsos(2)
for d in quiet:
    d.samples = 0
quiet = perfgen.synth(quiet, where="table-all")
put("gen-nosamples", quiet.file_bytes())
put("gen-nosamples-pipe", quiet.pipe_bytes())

put("pipe", b"PERFILE2" + struct.pack("<Q", 16) + b"\0" * 32)
put("pipe-swapped", b"2ELIFREP" + struct.pack(">Q", 16))
put("magic-only", b"PERFILE2")
PY
