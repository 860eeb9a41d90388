#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dsostore annotate --insns: perf annotate's instruction view.  A program
# made here (a hot loop of its own, a qsort comparator, and calls that put
# samples into glibc: qsort's merge sort, strlen, memmove, memset: real
# code nobody here wrote, whose debug file (libc6-dbg) has .text NOBITS,
# so its bytes must come from libc.so.6 itself) is recorded with perf
# record -e cpu-clock; then, for whatever the sampler hit (nothing here
# needs a given instruction to be hot):
#  - every instruction's samples are those of perf script -F
#    ip,sym,symoff,dso: the samples perf counts at each sym+offset, which
#    is each ip in its function, exactly; every user-space function perf
#    script shows is ours, disassembled, and no sample falls between
#    instructions;
#  - the instructions are perf annotate --stdio's (objdump's; perf 6.1, and
#    perf 6.12 where scripts/peers unpacked it, for the program's own
#    functions: it crashes on glibc's, docs/oracles.md): the same
#    addresses, each with the same mnemonic (normalised: prefixes such as
#    cs/data16/notrack/bnd dropped, rep = repz = repe, repne = repnz; an
#    instruction capstone 4 cannot decode, the AVX-512 mask ones, is ours
#    "(vex)"/"(evex)" with its length right: its address is compared, its
#    mnemonic counted apart);
#  - each jump of our listing inside its function names the label that
#    stands before the instruction perf's objdump row says it jumps to;
#  - each instruction's file:line is binutils addr2line's for its address
#    (the line table's row), and the source rows of the listing are those
#    lines of the file (sed);
#  - the bytes of glibc's functions came from libc.so.6, not its debug file.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc addr2line python3

tl_tmpdir dsinsns
cd "$tmp" || exit 2
export HOME=$tmp/home
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
export DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
tl_sanitizer_exitcodes
py=$(python3 -c 'import sys; print(sys.executable)') || py=python3

mkdir -p src bin
cat >src/prog.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline, noclone)) unsigned long hot(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		if (x % 7 == 3)
			x += i / 3;
	}
	return x;
}

static int cmp(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	size_t n = 1 << 19;
	unsigned *v = malloc(n * sizeof(*v));
	char *s = malloc(1 << 20);
	unsigned long x = hot(30000000, 1), t = 0;

	if (!v || !s)
		return 1;
	for (int r = 0; r < 3; r++) {
		for (size_t i = 0; i < n; i++)
			v[i] = (unsigned)(x = x * 6364136223846793005UL + 1442695040888963407UL) >> 3;
		qsort(v, n, sizeof(*v), cmp);
	}
	memset(s, 'a', (1 << 20) - 1);
	s[(1 << 20) - 1] = 0;
	for (int r = 0; r < 2000; r++)
		t += strlen(s + (r & 7));
	printf("%lx %lx %u\n", x, t, v[n / 2]);
	free(v);
	free(s);
	return 0;
}
EOF
if ! (cd src && gcc -O2 -g -o ../bin/prog prog.c 2>gcc.log); then
	echo "FAIL: cannot build the workload: $(head -5 src/gcc.log)" >&2
	exit 1
fi

tl_perf_or_skip
if ! perf record -N -e cpu-clock -F 4000 -o p.data -- "$tmp/bin/prog" >rec.log 2>&1; then
	echo "FAIL: perf record: $(tail -3 rec.log)" >&2
	exit 1
fi

rc=0
"$DSOSTORE" annotate --insns --json --top 100000 --percent-limit 0 p.data >ours.json 2>ours.err ||
	rc=$?
[ "$rc" -eq 0 ] || fail "annotate --insns --json: exit $rc: $(head -5 ours.err)"
grep -q -E 'Sanitizer|runtime error' ours.err && fail "sanitizer report: $(head -20 ours.err)"
rc=0
"$DSOSTORE" annotate --insns --top 100000 --percent-limit 0 p.data >ours.txt 2>ours.txt.err || rc=$?
[ "$rc" -eq 0 ] || fail "annotate --insns: exit $rc: $(head -5 ours.txt.err)"
grep -q -E 'Sanitizer|runtime error' ours.txt.err && fail "sanitizer report: $(head -20 ours.txt.err)"

perf script -i p.data -F ip,sym,symoff,dso >script.txt 2>script.err ||
	fail "perf script -F ip,sym,symoff,dso failed: $(head -3 script.err)"

# The functions to hold against perf annotate: every user-space one of
# ours with instructions, as "NAME<TAB>DSO PATH" (and the addresses of our
# program's instructions, for addr2line).
"$py" - ours.json "$tmp/bin/prog" >funcs.tsv 2>funcs.err <<'PY' || fail "our JSON: $(cat funcs.err)"
import json, sys
doc = json.load(open(sys.argv[1]))
prog = sys.argv[2]
with open("prog.addrs", "w") as out:
    for e in doc["events"]:
        for f in e["functions"]:
            if f["insns"] is None or f["dso_path"] is None or not f["dso_path"].startswith("/"):
                continue
            print("%s\t%s" % (f["name"], f["dso_path"]))
            if f["dso_path"] == prog:
                for i in f["insns"]:
                    out.write(i["addr"] + "\n")
PY
# perf 6.1's listing, and perf 6.12's where scripts/peers unpacked it:
# of our program's functions only, since perf 6.12 (Debian's backport)
# dies of SIGSEGV annotating glibc's (msort_with_tmp.part.0,
# _IO_file_doallocate, ld.so's _dl_init_paths: docs/oracles.md).
listings=perf.annotate
perf612=$(tl_peer perf-6.12 2>/dev/null) && listings="$listings perf612.annotate"
for listing in $listings; do
	p=perf
	[ "$listing" = perf612.annotate ] && p=$perf612
	: >"$listing"
	while IFS=$'\t' read -r name dso; do
		[ "$p" = perf ] || [ "$dso" = "$tmp/bin/prog" ] || continue
		printf '=== %s\t%s\n' "$name" "$dso" >>"$listing"
		"$p" annotate -i p.data --stdio --dsos "$dso" "$name" >>"$listing" 2>>"$listing.err" ||
			fail "$p annotate $name failed: $(tail -3 "$listing.err")"
	done <funcs.tsv
done
addr2line -e bin/prog <prog.addrs >prog.a2l 2>a2l.err || fail "addr2line: $(head -3 a2l.err)"

"$py" - ours.json ours.txt script.txt "$listings" prog.addrs prog.a2l "$tmp/bin/prog" \
	"$tmp/src/prog.c" <<'PY' || fail "the instructions differ from perf's (above)"
import collections, json, os, re, sys

ours_file, txt_file, script_file, ann_file, addrs_file, a2l_file, prog, src = sys.argv[1:9]
bad = []
doc = json.load(open(ours_file))
real = os.path.realpath

funcs = {}  # (realpath, name) -> function
for e in doc["events"]:
    for f in e["functions"]:
        if f["dso_path"] and f["dso_path"].startswith("/"):
            funcs[(real(f["dso_path"]), f["name"])] = f
        elif f["dso"].startswith("[kernel") and (
                f["insns"] is not None or f["disasm"]["error"] != "kernel code is not disassembled"):
            bad.append("%s: a kernel function: %s" % (f["name"], f["disasm"]))

# --- sample counts: perf script's sym+off per (dso, sym)
perf = collections.defaultdict(collections.Counter)
for line in open(script_file, errors="replace"):
    m = re.match(r"^\s*[0-9a-f]+\s+(\S+)\+0x([0-9a-f]+)\s+\((/.*)\)\s*$", line)
    if m:
        perf[(real(m.group(3)), m.group(1))][int(m.group(2), 16)] += 1
hit = 0
libc_funcs = 0
for key, counts in sorted(perf.items()):
    # A PLT entry: perf script and perf report name glibc's IRELATIVE
    # ones differently ("@plt", "*ABS*+0x9be70@plt"), perf annotate lists
    # none: not compared.  Nor is _init: perf 6.1 stretches .init's
    # zero-size _init over the program's .plt (a sample in a stub is
    # _init+0x30 to it), and lists those sections' code under it too.
    if key[1].endswith("@plt") or key[1] == "_init":
        continue
    f = funcs.get(key)
    if f is None:
        bad.append("%s in %s: perf script has %d samples, we have no such function"
                   % (key[1], key[0], sum(counts.values())))
        continue
    if f["insns"] is None:
        bad.append("%s: no instructions: %s" % (key[1], f["disasm"]["error"]))
        continue
    start = int(f["start"], 16)
    ours = collections.Counter({int(i["addr"], 16) - start: i["samples"]
                                for i in f["insns"] if i["samples"]})
    if ours != counts:
        diff = sorted(set(ours) | set(counts))
        bad.append("%s: samples per instruction differ (offset: ours/perf): %s" % (key[1],
                   ", ".join("+0x%x: %d/%d" % (o, ours[o], counts[o]) for o in diff
                             if ours[o] != counts[o])[:600]))
    if f["disasm"]["samples_elsewhere"]:
        bad.append("%s: %d samples between instructions" % (key[1], f["disasm"]["samples_elsewhere"]))
    hit += sum(counts.values())
    if "libc" in os.path.basename(key[0]):
        libc_funcs += 1
        if real(f["disasm"]["code_path"]) != key[0]:
            bad.append("%s: code read from %s, not %s" % (key[1], f["disasm"]["code_path"], key[0]))
if not hit:
    bad.append("perf script shows no user-space sample: the recording proves nothing")
print("samples: %d user-space samples in %d functions (%d of glibc) counted as perf script "
      "counts them" % (hit, len(perf), libc_funcs))

# --- instructions: perf annotate's rows "PCT : ADDR: MNEMONIC OPERANDS"
PREFIX = {"cs", "ds", "es", "ss", "fs", "gs", "data16", "data32", "addr32", "notrack", "bnd",
          "rex", "rex.w", "rex.b", "rex.x", "rex.r", "rex.wb", "rex.wx", "rex.wr"}
SAME = {"repz": "rep", "repe": "rep", "repnz": "repne"}
def norm(text):
    words = [w for w in text.split() if w not in PREFIX]
    if not words:
        return ""
    return SAME.get(words[0], words[0])

for listing in ann_file.split():
  theirs = {}
  name = None
  for line in open(listing, errors="replace"):
    if line.startswith("=== "):
        n, d = line[4:].rstrip("\n").split("\t")
        name = (real(d), n)
        theirs[name] = []
        continue
    m = re.match(r"^\s*[0-9.]+\s+:\s+([0-9a-f]+):\s+(.*?)\s*$", line)
    if m and name is not None:
        theirs[name].append((int(m.group(1), 16), m.group(2)))
  ninsns = nbad = 0
  jumps_checked = 0
  for (path, fname), f in sorted(funcs.items()):
      if f["insns"] is None or fname.endswith("@plt") or fname == "_init":
          continue
      if (path, fname) not in theirs and listing == "perf612.annotate":
          continue  # not asked of perf 6.12 (above)
      rows = theirs.get((path, fname))
      if not rows:
          bad.append("%s: %s lists no instruction" % (fname, listing))
          continue
      start = int(f["start"], 16)
      if rows[0][0] == 0 and start:  # perf printed offsets
          rows = [(a + start, t) for a, t in rows]
      ours = {int(i["addr"], 16): i for i in f["insns"]}
      if set(ours) != set(a for a, _ in rows):
          only_o = sorted(set(ours) - set(a for a, _ in rows))[:5]
          only_t = sorted(set(a for a, _ in rows) - set(ours))[:5]
          bad.append("%s: instruction addresses differ: ours only %s, perf's only %s"
                     % (fname, [hex(a) for a in only_o], [hex(a) for a in only_t]))
          continue
      for a, text in rows:
          i = ours[a]
          ninsns += 1
          if i["bad"]:
              nbad += 1
              continue
          o, t = norm(i["mnemonic"]), norm(text)
          if o != t:
              bad.append("%s+0x%x: mnemonic %r (ours: %r %r), perf annotate: %r"
                         % (fname, a - start, t, i["mnemonic"], i["operands"], text))
          # a direct jump: objdump's target "jne 11b0 <hot+0x40>" (not the
          # comment of an indirect one: "jmp *0x27e09(%rip) # 32a40 <...>")
          m = re.match(r"^\S+\s+([0-9a-f]+) <[^>]*>$",
                       " ".join(w for w in text.split() if w not in PREFIX))
          if i["kind"] == "jump" and m:
              to = int(m.group(1), 16)
              if i["target"] is None or int(i["target"], 16) != to:
                  bad.append("%s+0x%x: target %s, %s's %x" % (fname, a - start, i["target"], listing, to))
              elif to in ours:
                  jumps_checked += 1
                  if i["target_label"] is None or ours[to]["label"] != i["target_label"]:
                      bad.append("%s+0x%x: jump to %x labelled %s, the instruction there %s"
                                 % (fname, a - start, to, i["target_label"], ours[to]["label"]))
  print("instructions (%s): %d as perf annotate lists them (%d capstone cannot decode, "
        "their lengths right); %d jumps inside their functions labelled"
        % (listing, ninsns, nbad, jumps_checked))

# --- lines: addr2line's row of each instruction of our program
addrs = [int(l, 16) for l in open(addrs_file)]
a2l = [l.strip() for l in open(a2l_file)]
byaddr = {}
for f in funcs.values():
    if f["dso_path"] == prog and f["insns"]:
        for i in f["insns"]:
            byaddr[int(i["addr"], 16)] = i
for a, want in zip(addrs, a2l):
    want = re.sub(r" \(discriminator \d+\)$", "", want)
    i = byaddr[a]
    got = "%s:%d" % (i["file"], i["line"]) if i["file"] else "??:0"
    wf, wl = want.rsplit(":", 1)
    if wf == "??" and got == "??:0":
        continue
    if got != "%s:%s" % (wf, wl):
        bad.append("0x%x: line %s, addr2line %s" % (a, got, want))
if len(addrs) != len(a2l) or not addrs:
    bad.append("addr2line answered %d of %d addresses" % (len(a2l), len(addrs)))

# --- the listing of hot: labels before the rows jumps name, source rows sed's
text = open(src, "rb").read().split(b"\n")
listing = open(txt_file, errors="replace").read()
sect = listing.split("## hot [.]", 1)
if len(sect) != 2:
    bad.append("the listing has no section for hot")
else:
    body = sect[1].split("\n## ", 1)[0].split("\n")
    label_before = {}
    pending = None
    jumps = []
    for row in body:
        m = re.match(r"^\s+(L\d+):$", row)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^\s+@ prog\.c:(\d+)(?:  (.*))?$", row)
        if m:
            want = text[int(m.group(1)) - 1].decode()
            if m.group(2) != want:
                bad.append("hot: source row %s shows %r, the file %r" % (m.group(1), m.group(2), want))
            continue
        m = re.match(r"^[>* ]\s+[0-9.]+%\s+\d+\s+([0-9a-f]+)\s+(.*)$", row)
        if m:
            addr = int(m.group(1), 16)
            if pending:
                label_before[pending] = addr
                pending = None
            j = re.search(r"-> (L\d+) \((up|down)\)$", m.group(2))
            if j:
                jumps.append((addr, j.group(1), j.group(2)))
    f = funcs[(real(prog), "hot")]
    ours = {int(i["addr"], 16): i for i in f["insns"]}
    want_jumps = [(a, i) for a, i in ours.items() if i["target_label"]]
    if len(jumps) != len(want_jumps) or not jumps:
        bad.append("hot: %d jumps to labels listed, the JSON has %d" % (len(jumps), len(want_jumps)))
    for addr, label, way in jumps:
        to = int(ours[addr]["target"], 16)
        if label_before.get(label) != to:
            bad.append("hot: the jump at %x names %s, which stands before %s, not %x"
                       % (addr, label, label_before.get(label), to))
        if way != ("down" if to > addr else "up"):
            bad.append("hot: the jump at %x to %x says %s" % (addr, to, way))
for b in bad:
    print("FAIL: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

tl_finish annotate_insns.sh
