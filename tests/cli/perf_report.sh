#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dsostore report against perf report itself.  A workload whose noinline
# functions burn most of the CPU (a main binary and a shared library, -O2
# -g, one always_inline helper) is recorded with perf record -e cpu-clock;
# then:
#  - `report --sort dso,sym` must have every row of `perf report --stdio
#    --sort dso,sym` with at least 1% (and no other such row), with the same
#    DSO, symbol and share;
#  - the same for `--sort sym,srcline`;
#  - `--inline`: the helper's samples show the chain the source says
#    (helper inlined at its body's line, called from the marked line), with
#    the share perf gives that source line;
#  - `--json` is valid JSON and says what the table says;
#  - a recording of stripped copies: with --no-fetch the main binary's
#    functions are unnamed; with the debuginfo served by the real elfutils
#    debuginfod (in a network namespace with only loopback; the test server
#    dsserver when no namespace can be made) the report names them, and its
#    rows are perf report's of the same recording, perf given the debuginfo
#    through its build-id cache;
#  - a missing file and a file that is no recording: exit 1, one message.
#
# Tolerance of the shares: 0.01 percentage points, one unit of the last
# digit printed.  Both tools divide the same sums of the same periods, so
# they should print the same digits; the unit allows for a different
# rounding of a share that lands on a half.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
export PATH=$PATH:/usr/sbin:/sbin

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc objcopy strip readelf python3

# The real debuginfod (Debian's 0.188) listens on every address: it only
# runs in a network namespace of our own, which as root is a plain
# `unshare -n`.  Otherwise the test server, which binds 127.0.0.1.
server=dsserver
if command -v debuginfod >/dev/null && command -v unshare >/dev/null &&
	tl_netns_reexec --root-only "$0" "$@"; then
	server=debuginfod
fi

tl_tmpdir dsperfreport
cd "$tmp" || exit 2
# perf reads and writes $HOME/.debug and ~/.perfconfig: ours, not the
# user's.  -N below also keeps perf record from writing its cache.
export HOME=$tmp/home
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
export DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
tl_sanitizer_exitcodes

# python3 may be a slow shim (pyenv: 1.5 s a start): its interpreter, once.
py=$(python3 -c 'import sys; print(sys.executable)') || py=python3

# ----------------------------------------------------------- workload
# Loop counts 50/30/20 (the shares follow only roughly: the loops differ).
# Short file names: perf cuts its Source:Line column at 11 characters.
cat >libw.c <<'EOF'
__attribute__((noinline, noclone)) unsigned long lib_burn(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}
EOF
cat >w.c <<'EOF'
#include <stdio.h>

unsigned long lib_burn(unsigned long n, unsigned long x);

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	x ^= x << 13; x ^= x >> 7; x ^= x << 17; /* MIX_BODY */
	return x; /* MIX_BODY */
}

__attribute__((noinline, noclone)) unsigned long burn_a(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++) {
		x = mix(x); /* MIX_CALL */
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline, noclone)) unsigned long burn_b(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++) {
		x = x * 31 + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* gcc -O2 clones it for the constant k: the ELF symbol (what perf shows)
 * is burn_c.constprop.0, the DWARF name burn_c. */
static __attribute__((noinline)) unsigned long burn_c(unsigned long n, unsigned long x,
						      unsigned long k)
{
	for (unsigned long i = 0; i < n; i++) {
		x = x * k + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

int main(void)
{
	unsigned long x = 1, n = 10000000;

	x = burn_c(n, x, 7);
	x = burn_c(n, x, 7);
	x = burn_a(5 * n, x);
	x = burn_b(3 * n * 2, x);
	x = lib_burn(2 * n, x);
	printf("%lx\n", x);
	return 0;
}
EOF
mix_body=$(grep -n 'MIX_BODY' w.c | cut -d: -f1 | tr '\n' ' ')
mix_call=$(grep -n 'MIX_CALL' w.c | cut -d: -f1)
# Unstripped in $tmp; stripped copies (same build IDs) in $tmp/s, their
# debuginfo in $tmp/srv only.
mkdir -p s srv
if ! gcc -O2 -g -fno-omit-frame-pointer -fPIC -shared -o libw.so libw.c ||
	! gcc -O2 -g -fno-omit-frame-pointer -o w w.c -L. -lw -Wl,-rpath,'$ORIGIN'; then
	echo "FAIL: cannot build the workload" >&2
	exit 1
fi
for f in w libw.so; do
	objcopy --only-keep-debug "$f" "srv/$f.debug" && strip -o "s/$f" "$f" ||
		fail "cannot split the debuginfo of $f"
done

# record NAME PROGRAM
record() {
	if ! perf record -N -e cpu-clock -F 4000 -o "$1.data" -- "$2" >"$1.rec" 2>&1; then
		fail "perf record of $2 failed: $(tail -3 "$1.rec")"
		return 1
	fi
}

# Runs the CLI: $out, $err, $rc are its stdout, stderr file and status.
run() {
	rc=0
	"$DSOSTORE" report "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	out=$tmp/out
	err=$tmp/err
	if grep -q -E 'Sanitizer|runtime error' "$err"; then
		fail "report $*: sanitizer report:"
		head -20 "$err" >&2
	fi
}

# The comparison, one python per call: rows of perf's table and ours.
#   compare WHAT KEYS PERF-FILE OURS-FILE
# KEYS: dso,sym or sym,srcline.  Every perf row of >= 1% must be one of
# ours with the same keys and a share within 0.01; no row of ours of >= 1%
# may be missing from perf's.  perf cuts Source:Line to its header's width
# (11): a cut srcline matches ours when it is a prefix of it.
compare() {
	"$py" - "$@" <<'PY' || fails=$((fails + 1))
import re, sys

what, keys, perf_file, ours_file = sys.argv[1:5]
# 0.01 as a float: abs(1.00 - 0.99) is 0.010000000000000009.
TOL, MIN = 0.0101, 1.0

def rows(path):
    out = []
    for line in open(path, errors="replace"):
        if line.startswith("#") or not line.strip():
            continue
        if keys == "dso,sym":
            m = re.match(r"^\s+([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$", line)
            if m:
                out.append((float(m.group(1)), (m.group(2), m.group(3), m.group(4))))
        elif keys == "children":
            # perf's --children: Children, Self, dso, sym (Self is in the key)
            m = re.match(r"^\s+([0-9.]+)%\s+([0-9.]+%)\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$", line)
            if m:
                out.append((float(m.group(1)), m.group(2, 3, 4, 5)))
        elif keys == "comm,dso,sym":
            m = re.match(r"^\s+([0-9.]+)%\s+(\S+)\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$", line)
            if m:
                out.append((float(m.group(1)), m.group(2, 3, 4, 5)))
        else:
            m = re.match(r"^\s+([0-9.]+)%\s+\[(.)\]\s+(.+?)\s+(\S+)\s*$", line)
            if m:
                out.append((float(m.group(1)), (m.group(2), m.group(3), m.group(4))))
    return out

perf, ours = rows(perf_file), rows(ours_file)
bad = []
if not perf:
    bad.append("perf's table has no rows")
if not ours:
    bad.append("our table has no rows")

def same(pk, ok):
    if keys == "sym,srcline" and len(pk[2]) == 11 and pk[2] != ok[2]:
        return pk[:2] == ok[:2] and ok[2].startswith(pk[2])
    return pk == ok

used = set()
for share, key in perf:
    if share < MIN:
        continue
    hit = [i for i, (s, k) in enumerate(ours) if same(key, k) and i not in used]
    if not hit:
        bad.append("perf's row %.2f%% %s is not in ours" % (share, " ".join(key)))
        continue
    used.add(hit[0])
    if abs(ours[hit[0]][0] - share) > TOL:
        bad.append("%s: perf %.2f%%, ours %.2f%%" % (" ".join(key), share, ours[hit[0]][0]))
# A row of ours of >= 1% whose twin perf prints under it (0.995 rounds
# either way) is compared with that twin, not missed.
for i, (share, key) in enumerate(ours):
    if share >= MIN and i not in used:
        twin = [s for s, k in perf if same(k, key) and s < MIN]
        if not twin:
            bad.append("our row %.2f%% %s is not in perf's" % (share, " ".join(key)))
        elif abs(twin[0] - share) > TOL:
            bad.append("%s: perf %.2f%%, ours %.2f%%" % (" ".join(key), twin[0], share))
if bad:
    print("FAIL: %s (--sort %s):" % (what, keys), file=sys.stderr)
    for b in bad:
        print("  " + b, file=sys.stderr)
    sys.exit(1)
print("%s (--sort %s): %d rows of >= 1%% agree with perf report" %
      (what, keys, len([1 for s, k in perf if s >= MIN])))
PY
}

perf_report() { # file keys
	perf report -i "$1" --stdio --sort "$2" >"$1.$2.perf" 2>"$1.perferr" ||
		fail "perf report -i $1 --sort $2 failed: $(head -3 "$1.perferr")"
}

# ----------------------------------------------- unstripped recording
if ! perf record -N -e cpu-clock -F 4000 -o plain.data -- "$tmp/w" >plain.rec 2>&1; then
	echo "SKIP: perf record -e cpu-clock is not permitted here:" >&2
	sed 's/^/  /' plain.rec >&2
	exit 77
fi
perf_report plain.data dso,sym
run plain.data --no-fetch --sort dso,sym
[ "$rc" -eq 0 ] || fail "report --sort dso,sym: exit $rc: $(head -3 "$err")"
cp "$out" plain.ours.dsosym
compare "unstripped" dso,sym plain.data.dso,sym.perf plain.ours.dsosym
# The comparison above must have been about the workload.
# burn_c is named as perf names it: its ELF symbol, the clone's.
for f in "w burn_a" "w burn_b" "libw.so lib_burn" "w burn_c.constprop.0"; do
	grep -q -E "%  +${f% *} +\[\.\] ${f#* }\$" plain.ours.dsosym ||
		fail "report has no row for ${f#* } in ${f% *}: $(head -20 plain.ours.dsosym)"
done
# The default sort is perf's (comm,dso,sym), -i is perf's, --top cuts the
# rows, -n adds perf's Samples column; the header has the sample count and
# the event count (the sum of the periods) perf prints.
run -i plain.data --no-fetch -n --top 2
perf report -i plain.data --stdio -n >plain.perf.n 2>/dev/null
n=$(grep -c -v -e '^#' -e '^$' "$out")
[ "$n" -eq 2 ] || fail "--top 2 printed $n rows"
got=$(awk '!/^#/ && NF {print $1, $2, $3, $4, $5, $6}' "$out")
want=$(grep -v -e '^#' -e '^$' plain.perf.n | head -2 | awk '{print $1, $2, $3, $4, $5, $6}')
[ "$got" = "$want" ] ||
	fail "-i, -n, --top 2 without --sort: not the first rows of perf's default: $got (perf: $want)"
for h in '# Samples: [0-9]+[KMG]?' '# Event count \(approx\.\): [0-9]+'; do
	want=$(grep -o -E "^$h" plain.perf.n | head -1)
	got=$(grep -o -E "^$h" "$out" | head -1)
	[ -n "$want" ] && [ "$want" = "$got" ] || fail "header: perf '$want', ours '$got'"
done
want=$(awk '$6 == "burn_a" {print $2}' plain.perf.n)
got=$(awk '$6 == "burn_a" {print $2}' "$out")
[ -n "$want" ] && [ "$want" = "$got" ] || fail "-n: burn_a has $got samples, perf says $want"

# ---- sym,srcline
perf_report plain.data sym,srcline
run plain.data --no-fetch --sort sym,srcline
[ "$rc" -eq 0 ] || fail "report --sort sym,srcline: exit $rc: $(head -3 "$err")"
cp "$out" plain.ours.srcline
compare "unstripped" sym,srcline plain.data.sym,srcline.perf plain.ours.srcline

# perf's default sort starts with the thread's name (COMM records).
perf_report plain.data comm,dso,sym
run plain.data --no-fetch --sort comm,dso,sym
[ "$rc" -eq 0 ] || fail "report --sort comm,dso,sym: exit $rc: $(head -3 "$err")"
cp "$out" plain.ours.comm
compare "unstripped" comm,dso,sym plain.data.comm,dso,sym.perf plain.ours.comm
grep -q -E "%  +w +w +\[\.\] burn_a\$" plain.ours.comm ||
	fail "report --sort comm,dso,sym: no 'w w [.] burn_a' row: $(head -14 plain.ours.comm)"

# Callchains (-g): perf report's default is --children: each row also gets
# the samples whose callchain passes through it, callers without samples
# get rows of their own.
if perf record -N -g -e cpu-clock -F 4000 -o cc.data -- "$tmp/w" >cc.rec 2>&1; then
	perf report -i cc.data --stdio --sort dso,sym -g none >cc.perf 2>cc.perferr ||
		fail "perf report -i cc.data failed: $(head -3 cc.perferr)"
	grep -q '^# Children' cc.perf || fail "perf report of a -g recording has no Children column"
	run cc.data --no-fetch --sort dso,sym
	[ "$rc" -eq 0 ] || fail "report of the -g recording: exit $rc: $(head -3 "$err")"
	cp "$out" cc.ours
	grep -q '^# Children      Self' cc.ours || fail "report of a -g recording: no Children column"
	compare "callchains" children cc.perf cc.ours
	# Callers (libc's __libc_start_call_main, main when its frame is
	# found): rows whose Children is above their Self.  How much of the
	# time passes through them is the sampler's and unwinder's luck;
	# which rows are callers, and their shares, perf's table of the same
	# recording says: ours must have each of perf's, both columns.
	"$py" - cc.perf cc.ours <<'PY' || fails=$((fails + 1))
import re, sys
def rows(path):
    out = {}
    for line in open(path, errors="replace"):
        m = re.match(r"^\s+([0-9.]+)%\s+([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$", line)
        if m and not line.startswith("#"):
            out[m.group(3, 4, 5)] = (float(m.group(1)), float(m.group(2)))
    return out
# Known: perf 6.1 names some stubs of libc's .plt "@plt", others by another
# stub's name (in made-up recordings: mempcpy's as __tls_get_addr@plt), and
# a program's "_init" (.init's, stretched over .plt); we say NAME@plt.  Whether a
# callchain passes through one is the sampler's luck: on both sides a
# DSO's stubs (and _init, alike on both) are one row "<plt>".
def unplt(rs):
    out = {}
    for (dso, kind, sym), (c, s) in rs.items():
        k = (dso, kind, "<plt>" if sym.endswith("@plt") or sym == "_init" else sym)
        o = out.get(k, (0.0, 0.0))
        out[k] = (o[0] + c, o[1] + s)
    return out
perf, ours = unplt(rows(sys.argv[1])), unplt(rows(sys.argv[2]))
callers = [k for k, (c, s) in perf.items() if c > s]
bad = [] if callers else ["perf's table has no caller row: the case proves nothing"]
for a, b, who in ((perf, ours, "perf's"), (ours, perf, "our")):
    for k, (c, s) in a.items():
        o = b.get(k)
        if c > s and (not o or abs(o[0] - c) > 0.0101 or abs(o[1] - s) > 0.0101):
            bad.append("%s caller %s %.2f%% %.2f%%, the other's %s" % (who, " ".join(k), c, s, o))
if bad:
    print("FAIL: --children callers:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
print("--children: %d caller rows, as perf's" % len(callers))
PY
	run cc.data --no-fetch --no-children --sort dso,sym
	grep -q '^# Overhead' "$out" || fail "--no-children: $(head -12 "$out")"
else
	fail "perf record -g failed: $(tail -3 cc.rec)"
fi

# KASLR: the same kernel recorded in another boot, where _text was 16 MiB
# lower (a recording made by tests/gen/perfgen.py, its kernel build ID the
# running kernel's).  A sample at what was then schedule's address + 4 must
# be named schedule (by /proc/kallsyms, the oracle), as perf names it, not
# after whatever sits at that address in this boot.
if "$py" - "$DS_SRC/tests/gen" kaslr.data 2>kaslr.err <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
from perfgen import Recording
notes = open("/sys/kernel/notes", "rb").read()
bid, off = None, 0
while off + 12 <= len(notes):
    namesz, descsz, ntype = struct.unpack_from("<III", notes, off)
    name = notes[off + 12:off + 12 + namesz]
    desc_at = off + 12 + (namesz + 3) // 4 * 4
    if ntype == 3 and name.rstrip(b"\0") == b"GNU":
        bid = notes[desc_at:desc_at + descsz]
    off = desc_at + (descsz + 3) // 4 * 4
syms = {}
for line in open("/proc/kallsyms"):
    a, t, n = line.split()[:3]
    syms.setdefault(n, int(a, 16))
text, sched = syms.get("_text", 0), syms.get("schedule", 0)
if not bid or not text or not sched:
    sys.exit(3)  # no build ID note, or addresses hidden (kptr_restrict)
shift = 16 << 20
r = Recording()
r.build_id(bid, "[kernel.kallsyms]", cpumode=1)
r.comm(100, 100, "k", 1)
r.mmap(-1, 0, text - shift, 0x8000000, text - shift, "[kernel.kallsyms]_text", 1, misc=1)
for t in range(2, 12):
    r.sample(100, 100, sched - shift + 4, t, misc=1)
r.write(sys.argv[2])
PY
then
	perf report -i kaslr.data --stdio --sort dso,sym >kaslr.perf 2>kaslr.perferr
	run kaslr.data --no-fetch --sort dso,sym
	grep -q -E '100\.00%  +\[kernel\.kallsyms\] +\[k\] schedule$' "$out" ||
		fail "KASLR: the kernel sample is not named schedule: $(grep % "$out")"
	grep -q -E '\[k\] schedule$' kaslr.perf ||
		echo "note: perf report names it otherwise: $(grep % kaslr.perf | head -2)" >&2
elif [ $? -eq 3 ]; then
	echo "KASLR: skipped (no kernel build ID note, or kallsyms addresses hidden)"
else
	fail "KASLR recording: $(cat kaslr.err)"
fi

# Pipe mode and -z: no build-ID table, no header; the same rows as perf.
for mode in pipe z; do
	if [ $mode = pipe ]; then
		perf record -N -e cpu-clock -F 4000 -o - -- "$tmp/w" >$mode.data 2>$mode.rec
	else
		perf record -N -z -e cpu-clock -F 4000 -o $mode.data -- "$tmp/w" >$mode.rec 2>&1
	fi || {
		fail "perf record ($mode) failed: $(tail -3 $mode.rec)"
		continue
	}
	perf_report $mode.data dso,sym
	run $mode.data --no-fetch --sort dso,sym
	[ "$rc" -eq 0 ] || fail "report of the $mode recording: exit $rc: $(head -3 "$err")"
	cp "$out" $mode.ours.dsosym
	compare "$mode" dso,sym $mode.data.dso,sym.perf $mode.ours.dsosym
done

# ---- --inline: burn_a's samples in mix() show the chain the source
# gives: mix inlined, at a line of its body, called from MIX_CALL; the
# share of each chain is what perf gives burn_a at that source line.
run plain.data --no-fetch --inline --json
[ "$rc" -eq 0 ] || fail "report --inline --json: exit $rc: $(head -3 "$err")"
cp "$out" plain.inline.json
"$py" - plain.inline.json plain.data.sym,srcline.perf "$mix_body" "$mix_call" <<'PY' ||
import json, re, sys

doc = json.load(open(sys.argv[1]))
body = set(int(x) for x in sys.argv[3].split())
call = int(sys.argv[4])
perf = {}
for line in open(sys.argv[2]):
    m = re.match(r"^\s+([0-9.]+)%\s+\[\.\]\s+burn_a\s+w\.c:(\d+)\s*$", line)
    if m:
        perf[int(m.group(2))] = float(m.group(1))
bad = []
rows = [e for e in doc["events"][0]["entries"] if e.get("symbol") == "burn_a"]
if len(rows) != 1:
    bad.append("%d burn_a rows" % len(rows))
else:
    chains = rows[0]["inlines"]
    if not chains:
        bad.append("burn_a has no inline chain")
    total = 0
    for c in chains:
        f = c["frames"]
        got = [(x["function"], x["file"].rsplit("/", 1)[-1], x["line"], x["inlined"]) for x in f]
        if len(f) != 2 or got[0][:2] != ("mix", "w.c") or got[0][2] not in body or \
           not got[0][3] or got[1] != ("burn_a", "w.c", call, False):
            bad.append("chain %s; want mix (inlined) at w.c:%s, then burn_a at w.c:%d" %
                       (got, sorted(body), call))
            continue
        total += c["overhead"]
        want = perf.get(got[0][2])
        if want is None or abs(round(c["overhead"], 2) - want) > 0.01:
            bad.append("chain at w.c:%d: %.2f%%, perf's burn_a w.c:%d row: %s" %
                       (got[0][2], c["overhead"], got[0][2], want))
    if total > rows[0]["overhead"] + 1e-6:
        bad.append("the chains' shares (%.4f) exceed the row's (%.4f)" % (total, rows[0]["overhead"]))
for e in doc["events"][0]["entries"]:
    if e.get("symbol") in ("burn_b", "lib_burn") and e["inlines"]:
        bad.append("%s has inline chains: %s" % (e["symbol"], e["inlines"]))
if bad:
    print("FAIL: --inline:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
print("--inline: burn_a's chains are mix (inlined) <- burn_a:%d, shares as perf's" % call)
PY
	fails=$((fails + 1))
# The text form of the same: under burn_a, "SHARE  mix (inlined)
# w.c:LINE", then "burn_a w.c:CALL".
run plain.data --no-fetch --inline
awk -v call="$mix_call" '
	/\[\.\] burn_a$/ {inrow = 1; next}
	inrow && /^ +[0-9.]+%  mix \(inlined\) w\.c:[0-9]+$/ {want = 1; next}
	inrow && want && $0 ~ "^ +burn_a w\\.c:" call "$" {ok = 1; want = 0; next}
	{inrow = 0}
	END {exit !ok}' "$out" ||
	fail "--inline text: no chain under burn_a: $(grep -A3 'burn_a$' "$out" | head -8)"

# ---- --json (that of --inline above): valid, and the rows of the table.
if ! "$py" -m json.tool plain.inline.json >/dev/null 2>json.err; then
	fail "--json is not valid JSON: $(head -3 json.err)"
else
	"$py" - plain.inline.json plain.ours.dsosym <<'PY' || fails=$((fails + 1))
import json, re, sys

doc = json.load(open(sys.argv[1]))
table = []
for line in open(sys.argv[2]):
    m = re.match(r"^\s+([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$", line)
    if m:
        table.append((m.group(1), m.group(2), m.group(3), m.group(4)))
ev = doc["events"]
got = []
for e in ev[0]["entries"]:
    sym = e["symbol"] if e["symbol"] is not None else "0x%016x" % int(e["ip"], 16)
    got.append(("%.2f" % e["overhead"], e["dso"], e["level"], sym))
bad = []
if len(ev) != 1:
    bad.append("%d events" % len(ev))
if got != table:
    bad.append("entries differ from the table: %s vs %s" % (got[:4], table[:4]))
if ev[0]["samples"] != sum(e["samples"] for e in ev[0]["entries"]):
    bad.append("event samples %d != sum of the entries'" % ev[0]["samples"])
if ev[0]["event_count"] != sum(e["period"] for e in ev[0]["entries"]):
    bad.append("event_count != sum of the entries' periods")
for e in ev[0]["entries"]:
    if e["dso"] in ("w", "libw.so") and not re.fullmatch(r"[0-9a-f]{40}", e["build_id"] or ""):
        bad.append("%s: build_id %r" % (e["dso"], e["build_id"]))
if bad:
    print("FAIL: --json:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
print("--json: valid, %d entries, the table's" % len(got))
PY
fi
for f in w libw.so; do
	want=$(readelf -n "$f" | awk '/Build ID:/ {print $3; exit}')
	grep -q "\"build_id\":\"$want\"" plain.inline.json || fail "--json: no build_id $want of $f"
done

# ------------------------------------------------- stripped recording
# Without debuginfo the main binary's functions have no names (they are
# in no .dynsym); served by debuginfod, they do, and the rows are perf's
# with the debuginfo in its build-id cache.
start_server() {
	case $server in
	debuginfod)
		port=8002
		tl_start_debuginfod $port "$tmp/srv" || {
			fail "debuginfod did not get ready"
			return 1
		}
		;;
	dsserver)
		if [ -z "${DSSERVER:-}" ]; then
			echo "no network namespace and no \$DSSERVER: stripped part skipped" >&2
			return 1
		fi
		if ! tl_start_dsserver port server --max-runtime 120 "$tmp/srv" ||
			! tl_wait_ready "$port" "${pids[-1]}"; then
			fail "dsserver did not get ready: $(tail -5 "$tmp/server.err")"
			return 1
		fi
		;;
	esac
	echo "$server on 127.0.0.1:$port"
}

# perf's build-id cache as perf 6.1 lays it out (REFERENCES.md): a debug
# file under the binary's path and build ID, and the .build-id link.
perf_cache_add() { # binary-path debug-file
	local hex dir
	hex=$(readelf -n "$1" | awk '/Build ID:/ {print $3; exit}')
	dir=$HOME/.debug$1/$hex
	mkdir -p "$dir" "$HOME/.debug/.build-id/${hex:0:2}"
	cp "$2" "$dir/debug"
	ln -sfn "../..$1/$hex" "$HOME/.debug/.build-id/${hex:0:2}/${hex:2}"
}

if command -v curl >/dev/null && record stripped "$tmp/s/w"; then
	run stripped.data --no-fetch --perf-buildid-dir ""
	[ "$rc" -eq 0 ] || fail "stripped, --no-fetch: exit $rc: $(head -3 "$err")"
	! grep -q -E '\] burn_(a|b)$' "$out" ||
		fail "stripped, --no-fetch: burn_a/burn_b named without debuginfo (the test proves nothing)"
	grep -q -E '  w +\[\.\] 0x[0-9a-f]{16}$' "$out" ||
		fail "stripped, --no-fetch: no unnamed address of w: $(head -14 "$out" | tail -4)"
	if start_server; then
		export DEBUGINFOD_URLS=http://127.0.0.1:$port
		run stripped.data --sort dso,sym --perf-buildid-dir ""
		[ "$rc" -eq 0 ] || fail "stripped, fetched: exit $rc: $(head -3 "$err")"
		cp "$out" stripped.ours.dsosym
		for f in w libw.so; do
			hex=$(readelf -n "$f" | awk '/Build ID:/ {print $3; exit}')
			cmp -s "srv/$f.debug" "$DEBUGINFOD_CACHE_PATH/$hex/debuginfo" ||
				fail "stripped: the debuginfo of $f was not fetched into the cache"
		done
		export DEBUGINFOD_URLS=
		perf_cache_add "$tmp/s/w" srv/w.debug
		perf_cache_add "$tmp/s/libw.so" srv/libw.so.debug
		perf_report stripped.data dso,sym
		grep -q -E '\] burn_a *$' stripped.data.dso,sym.perf ||
			fail "perf does not name burn_a with its build-id cache: the oracle is broken"
		compare "stripped, fetched" dso,sym stripped.data.dso,sym.perf stripped.ours.dsosym
		grep -q -E '%  +w +\[\.\] burn_a$' stripped.ours.dsosym ||
			fail "stripped, fetched: burn_a not named: $(head -14 stripped.ours.dsosym | tail -4)"
		# The fetched debuginfo stays in the cache: no server needed now.
		run stripped.data --no-fetch --perf-buildid-dir "" --sort sym,srcline
		perf_report stripped.data sym,srcline
		compare "stripped, from the cache" sym,srcline stripped.data.sym,srcline.perf "$out"
	fi
fi

# ----------------------------------------------------------- errors
for f in "$tmp/missing.data" /etc/passwd; do
	run "$f" --no-fetch
	[ "$rc" -eq 1 ] || fail "$f: exit $rc, expected 1"
	[ "$(wc -l <"$err")" -eq 1 ] && grep -q "^dsostore: $f: " "$err" ||
		fail "$f: expected one 'dsostore: $f: ...' line, got: $(head -3 "$err")"
	[ ! -s "$out" ] || fail "$f: printed a report"
done
run plain.data --sort dso,bogus
[ "$rc" -eq 2 ] || fail "--sort dso,bogus: exit $rc, expected 2"
# Options of --folded are refused without it, not ignored.
for o in "--count period" --comm-pid "--event cpu-clock" "-o x.folded"; do
	# shellcheck disable=SC2086 # an option and its argument
	run plain.data --no-fetch $o
	[ "$rc" -eq 2 ] && grep -q -- "${o%% *} is an option of --folded" "$err" ||
		fail "report $o without --folded: exit $rc: $(head -3 "$err")"
done
run plain.data --no-fetch --folded --pprof x.pb.gz
[ "$rc" -eq 2 ] || fail "--folded --pprof: exit $rc, expected 2"
run plain.data --no-fetch --pprof x.pb.gz --max-stack 3
[ "$rc" -eq 2 ] && grep -q "no --max-stack" "$err" || fail "--pprof --max-stack: exit $rc: $(head -3 "$err")"
run plain.data --no-fetch --max-stack -1
[ "$rc" -eq 2 ] || fail "--max-stack -1: exit $rc, expected 2"
# -g on a recording without callchains: perf refuses it; we print the
# table (the same as without -g) and say why it has no graph.
run plain.data --no-fetch -g
[ "$rc" -eq 0 ] || fail "-g without callchains: exit $rc: $(head -3 "$err")"
grep -q 'has no callchains' "$err" || fail "-g without callchains: no warning: $(head -3 "$err")"
grep -v '^#' "$out" >g.rows
run plain.data --no-fetch
grep -v '^#' "$out" | cmp -s - g.rows || fail "-g without callchains: other rows"

tl_finish perf_report
