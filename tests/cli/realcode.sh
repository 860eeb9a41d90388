#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real code, not only generated code: every plain build of the
# stb and googletest corpora (tests/corpus/stb.bash, gtest.bash: gcc and
# clang, DWARF 4 and 5, -O0 and -O2, LTO, -gz=zlib, zstd by the linker)
# against the oracle that is right for it (docs/oracles.md, "Which oracle
# for which build").  The split builds are tests/cli/split_dwarf.sh's.
#
# Per variant, ~1500 addresses: symbolize_gen.py's pick_addrs (function
# starts, start+1, last bytes, bytes inside, padding, outside every
# section; at most 500) and 1000 bytes drawn uniformly over the sized
# functions (bench/gen_symbolize_bench.py realaddrs).  Our `symbolize -a
# -f -i` (GNU style) is compared
#  - DWARF 4: with addr2line, through gnu_oracle (its history-dependent
#    names of C++ functions without a linkage name, clang's rnglistx);
#  - DWARF 5: with llvm-symbolizer, which numbers DWARF 5 files right
#    (addr2line 2.40 does not), frame by frame as addr2line would print
#    it; where llvm-symbolizer knows no file (NAME ??:0:0: padding
#    without a line row, code without DWARF, data, no section), with
#    addr2line, which then prints no file to misnumber, asked alone
#    where no unit covers the address (llvm-dwarfdump --lookup).  Our
#    LLVM style is also compared with llvm-symbolizer, columns included;
#  - zstd: with addr2line only (llvm-symbolizer 14 reads no zstd).
# The other oracle is compared too (the rows in parentheses): where it
# differs and the right oracle agrees with us, the difference must be
# one of its known faults (a2l_kind, llvm_style).  Exceptions are named
# and counted; anything else fails the test.  Expected answers come from
# the oracles only.
set -euo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

tl_need addr2line llvm-symbolizer llvm-dwarfdump nm objcopy readelf
PY=$(tl_python zlib) || {
	echo "SKIP: no python3" >&2
	exit 77
}
# (tests/tests.cmake makes this test require the corpora it names as
# `tl_corpus stb` and `tl_corpus gtest`: built before it, not in its time.)
corpora=()
for c in stb gtest; do
	rc=0
	dir=$(tl_corpus "$c") || rc=$?
	case $rc in
	0) corpora+=("$c=$dir") ;;
	77) echo "corpus $c: skipped (a tool or the sources are missing)" ;;
	*) exit 1 ;;
	esac
done
[ ${#corpora[@]} -gt 0 ] || exit 77
tl_tmpdir dsreal
tl_sanitizer_exitcodes
export DSOSTORE_SYMINDEX=0

"$PY" - "$DSOSTORE" "$DS_SRC" "${corpora[@]}" <<'EOF' || fails=$((fails + 1))
import re, subprocess, sys

dsostore, src = sys.argv[1:3]
sys.path.insert(0, src + "/tests/gen")
import symbolize_gen as sg

failed = 0
N_PICK, N_UNIFORM = 500, 1000


def fail(msg):
    global failed
    failed += 1
    print("  FAIL: " + msg, file=sys.stderr)


def ds(binary, addrs, *style):
    p = subprocess.run([dsostore, "symbolize", *style, "-a", "-f", "-i", "-e", binary],
                       input="".join("0x%x\n" % a for a in addrs), capture_output=True,
                       text=True)
    if p.returncode != 0 or p.stderr.strip():
        fail("%s: dsostore exit %d: %s" % (binary, p.returncode, p.stderr.strip()[:300]))
    return p.stdout


def sample(binary, seed):
    uniform = sg.run([sys.executable, src + "/bench/gen_symbolize_bench.py", "realaddrs",
                      binary, str(N_UNIFORM), str(seed)])
    return sorted(set(sg.pick_addrs(binary, seed, N_PICK)) |
                  {int(x, 16) for x in uniform.split()})


def oracle_of(variant):
    """(oracle, why) from the variant's name: gcc-O2 and clang-O2 are
    both compilers' default, DWARF 5."""
    if variant.endswith("-zstd"):
        return "addr2line", "llvm-symbolizer 14 reads no zstd"
    if "-g4" in variant:
        return "addr2line", "DWARF 4"
    return "llvm-symbolizer", "DWARF 5 file numbers"


def count(d, k, n=1):
    d[k] = d.get(k, 0) + n


def gnu_vs_llvm(llvm, mine, a2l, opts, outer_is_elf, aliases, short):
    """Our GNU lines against llvm-symbolizer's frames (llvm, not
    demangled) as addr2line prints them: "same", documented reasons, or
    None.  Frames, files and lines are llvm-symbolizer's; a function may
    differ as llvm_why allows (padding, checked by llvm_diffs; clone
    suffixes) or be addr2line's (a2l: gnu_oracle's answer, opts its
    other names), since GNU style names as addr2line does and names do
    not depend on file numbers: its history-dependent names of C++
    functions without a linkage name, and the DWARF name where
    llvm-symbolizer takes the ELF symbol's for the outermost frame, or
    another symbol at the same address (aliases: {name: names}).  Where
    addr2line names the outermost frame ?? (it follows one
    DW_AT_abstract_origin, and gcc's LTO chains two: docs/oracles.md), the
    name is the DWARF's: short() gives llvm-symbolizer's DW_AT_name of
    each frame."""
    g, r = sg.gnu_pairs(mine or []), sg.llvm_as_gnu(sg.llvm_frames(llvm or []))
    if len(g) != len(r) or [x[1] for x in g] != [x[1] for x in r]:
        return None
    a2l = sg.gnu_pairs(a2l)
    why = set()
    for i, ((fn, _), (rfn, _)) in enumerate(zip(g, r)):
        if fn == rfn:
            continue
        outer = i == len(g) - 1 and outer_is_elf
        if rfn == "??":
            why.add("padding")
        elif sg.CLONE.sub("", fn) == sg.CLONE.sub("", rfn):
            why.add("clone suffix")
        elif outer and a2l and fn == a2l[-1][0]:
            why.add("outer name: ELF symbol (addr2line: ours)")
        elif outer and fn in aliases.get(rfn, ()):
            why.add("outer name: ELF symbol (an alias of ours)")
        elif outer and len(a2l) == len(g) and a2l[-1][0] == "??" and \
                not fn.startswith("_Z") and short()[i:] == [fn]:
            why.add("outer name: ELF symbol (addr2line: ??, DWARF: ours)")
        elif len(a2l) == len(g) and (fn == a2l[i][0] or (opts and fn in opts[i])):
            why.add("C++ name by history (addr2line)")
        else:
            return None
    return " and ".join(sorted(why)) or "same"


def respelled(got, llvm, raw, mine, outer_is_elf):
    """Our LLVM block differs from llvm-symbolizer's (demangled) only in
    names whose raw (mangled) spelling is the same on both sides (ours
    from our GNU answer, mine; theirs not demangled, raw) and that LLVM
    style spells as libiberty does for a known reason
    (sg.llvm_spelling_kind); the outermost frame may be the ELF symbol's
    name (sg.llvm_why).  The set of reasons, or None."""
    g, r, m = sg.llvm_frames(got or []), sg.llvm_frames(llvm or []), sg.gnu_pairs(mine or [])
    rr = sg.llvm_frames(raw or [])
    if not g or not (len(g) == len(r) == len(rr) == len(m)):
        return None
    kinds = set()
    for i, (x, y) in enumerate(zip(g, r)):
        if x[1:] != y[1:]:
            return None
        if x[0] == y[0] or (i == len(g) - 1 and outer_is_elf):
            continue
        if rr[i][0] != m[i][0] and sg.CLONE.sub("", rr[i][0]) != sg.CLONE.sub("", m[i][0]):
            return None
        k = sg.llvm_spelling_kind(x[0], y[0], rr[i][0])
        if k is None:
            return None
        kinds.add(k)
    return kinds


def llvm_style(binary, addrs, mine, blocks=False):
    """Our LLVM style against llvm-symbolizer (sg.llvm_diffs): (bad, why),
    and with blocks also ours, theirs and theirs not demangled.  A C++
    name both demanglers spell their own way (LLVM style follows LLVM's
    spelling where tests/cli/symbolize_names.sh says) is one spelling of the
    same name where the raw names are ours (mine: our GNU lines)."""
    bad, got, llvm, why = sg.llvm_diffs(binary, addrs, ds(binary, addrs, "--output-style=LLVM"),
                                        demangle=True)
    raw = sg.llvm_symbolizer(binary, addrs, False)
    syms = sg.func_symbols(binary)
    left = []
    for a in bad:
        kinds = respelled(got.get(a), llvm.get(a), raw.get(a), mine.get(a),
                          sg.elf_outer(syms, a, raw.get(a)))
        if kinds is None:
            left.append(a)
        else:
            count(why, "demangler spelling (%s)" % ", ".join(sorted(kinds)))
    return (left, why, got, llvm, raw) if blocks else (left, why)


def a2l_kind(mine, ref, why, at):
    """What an addr2line difference is, where llvm-symbolizer agrees with
    us (why: its reason there): per frame, only the file (its DWARF 5
    file numbers), ?? for the DWARF name it cannot reach (two
    DW_AT_abstract_origin, gcc LTO), another symbol at the same address
    (at: {name: names at its address}); fewer frames (rnglistx, where
    gnu_oracle could not take llvm-symbolizer's chain: the file differs
    too); a row where no unit covers the address (its batch history).
    Anything else is "other"."""
    g, r = sg.gnu_pairs(mine or []), sg.gnu_pairs(ref)
    if "no unit covers it" in (why or ""):
        return "a row where no unit covers it (history)"
    line = lambda loc: loc.rpartition(":")[2]
    if len(r) < len(g):
        # The innermost row and the outer frames of ours, the frames
        # between dropped: its chain without the inlined frames whose
        # ranges it cannot read.
        if r and line(r[0][1]) == line(g[0][1]) and \
                [(f, line(l)) for f, l in r[1:]] == [(f, line(l)) for f, l in g[len(g) - len(r) + 1:]]:
            return "fewer frames"
        return "other"
    if len(r) != len(g):
        return "other"
    kinds = set()
    for i, ((fn, loc), (rfn, rloc)) in enumerate(zip(g, r)):
        if loc != rloc:
            if line(loc) != line(rloc):
                return "other"
            kinds.add("files")
        if fn == rfn:
            continue
        if rfn == "??":
            kinds.add("?? names")
        elif fn in at.get(rfn, ()):
            kinds.add("another symbol at the address")
        elif i == 0 and fn in at and rfn not in at:
            # GNU style's innermost name by history: the ELF symbol.
            kinds.add("C++ name by history")
        else:
            return "other"
    return " and ".join(sorted(kinds)) or "same"


def show(tag, a, got, want):
    print("    %s 0x%x\n      ours:   %s\n      oracle: %s" % (tag, a, sg.fmt(got), sg.fmt(want)),
          file=sys.stderr)


def fmt_why(why):
    return ", ".join("%d %s" % (n, k) for k, n in sorted(why.items()) if k != "same") or "none"


table = []
for arg in sys.argv[3:]:
    corpus, _, root = arg.partition("=")
    variants = sorted(p for p in sg.run(["ls", root]).split()
                      if not re.search(r"-(split|dwp)$", p) and p != "src")
    for v in variants:
        binary = "%s/%s/prog" % (root, v)
        name = "%s/%s" % (corpus, v)
        try:
            open(binary).close()
        except OSError:
            continue
        addrs = sample(binary, sg.seed_of(name))
        failed_before = failed
        oracle, reason = oracle_of(v)
        mine = {int(h, 16): l for h, l in sg.split_gnu(ds(binary, addrs))}
        ref, note, names = sg.gnu_oracle(binary, addrs, False)
        a2l_bad, a2l_why = [], {}
        for a in addrs:
            e = {"frames": ref[a], "names": names.get(a)}
            if mine.get(a) == ref[a]:
                count(a2l_why, "same")
            elif sg.gnu_match(e, mine.get(a)):
                count(a2l_why, "C++ name by history")
            else:
                a2l_bad.append(a)
        rows = []
        if oracle == "addr2line":
            for a in a2l_bad[:5]:
                show(name + " addr2line", a, mine.get(a), ref[a])
            if a2l_bad:
                fail("%s: %d addresses differ from addr2line" % (name, len(a2l_bad)))
            rows.append(("addr2line%s" % note, len(addrs), len(a2l_bad), fmt_why(a2l_why)))
            if not v.endswith("-zstd"):
                # llvm-symbolizer, for the record: where it differs,
                # addr2line (above) agrees with us.
                bad, why = llvm_style(binary, addrs, mine)
                left = sum(c for k, c in why.items() if k.startswith("not compared"))
                if bad:
                    fail("%s: %d addresses differ from llvm-symbolizer where addr2line agrees"
                         " with us, for no known reason" % (name, len(bad)))
                rows.append(("(llvm-symbolizer, LLVM style)", len(addrs) - left, len(bad),
                             fmt_why(why)))
        else:
            bad, why, got, llvm, raw = llvm_style(binary, addrs, mine, True)
            syms, secs = sg.func_symbols(binary), sg.sections(binary)
            at = {}
            for lo, _, n in syms:
                at.setdefault(lo, set()).add(n)
            aliases = {n: at[lo] for lo, _, n in syms}
            for a in bad[:5]:
                show(name + " LLVM style", a, got.get(a, [])[1:], llvm.get(a, [])[1:])
            if bad:
                fail("%s: LLVM style: %d addresses differ from llvm-symbolizer" % (name, len(bad)))
            gbad, gwhy, gnu_why = [], {}, {}
            def judge(a, block):
                """A reason, or None."""
                nofile = sg.llvm_no_file(block)
                if nofile or not any(s <= a < s + z for s, z, _ in secs):
                    # No file: addr2line has none to misnumber, and
                    # llvm-symbolizer names data and what lies past the
                    # last section after any symbol before it; outside
                    # every section it answers from the DWARF of
                    # discarded code (address 0).
                    if sg.gnu_match({"frames": ref[a], "names": names.get(a)}, mine.get(a)):
                        return ("no file: addr2line's" if nofile else
                                "outside every section: addr2line's")
                    # Code no unit covers, inside a line-table sequence
                    # of a unit whose ranges leave it out (gcc LTO: the
                    # static constructors it merges, _sub_I_*, have no
                    # DWARF): addr2line adds each sequence it decodes to
                    # its unit's ranges, so in a batch it answers such an
                    # address with that sequence's row once it has read
                    # the unit for another address.  Asked alone, it
                    # gives the symbol without a line.
                    if nofile and sg.addr2line(binary, [a], False).get(a) == mine.get(a) \
                            and not sg.cu_covers(binary, a):
                        return "no unit covers it: addr2line asked alone"
                    return None
                w = gnu_vs_llvm(block, mine.get(a), ref[a], names.get(a),
                                sg.elf_outer(syms, a, block), aliases,
                                lambda: sg.llvm_short_names(binary, [a]).get(a, []))
                return None if w is not None and "padding" in w and a in bad else w

            for a in addrs:
                w = judge(a, raw.get(a))
                gnu_why[a] = w
                if w is None:
                    fr = sg.llvm_frames(raw.get(a, []))
                    gbad.append((a, ref[a] if sg.llvm_no_file(raw.get(a)) else
                                 [x for p in sg.llvm_as_gnu(fr) for x in p]))
                else:
                    count(gwhy, w)
            for a, want in gbad[:5]:
                show(name + " GNU style", a, mine.get(a), want)
            if gbad:
                fail("%s: GNU style: %d addresses differ from llvm-symbolizer (addr2line where"
                     " it knows no file)" % (name, len(gbad)))
            rows.append(("llvm-symbolizer, GNU style", len(addrs), len(gbad), fmt_why(gwhy)))
            left = {k: c for k, c in why.items() if k.startswith("not compared")}
            rows.append(("llvm-symbolizer, LLVM style", len(addrs) - sum(left.values()), len(bad),
                         fmt_why({k: c for k, c in why.items() if k not in left})))
            # addr2line, for the record: every difference is one where
            # llvm-symbolizer agrees with us (or we failed above).
            kinds = {}
            for a in a2l_bad:
                k = a2l_kind(mine.get(a), ref[a], gnu_why.get(a), aliases)
                count(kinds, k)
                if k == "other" and kinds[k] <= 5:
                    show(name + " addr2line", a, mine.get(a), ref[a])
            if "other" in kinds:
                fail("%s: %d addresses differ from addr2line where llvm-symbolizer agrees with"
                     " us, for no known reason" % (name, kinds["other"]))
            rows.append(("(addr2line%s)" % note, len(addrs), len(a2l_bad), fmt_why(kinds)))
        for who, n, nbad, why in rows:
            line = "%-22s %-34s %5d compared %5d differ; exceptions: %s" % (name, who, n, nbad, why)
            table.append(line)
        print(("ok   " if failed == failed_before else "FAIL ") + name + ": oracle " + oracle + " (" + reason + ")")

print("\n".join(table))
sys.exit(1 if failed else 0)
EOF
tl_finish realcode
