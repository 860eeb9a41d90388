#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dsostore report's call graphs (-g) against perf report --stdio's.  A
# program with known call paths (one hot function called by three
# callers, by a recursion four deep and, back through a function pointer,
# by a shared library's function; a burner in the library), gcc -O2 -g
# -fno-omit-frame-pointer, is recorded with perf record -g; then for each
# option combination (--no-children, --children; graph, fractal, flat,
# folded, none; thresholds; caller and callee order, -G; a print limit;
# --percent-limit; --max-stack, which keeps the entries nearest the
# sample, or in caller order the outermost ones; the values period and
# count; --sort sym, where perf
# leaves out a chain's first entry) the whole table after the header lines
# (column headers, rows and graphs, trailing blanks included) must be perf
# report's text, with two exceptions said where they are found:
#  - perf 6.1 prints fractal's "[...]" as "[...] (inlined)" when the heap
#    hands it a dirty symbol (ui/stdio/hist.c mallocs it, docs/oracles.md):
#    perf's "[...] (inlined)" is read as "[...]";
#  - with --children, rows of the same Children share may come in another
#    order (the report's order of tied rows, not the graphs'): their
#    blocks (row and graph) must be the same, in any order among them.
# Shares that differ by one unit of the last digit would be allowed and
# counted (both tools divide the same periods: none are expected).
# The same for the workload recorded compressed (-z), to a pipe (pipe
# mode: --no-children only, perf 6.1 prints no Children table there) and
# with two events (each event's table compared on its own).
# --json: valid; each row's tree sums to its period (Children period),
# each node to its own and its children's; and its paths and self shares
# are perf's -g folded,0 lines.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"
: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc python3

tl_tmpdir dscallgraph
cd "$tmp" || exit 2
export HOME=$tmp/home
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
export DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
tl_sanitizer_exitcodes
tl_perf_or_skip
py=$(python3 -c 'import sys; print(sys.executable)') || py=python3

# FRAME: gcc omits a leaf's frame even with -fno-omit-frame-pointer, and
# then its caller is missing from every chain through it.
cat >libcg.c <<'EOF'
#define FRAME __asm__ volatile("" ::"r"(__builtin_frame_address(0)))
unsigned long lib_step(unsigned long n, unsigned long x,
		       unsigned long (*fn)(unsigned long, unsigned long))
{
	FRAME;
	x = fn(n, x);
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

__attribute__((noinline)) unsigned long lib_burn(unsigned long n, unsigned long x)
{
	FRAME;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 31 + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}
EOF
cp "$DS_SRC/tests/gen/cgprog/cg.c" cg.c
if ! gcc -O2 -g -fno-omit-frame-pointer -fPIC -shared -o libcg.so libcg.c ||
	! gcc -O2 -g -fno-omit-frame-pointer -DCG_FRAME -DCG_ITERS=6000 -o cg cg.c -L. -lcg \
		-Wl,-rpath,'$ORIGIN'; then
	echo "FAIL: cannot build the workload" >&2
	exit 1
fi
if ! perf record -N -g -e cpu-clock -F 4000 -o cg.data -- ./cg >rec.log 2>&1; then
	fail "perf record -g: $(tail -3 rec.log)"
	tl_finish report_callgraph
fi
# The same workload recorded the other ways perf writes: compressed (-z),
# to a pipe (perf record -o -: pipe mode), and with two events.
perf record -N -g -z -e cpu-clock -F 4000 -o z.data -- ./cg >rec-z.log 2>&1 ||
	fail "perf record -g -z: $(tail -3 rec-z.log)"
perf record -N -g -e cpu-clock -F 4000 -o - -- ./cg 2>rec-pipe.log >pipe.data ||
	fail "perf record -g -o -: $(tail -3 rec-pipe.log)"
perf record -N -g -e cpu-clock,task-clock -F 2000 -o ev2.data -- ./cg >rec-ev2.log 2>&1 ||
	fail "perf record -g, two events: $(tail -3 rec-ev2.log)"
# Chains deeper than perf's default --max-stack (this machine's
# kernel.perf_event_max_stack, 127 unless raised), as a machine with a
# raised limit records them: perf report and perf script cut them there by
# default.  tests/gen/perfgen.py writes them: a sample in hot (or rec) under
# DEPTH frames of rec under main, for depths on both sides of 127.
"$py" - "$DS_SRC/tests/gen" cg deep.data <<'PY' || fail "perfgen: the deep recording"
import os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from perfgen import Recording
exe, out = os.path.abspath(sys.argv[2]), sys.argv[3]
syms = {}
for l in subprocess.run(["nm", exe], capture_output=True, text=True).stdout.split("\n"):
    f = l.split()
    if len(f) == 3 and f[1] in "tT":
        syms[f[2]] = int(f[0], 16)
notes = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True).stdout
bid = bytes.fromhex(notes.split("Build ID: ")[1].split()[0])
base = 0x555555554000  # the PIE's text: file offset = vaddr, one map
r = Recording(callchain=True)
r.build_id(bid, exe)
r.comm(4242, 4242, "cg", 1)
r.mmap(4242, 4242, base, os.path.getsize(exe) + 0x1000, 0, exe, 1)
t = 10
for fn, depth, n in (("hot", 20, 3), ("hot", 120, 2), ("hot", 126, 2), ("hot", 127, 1),
                     ("hot", 200, 4), ("hot", 400, 2), ("rec", 150, 2), ("rec", 30, 1)):
    leaf = base + syms[fn] + 8
    chain = [leaf] + [base + syms["rec"] + 0x10] * depth + [base + syms["main"] + 0x20]
    for _ in range(n):
        r.sample(4242, 4242, leaf, t, callchain=chain)
        t += 1
r.write(out)
PY

# NAME|OPTIONS: each is run by perf report --stdio and by us.
cases=(
	"nc|--no-children"
	"nc-sym|--no-children --sort sym"
	"nc-comm|--no-children --sort comm,dso,sym"
	"nc-caller|--no-children -g caller"
	"nc-G|--no-children -G"
	"nc-bare|--no-children -g"
	"nc-g0|--no-children -g graph,0"
	"nc-g2|--no-children -g graph,2,callee"
	"nc-limit|--no-children -g graph,0.5,2"
	"nc-fractal|--no-children -g fractal"
	"nc-fractal0|--no-children -g fractal,0"
	"nc-fractal10|--no-children -g fractal,10,caller"
	"nc-flat|--no-children -g flat"
	"nc-folded|--no-children -g folded"
	"nc-folded0|--no-children -g folded,0"
	"nc-period|--no-children -g graph,period"
	"nc-count|--no-children -g fractal,3,count"
	"nc-pl|--no-children --percent-limit 5"
	"nc-pl-g|--no-children --percent-limit 5 -g graph,0.1"
	"nc-none|--no-children -g none"
	"ch|--children"
	"ch-sym|--children --sort sym"
	"ch-callee|--children -g callee"
	"ch-G|--children -g callee -G"
	"ch-g0|--children -g graph,0"
	"ch-fractal|--children -g fractal"
	"ch-fractal3|--children -g fractal,3,callee"
	"ch-flat|--children -g flat,1"
	"ch-folded|--children -g folded"
	"ch-pl|--children --percent-limit 3"
	"ch-none|--children -g none"
	"nc-ms0|--no-children --max-stack 0"
	"nc-ms2|--no-children --max-stack 2"
	"nc-G-ms3|--no-children -G --max-stack 3"
	"ch-ms0|--children --max-stack 0"
	"ch-ms1|--children --max-stack 1"
	"ch-ms3|--children --max-stack 3"
	"ch-callee-ms2|--children -g callee --max-stack 2"
	"ch-fractal-ms4|--children -g fractal,0 --max-stack 4"
)
# NAME|RECORDING|OPTIONS: the other recordings, a few option sets each.
# Pipe mode: perf 6.1 prints no Children table from a pipe recording
# (docs/oracles.md), so only --no-children there.
kinds=(
	"z-nc|z.data|--no-children"
	"z-ch|z.data|--children"
	"z-fractal|z.data|--no-children -g fractal,1,caller"
	"pipe-nc|pipe.data|--no-children"
	"pipe-callee|pipe.data|--no-children -g graph,1,callee"
	"ev2-nc|ev2.data|--no-children"
	"ev2-ch|ev2.data|--children"
	"deep-nc|deep.data|--no-children"
	"deep-G|deep.data|--no-children -G"
	"deep-ch|deep.data|--children"
	"deep-fractal|deep.data|--children -g fractal,0,callee"
	"deep-ms|deep.data|--children --max-stack 300"
)
for c in "${cases[@]}" "${kinds[@]}"; do
	name=${c%%|*} opts=${c#*|} data=cg.data
	if [ "${opts%%|*}" != "$opts" ]; then
		data=${opts%%|*} opts=${opts#*|}
	fi
	# shellcheck disable=SC2086 # the options are words
	perf report -i "$data" --stdio --sort dso,sym $opts >"$name.perf" 2>"$name.perferr" ||
		fail "perf report $opts: $(head -3 "$name.perferr")"
	rc=0
	# shellcheck disable=SC2086
	"$DSOSTORE" report --no-fetch --sort dso,sym $opts "$data" >"$name.ours" 2>"$name.err" ||
		rc=$?
	[ "$rc" = 0 ] || fail "report $opts: exit $rc: $(head -3 "$name.err")"
	if grep -q -E 'Sanitizer|runtime error' "$name.err"; then
		fail "report $opts: sanitizer report:"
		head -20 "$name.err" >&2
	fi
done

"$py" - "${cases[@]}" "${kinds[@]}" <<'PY' || fails=$((fails + 1))
import re, sys

ROW = re.compile(r"^ +[0-9.]+%  +\S")
NUM = re.compile(r"[0-9]+\.[0-9]{2}")

def tables(path):
    """Each event's table: the lines from its column header on, up to the
    next event's header; perf's trailer and the blank lines at the end
    left out."""
    lines = open(path, errors="replace").read().split("\n")
    at = [i for i, l in enumerate(lines) if re.match(r"^# (Overhead|Children) ", l)]
    out = []
    for k, i in enumerate(at):
        end = next((j for j in range(i, at[k + 1] if k + 1 < len(at) else len(lines))
                    if lines[j].startswith("# Samples:")), at[k + 1] if k + 1 < len(at) else len(lines))
        body = lines[i:end]
        while body and (not body[-1].strip() or body[-1].startswith("#")) and len(body) > 3:
            body.pop()
        out.append(body)
    return out

def table(path):
    return tables(path)

def blocks(body):
    """The column headers, and each row with the lines under it (its
    graph and the blank line after it).  The last column (Symbol) is as
    wide as its longest name, which a PLT stub that perf calls "@plt" and
    we NAME@plt can be: its padding and its dots are not compared."""
    head = [re.sub(r"\.+$", "..", l.rstrip()) for l in body[:3]]
    out = []
    for l in (l.rstrip() for l in body[3:]):
        if ROW.match(l):
            out.append([l])
        elif out:
            out[-1].append(l)
        else:
            out.append(["(no row)", l])
    return head, [tuple(b) for b in out]

def near(a, b):
    """Lines equal but for shares one unit of the last digit apart."""
    if NUM.sub("#", a) != NUM.sub("#", b):
        return False
    return all(abs(float(p) - float(q)) < 0.0101 for p, q in zip(NUM.findall(a), NUM.findall(b)))

def first_diff(name, p, o):
    i = next(i for i in range(max(len(p), len(o)) + 1)
             if i >= len(p) or i >= len(o) or p[i] != o[i])
    return ("%s: under %r, line %d:\n    perf: %r\n    ours: %r" %
            (name, p[0].strip(), i, p[i] if i < len(p) else None, o[i] if i < len(o) else None))

def plt(l, count=False):
    """A PLT stub in a chain or a row: perf names some "@plt" (libc's,
    whose .rela.plt has IRELATIVE entries too), and those of the
    executable's .plt "_init" (the zero-size _init of .init, stretched over
    .plt); we "NAME@plt" as objdump (docs/oracles.md).  Under load a
    sample can land in the program's PLT: both read as "@plt".  (A sample
    in .init itself is _init for both, so it reads as "@plt" too.)"""
    global plts
    # a frame's name: between the start or one of " ;|-" and the end or one
    n = re.subn(r"(?<![^ ;|-])(?:[^ ;|-]*@plt|_init)(?![^ ;|-])", "@plt", l)
    plts += count and n[1] > 0
    return n[0]

def bare(b):
    """A block without the blank lines after it."""
    return b[:len(b) - next(i for i, x in enumerate(reversed(b)) if x.strip())]

def tie_key(b):
    return re.findall(r"[0-9.]+%", b[0])[:1]

bad, rounding, inlined_dots, graphs, plts = [], 0, 0, 0, 0
pairs = []
for case in sys.argv[1:]:
    name, opts = case.split("|", 1)
    opts = opts.split("|")[-1]
    pt, ot = tables(name + ".perf"), tables(name + ".ours")
    if not pt or not ot or len(pt) != len(ot):
        bad.append("%s: %d tables from perf, %d from us" % (name, len(pt), len(ot)))
        continue
    for k, (p_, o_) in enumerate(zip(pt, ot)):
        pairs.append(("%s#%d" % (name, k + 1) if len(pt) > 1 else name, opts, p_, o_))
for name, opts, perf_raw, ours_raw in pairs:
    fixed = []
    for l in perf_raw:
        if l.endswith("[...] (inlined)"):
            inlined_dots += 1
            l = l[: -len(" (inlined)")]
        fixed.append(l)
    ph, pb = blocks([plt(l, True) for l in fixed])
    oh, ob = blocks([plt(l) for l in ours_raw])
    if ph != oh:
        bad.append("%s: column headers differ:\n    %s\n    %s" % (name, ph, oh))
    if len(pb) < 2:
        bad.append("%s: perf's table has %d rows" % (name, len(pb)))
    g = sum(1 for b in pb for l in b[1:] if l.strip())
    if "none" in opts or "--max-stack 0" in opts:
        # --max-stack 0 keeps no callchain entry: no graph, and Children
        # is Self (the tables are compared below)
        if any(l.strip() for b in ob for l in b[1:]):
            bad.append("%s: a graph under a row with %s" % (name, opts))
    elif not g:
        bad.append("%s: perf drew no graph: the comparison proves nothing" % name)
    graphs += g
    if len(pb) != len(ob):
        bad.append("%s: perf has %d rows, ours %d" % (name, len(pb), len(ob)))
        continue
    if "--children" in opts:
        # Same blocks; order perf's but among rows of one Children share.
        if [tie_key(b) for b in pb] != [tie_key(b) for b in ob]:
            bad.append("%s: the rows' Children shares are not in perf's order" % name)
            continue
        # (the table's last block has lost its blank line: none has one)
        pb, ob = [bare(b) for b in pb], [bare(b) for b in ob]
        miss = sorted(set(ob) - set(pb))
        if miss:
            want = [b for b in pb if b[0] == miss[0][0]]
            bad.append(first_diff(name, want[0], miss[0]) if want else
                       "%s: our row %r is not perf's" % (name, miss[0][0]))
        continue
    # A PLT row, its name gone, may sit elsewhere among the rows of its
    # share (perf sorts "@plt" where we sort "NAME@plt"): such a group of
    # tied rows is compared as a set, block by block as the rows below are
    # (shares one unit of the last digit apart are rounding).
    def same(p, o):
        return len(p) == len(o) and all(x == y or near(x, y) for x, y in zip(p, o))
    groups = {}
    for i, b in enumerate(pb):
        groups.setdefault(tie_key(b)[0] if tie_key(b) else "", []).append(i)
    # (The table's last block has no blank line after it, and the rows
    # of the smallest share are often last: which of them is last differs
    # when their order does, so they are compared without blank lines.)
    for key, idx in groups.items():
        if any(pb[i][0].endswith("@plt") for i in idx):
            want = sorted(bare(pb[i]) for i in idx)
            got = sorted(bare(ob[i]) for i in idx if i < len(ob))
            if len(want) == len(got) and all(same(w, g) for w, g in zip(want, got)):
                rounding += sum(1 for w, g in zip(want, got) for x, y in zip(w, g) if x != y)
                for i in idx:
                    ob[i] = pb[i]
    for p, o in zip(pb, ob):
        if p == o:
            continue
        if len(p) == len(o) and all(x == y or near(x, y) for x, y in zip(p, o)):
            rounding += sum(1 for x, y in zip(p, o) if x != y)
            continue
        bad.append(first_diff(name, p, o))
        break
if bad:
    print("FAIL: call graphs differ from perf report's:", file=sys.stderr)
    for b in bad:
        print("  " + b, file=sys.stderr)
    sys.exit(1)
print("%d option sets: tables and graphs (%d graph lines) are perf report's%s%s%s" %
      (len(sys.argv) - 1, graphs,
       "; %d PLT stub line(s) compared without their names" % plts if plts else "",
       "; %d share(s) one unit of the last digit apart" % rounding if rounding else "",
       "; perf's \"[...] (inlined)\" read as \"[...]\" %d time(s)" % inlined_dots
       if inlined_dots else ""))
PY

# ---- The deep chains collapsed: perf script cuts them as perf report
# does (from the sample: its default order), and so must report --folded.
perf script -i deep.data 2>/dev/null | "$py" "$DS_SRC/tests/lib/stackcollapse.py" >deep.folded.perf ||
	fail "perf script | stackcollapse.py on the deep recording"
"$DSOSTORE" report --no-fetch --folded --count period deep.data >deep.folded.ours 2>deep.folded.err ||
	fail "report --folded on the deep recording: $(head -3 deep.folded.err)"
cmp -s deep.folded.perf deep.folded.ours ||
	fail "deep chains: report --folded differs from perf script's: $(diff deep.folded.perf deep.folded.ours | cut -c1-120 | head -4)"
awk -F';' '{ if (NF > n) n = NF } END { exit !(n < 300) }' deep.folded.ours ||
	fail "deep chains: report --folded did not cut them"
for n in 5 300; do
	perf script --max-stack $n -i deep.data 2>/dev/null | "$py" "$DS_SRC/tests/lib/stackcollapse.py" \
		>deep.folded$n.perf || fail "perf script --max-stack $n | stackcollapse.py"
	"$DSOSTORE" report --no-fetch --folded --count period --max-stack $n deep.data \
		>deep.folded$n.ours 2>/dev/null || fail "report --folded --max-stack $n: exit $?"
	cmp -s deep.folded$n.perf deep.folded$n.ours ||
		fail "report --folded --max-stack $n differs from perf script's: $(diff deep.folded$n.perf deep.folded$n.ours | cut -c1-120 | head -4)"
done

# ---- --json: the trees, pruned as printed; at threshold 0 they sum.
for mode in no-children children; do
	rc=0
	"$DSOSTORE" report --no-fetch --sort dso,sym --$mode -g graph,0 --json cg.data \
		>"json0.$mode" 2>"json0.$mode.err" || rc=$?
	[ "$rc" = 0 ] || fail "report --$mode --json: exit $rc: $(head -3 "json0.$mode.err")"
done
"$DSOSTORE" report --no-fetch --sort dso,sym --no-children --json cg.data >json.default 2>/dev/null ||
	fail "report --json: exit $?"
perf report -i cg.data --stdio --sort dso,sym --no-children -g folded,0 >folded0.perf 2>/dev/null ||
	fail "perf report -g folded,0 failed"
"$py" - json0.no-children json0.children json.default folded0.perf <<'PY' || fails=$((fails + 1))
import json, re, sys

bad = []
docs = {}
for f in sys.argv[1:4]:
    try:
        docs[f] = json.load(open(f))
    except ValueError as e:
        bad.append("%s: not JSON: %s" % (f, e))
if bad:
    print("FAIL: --json:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)

def walk(n, path, out, total, where):
    kids = n["children"]
    if n["period"] != n["self_period"] + sum(k["period"] for k in kids):
        bad.append("%s: node %s: period %d != self %d + children %d" %
                   (where, ";".join(path + [n["name"]]), n["period"], n["self_period"],
                    sum(k["period"] for k in kids)))
    if abs(n["share"] - 100.0 * n["period"] / total) > 1e-4:
        bad.append("%s: node %s: share %f" % (where, n["name"], n["share"]))
    if n["self_period"]:
        out.append((";".join(path + [n["name"]]), n["self_period"]))
    for k in kids:
        walk(k, path + [n["name"]], out, total, where)

nodes = 0
for f, mode in ((sys.argv[1], "no-children"), (sys.argv[2], "children")):
    ev = docs[f]["events"][0]
    for e in ev["entries"]:
        want = e["children_period"] if mode == "children" else e["period"]
        roots = e.get("callchain")
        if roots is None:
            bad.append("%s: row %s has no callchain" % (mode, e.get("symbol")))
            continue
        got = sum(r["period"] for r in roots)
        if got != want:
            bad.append("%s: row %s: its tree sums to %d, the row's period is %d" %
                       (mode, e.get("symbol"), got, want))
        paths = []
        for r in roots:
            walk(r, [], paths, ev["event_count"], mode)
        nodes += len(paths)

# The tree's paths and self shares are perf's folded lines (threshold 0).
# A PLT stub is perf's "@plt" or _init, our NAME@plt: "@plt" on both
# sides, as in the tables' comparison above.
def plt(l):
    return re.sub(r"(?<![^ ;|-])(?:[^ ;|-]*@plt|_init)(?![^ ;|-])", "@plt", l)
perf_rows, cur = {}, None
for line in open(sys.argv[4], errors="replace"):
    m = re.match(r"^ +[0-9.]+%\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$", line)
    if m:
        cur = (m.group(1), plt(m.group(3)))
        perf_rows.setdefault(cur, [])
        continue
    m = re.match(r"^([0-9.]+)% (.+)$", line.rstrip("\n"))
    if m and cur:
        perf_rows[cur].append((plt(m.group(2)), m.group(1)))
ev = docs[sys.argv[1]]["events"][0]
ours_rows = {}
for e in ev["entries"]:
    sym = e["symbol"] if e["symbol"] is not None else "0x%016x" % int(e["ip"], 16)
    paths = []
    for r in e["callchain"]:
        walk(r, [], paths, ev["event_count"], "folded")
    ours_rows.setdefault((e["dso"], plt(sym)), []).extend(
        (plt(p), "%.2f" % (100.0 * s / ev["event_count"])) for p, s in paths)
compared = 0
for key, got in ours_rows.items():
    if key not in perf_rows:
        bad.append("row %s %s: not in perf's folded report" % key)
        continue
    got, want = sorted(got), sorted(perf_rows[key])
    compared += len(want)
    if got != want:
        bad.append("row %s %s: JSON paths %s, perf's folded %s" % (key[0], key[1], got[:3], want[:3]))
# The default threshold (0.5% of the event) prunes the JSON as the text.
ev = docs[sys.argv[3]]["events"][0]
limit = int(ev["event_count"] * 0.005)
def low(n):
    return (n["period"] < limit) + sum(low(k) for k in n["children"])
pruned = sum(low(r) for e in ev["entries"] for r in e.get("callchain", []))
if pruned:
    bad.append("default threshold: %d JSON nodes under 0.5%% of the event" % pruned)
if not compared:
    bad.append("perf's folded report had no chains to compare")
if bad:
    print("FAIL: --json:\n  " + "\n  ".join(bad[:12]), file=sys.stderr)
    sys.exit(1)
print("--json: trees sum to their rows; %d paths are perf's folded chains" % compared)
PY

# Options perf has that we refuse rather than ignore.
rc=0
"$DSOSTORE" report --no-fetch -g graph,address cg.data >/dev/null 2>addr.err || rc=$?
[ "$rc" = 2 ] || fail "-g graph,address: exit $rc, expected 2"

tl_finish report_callgraph
