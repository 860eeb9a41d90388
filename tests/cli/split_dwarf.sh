#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Split DWARF (-gsplit-dwarf), on the stb corpus (tests/corpus/stb.bash):
# gcc and clang, -O2 (and gcc -O0), DWARF 4 and 5, with .dwo files and
# with a .dwp package alone.
#
#  - each group (compiler and flags): ~2000 addresses of the plain build
#    (function starts, their ends, random bytes inside, padding; see
#    symbolize_gen.py's pick_addrs) answered by `dsostore symbolize -a -f
#    -i` must be what the oracle says (addr2line, with llvm-symbolizer's
#    chains where addr2line drops rnglistx ranges: docs/oracles.md), and
#    every split build of the group (.text byte-identical, checked) must
#    answer them exactly as the plain build does;
#  - the issue's example: an address of stbi__err inlined in stbi_info
#    (found with llvm-symbolizer on the plain build) gets both frames from
#    the .dwo files and from the package;
#  - a missing .dwo (DWARF 4): the skeleton's lines and the ELF names, as addr2line
#    prints them (it reads no split DWARF), with one warning;
#  - a .dwo of another unit where the right one is looked for: refused
#    with a warning naming both ids, and no frame from it;
#  - laziness: one address of a split build builds one CU, which opens one
#    .dwo (from a package: one unit of it).
set -euo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

tl_need addr2line llvm-symbolizer nm objcopy readelf python3
SYMSTATS=${DS_BUILD:-build}/ds_symstats
[ -x "$SYMSTATS" ] || {
	echo "FAIL: no $SYMSTATS" >&2
	exit 1
}
rc=0
C=$(tl_corpus stb) || rc=$?
[ "$rc" = 0 ] || exit "$rc"
tl_tmpdir dssplit
tl_sanitizer_exitcodes
# What builds, not what a saved index says.
export DSOSTORE_SYMINDEX=0

python3 - "$C" "$tmp" "$DSOSTORE" "$SYMSTATS" "$DS_SRC/tests/gen" <<'EOF' || fails=$((fails + 1))
import os, re, shutil, subprocess, sys

corpus, tmp, dsostore, symstats, testdir = sys.argv[1:6]
sys.path.insert(0, testdir)
import symbolize_gen as sg

failed = 0


def fail(msg):
    global failed
    failed += 1
    print("  FAIL: " + msg, file=sys.stderr)


def run(cmd, stdin=None, err=False):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        fail("%s: status %d: %s" % (" ".join(cmd), p.returncode, p.stderr[-500:]))
    return (p.stdout, p.stderr) if err else p.stdout


def ours(binary, addrs, extra=()):
    """{addr: GNU lines} of dsostore -a -f -i, and its stderr."""
    out, err = run([dsostore, "symbolize", "-a", "-f", "-i", *extra, "-e", binary],
                   "".join("0x%x\n" % a for a in addrs), err=True)
    return {int(h, 16): lines for h, lines in sg.split_gnu(out)}, err


def llvm_diffs(binary, addrs):
    """sg.llvm_diffs on our LLVM style, and how many were compared."""
    out = run([dsostore, "symbolize", "--output-style=LLVM", "-a", "-f", "-i", "-e", binary],
              "".join("0x%x\n" % a for a in addrs))
    bad, got, ref, why = sg.llvm_diffs(binary, addrs, out)
    return bad, got, ref, len(addrs) - why.get("not compared: no file", 0)


def text_of(binary):
    out = os.path.join(tmp, "text")
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.text", binary, out],
                   check=True)
    with open(out, "rb") as f:
        return f.read()


groups = [("gcc-O2-g4", ["split", "dwp"]), ("gcc-O2-g5", ["split"]),
          ("gcc-O0-g5", ["split"]), ("clang-O2-g4", ["split", "dwp"]),
          ("clang-O2-g5", ["split", "dwp"])]
summary = []
for base, kinds in groups:
    plain = "%s/%s/prog" % (corpus, base)
    addrs = sg.pick_addrs(plain, sg.seed_of(base), 2000)
    mine, _ = ours(plain, addrs)
    if base.endswith("g5"):
        bad, got, ref, n = llvm_diffs(plain, addrs)
        oracle = "llvm-symbolizer, on the %d it names a file of" % n
        for a in bad[:5]:
            fail("%s 0x%x: ours %s, oracle %s" % (base, a, sg.fmt(got.get(a)),
                                                  sg.fmt(ref.get(a))))
    else:
        ref, note, names = sg.gnu_oracle(plain, addrs, False)
        oracle = "addr2line" + note
        bad = [a for a in addrs
               if not sg.gnu_match({"frames": ref[a], "names": names.get(a)}, mine.get(a))]
        for a in bad[:5]:
            fail("%s 0x%x: ours %s, oracle %s" % (base, a, sg.fmt(mine.get(a)),
                                                  sg.fmt(ref[a])))
    line = "%s: %d addresses, %d differ from the oracle (%s)" % (base, len(addrs), len(bad),
                                                                 oracle)
    text = text_of(plain)
    for kind in kinds:
        split = "%s/%s-%s/prog" % (corpus, base, kind)
        if text_of(split) != text:
            fail("%s-%s: .text is not the plain build's" % (base, kind))
            continue
        got, err = ours(split, addrs)
        diff = [a for a in addrs if got.get(a) != mine.get(a)]
        for a in diff[:5]:
            fail("%s-%s 0x%x: %s, plain build: %s" % (base, kind, a, sg.fmt(got.get(a)),
                                                     sg.fmt(mine.get(a))))
        if err.strip():
            fail("%s-%s: stderr: %s" % (base, kind, err.strip()[:300]))
        line += "; %s: %d differ from the plain build" % (kind, len(diff))
    summary.append(line)
    print(("ok   " if not bad and "FAIL" not in line else "") + line)


# The issue's example: stbi__err inlined in stbi_info, found by
# llvm-symbolizer on the plain build.
def inlined_in(binary, inner, outer):
    for l in run(["nm", "-S", binary]).splitlines():
        f = l.split()
        if len(f) == 4 and f[3] == outer:
            lo, size = int(f[0], 16), int(f[1], 16)
            break
    else:
        return None, None
    blocks = sg.llvm_symbolizer(binary, range(lo, lo + size), False)
    for a in range(lo, lo + size):
        fr = sg.llvm_frames(blocks.get(a, []))
        if len(fr) == 2 and fr[0][0] == inner and fr[1][0] == outer:
            return a, sg.llvm_as_gnu(fr)
    return None, None


for base, kind in [("gcc-O2-g5", "split"), ("gcc-O2-g4", "dwp"), ("clang-O2-g5", "dwp")]:
    a, want = inlined_in("%s/%s/prog" % (corpus, base), "stbi__err", "stbi_info")
    if a is None:
        fail("%s: no stbi__err inlined in stbi_info (llvm-symbolizer)" % base)
        continue
    got, _ = ours("%s/%s-%s/prog" % (corpus, base, kind), [a])
    pairs = sg.gnu_pairs(got.get(a, []))
    if pairs != want:
        fail("%s-%s 0x%x: %s, llvm-symbolizer: %s" % (base, kind, a, pairs, want))
    else:
        print("ok   %s-%s 0x%x: %s" % (base, kind, a,
                                       " < ".join("%s %s" % p for p in pairs)))

# A package's binary alone: no .dwo, no .dwp.  Then with another unit's
# .dwo where the first unit's is looked for (beside the binary).  DWARF 4:
# addr2line reads its file numbers right.
for base in ["gcc-O2-g4", "clang-O2-g4"]:
    src = "%s/%s-dwp/prog" % (corpus, base)
    addrs = sg.pick_addrs(src, sg.seed_of(base + "-missing"), 600)
    for case in ["missing", "wrong"]:
        d = os.path.join(tmp, "%s-%s" % (base, case))
        os.makedirs(d)
        shutil.copy(src, d)
        prog = os.path.join(d, "prog")
        if case == "wrong":
            shutil.copy("%s/%s-split/main.dwo" % (corpus, base), os.path.join(d, "image.dwo"))
        got, err = ours(prog, addrs)
        want = sg.addr2line(prog, addrs, False)
        diff = [a for a in addrs if got.get(a) != want.get(a)]
        for a in diff[:5]:
            fail("%s %s 0x%x: %s, addr2line: %s" % (base, case, a, sg.fmt(got.get(a)),
                                                   sg.fmt(want.get(a))))
        warn = "not found" if case == "missing" else "is not the split unit of its skeleton"
        if warn not in err or (case == "missing" and err.count("\n") != 1):
            fail("%s %s: stderr is not one warning (%r): %s" % (base, case, warn, err))
        print("%s%s %s: %d addresses, %d differ from addr2line" % (
            "ok   " if not diff else "", base, case, len(addrs), len(diff)))

# Laziness: one address, one CU; from .dwo files, one opened.
a = sg.func_symbols("%s/gcc-O2-g5/prog" % corpus)
sym = [s for s in a if s[2] == "stbi_info"][0][0]
for v in ["gcc-O2-g5-split", "clang-O2-g5-dwp"]:
    out = run([symstats, "%s/%s/prog" % (corpus, v), "%x" % sym])
    if not out.endswith("dwarf_builds 1 units_built 1\n"):
        fail("%s: one address: %s" % (v, out))
    else:
        print("ok   %s: one address, one unit built" % v)
_, err = run([dsostore, "symbolize", "-v", "-e", "%s/gcc-O2-g5-split/prog" % corpus,
              "%x" % sym], err=True)
opened = re.findall(r"split unit [0-9a-f]+ from (\S+)", err)
if len(opened) != 1 or not opened[0].endswith("/image.dwo"):
    fail("gcc-O2-g5-split: one address opened %s" % opened)
else:
    print("ok   gcc-O2-g5-split: one address, one .dwo opened (%s)" % opened[0])

print("\n".join(summary), file=sys.stderr if failed else sys.stdout)
sys.exit(1 if failed else 0)
EOF
tl_finish split_dwarf
