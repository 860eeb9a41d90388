#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dsostore annotate: a program made here (a hot loop over a few lines of
# its own file and an always_inline helper from a header, plus a colder
# function) is recorded with perf record -e cpu-clock; then:
#  - the samples of each line of hot() are those the independent tools
#    count: perf script -F ip,sym,srcline (perf's own addr2line of each
#    sample, the innermost frame's file:line) and binutils addr2line -i on
#    each sampled address (perf script's sym+off over nm's address of the
#    symbol), exactly, per (file, line); the helper's lines count in
#    helper.h, under hot;
#  - the text of every line is that line of the file (sed -n Np), in the
#    JSON and in the listing, which marks the hottest line and shows the
#    context lines around;
#  - the choice of functions: by default the hottest first, --top,
#    --percent-limit, a SYMBOL named;
#  - without the source anywhere (moved away, no server): file:line and
#    the same counts;
#  - the source behind the real elfutils debuginfod (it serves the files
#    the DWARF of the binaries it indexed names, from their comp_dir; so
#    the client runs in a mount namespace of its own with the source and
#    binary directories covered): the text of each file comes from the
#    server, one request per file (the server's /metrics), into the
#    debuginfod cache, and a second run reads it from there with no
#    request.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
export PATH=$PATH:/usr/sbin:/sbin

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc objcopy strip nm addr2line eu-readelf python3

# The real debuginfod (Debian's 0.188) listens on every address: it only
# runs in a network namespace of our own, which as root is a plain
# `unshare -n` (perf record works there; in a user namespace it may not).
netns=0
if command -v debuginfod >/dev/null && command -v unshare >/dev/null &&
	tl_netns_reexec --root-only "$0" "$@"; then
	netns=1
fi

tl_tmpdir dsannotate
cd "$tmp" || exit 2
export HOME=$tmp/home
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
export DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
tl_sanitizer_exitcodes
py=$(python3 -c 'import sys; print(sys.executable)') || py=python3

# ----------------------------------------------------------- workload
# Compiled from its directory by relative names: the DWARF names the
# files relative to DW_AT_comp_dir, which the reader must join.
mkdir -p src bin srv
cat >src/helper.h <<'EOF'
static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}
EOF
cat >src/prog.c <<'EOF'
#include <stdio.h>
#include "helper.h"

__attribute__((noinline, noclone)) unsigned long hot(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		__asm__ volatile("" : "+r"(x));
		x = mix(x);
		__asm__ volatile("" : "+r"(x));
		if (x % 7 == 3)
			x += i / 3;
	}
	return x;
}

__attribute__((noinline, noclone)) unsigned long cold(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++) {
		x = x * 31 + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

int main(void)
{
	unsigned long x = hot(60000000, 1);

	printf("%lx\n", cold(40000000, x));
	return 0;
}
EOF
# Text a server may send too: the hottest lines get a comment with an
# escape sequence, bytes that are not UTF-8, a NUL and a UTF-8 letter, a
# CSI as C1 (U+009B, and the raw byte 0x9b), a right-to-left override
# (U+202E), and a CR before the newline.  (The listing must not pass a
# control or bidi character to a terminal but show each escaped, the JSON
# must stay valid, the text otherwise be the file's.)
# Every line of hot()'s loop gets the comment, the asm statements' and
# mix()'s call too (gcc 12 gives line 10 the code of x % 7): which of them
# the sampler hits is its luck, and one with samples must have it.
"$py" - src/prog.c <<'PY' || fail "cannot write the odd bytes into prog.c"
import sys
b = open(sys.argv[1], "rb").read()
odd = b" /* \x1b[31mred \xff\xfe \x00 \xc3\xa9 \xc2\x9b2J \x9b2J \xe2\x80\xae */\n"
for line, n in ((b"for (unsigned long i = 0; i < n; i++) {", 1),
                (b"x = x * 6364136223846793005UL + i;", 1), (b"x = mix(x);", 1),
                (b'__asm__ volatile("" : "+r"(x));', 2), (b"if (x % 7 == 3)", 1)):
    b = b.replace(line + b"\n", line + odd, n)
b = b.replace(b"x += i / 3;\n", b"x += i / 3;" + odd[:-1] + b"\r\n")
open(sys.argv[1], "wb").write(b)
PY
if ! (cd src && gcc -O2 -g -o ../bin/prog prog.c 2>gcc.log); then
	echo "FAIL: cannot build the workload" >&2
	exit 1
fi
objcopy --only-keep-debug bin/prog srv/prog.debug || fail "cannot split the debuginfo of prog"
hex=$(tl_build_id bin/prog)
[ -n "$hex" ] || fail "eu-readelf reads no build ID in bin/prog"

tl_perf_or_skip
if ! perf record -N -e cpu-clock -F 4000 -o p.data -- "$tmp/bin/prog" >rec.log 2>&1; then
	echo "FAIL: perf record: $(tail -3 rec.log)" >&2
	exit 1
fi

# Runs a command (the CLI, or a wrapper of it): $out, $err, $rc are its
# stdout, stderr file and status.
run() {
	rc=0
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	out=$tmp/out
	err=$tmp/err
	if grep -q -E 'Sanitizer|runtime error' "$err"; then
		fail "$*: sanitizer report:"
		head -20 "$err" >&2
	fi
}
annotate() {
	run "$DSOSTORE" annotate "$@"
}

# ------------------------------------------------------------ oracles
# perf script: the srcline perf's addr2line gives each sample (two lines a
# sample: "IP SYM", then the srcline).
perf script -i p.data -F ip,sym,srcline --full-source-path >script.srcline 2>script.err ||
	fail "perf script -F ip,sym,srcline failed: $(head -3 script.err)"
# addr2line: each sample of hot or cold at nm's address of its symbol plus
# the offset perf script gives; the first line of each answer is the
# innermost frame.
perf script -i p.data -F ip,sym,symoff,dso >script.symoff 2>script.err ||
	fail "perf script -F ip,sym,symoff,dso failed: $(head -3 script.err)"
nm bin/prog >prog.nm || fail "nm bin/prog failed"
for f in hot cold; do
	"$py" - "$f" prog.nm "$tmp/bin/prog" script.symoff >$f.addrs <<'PY' || fail "addresses of $f"
import re, sys
func, nm, binary, script = sys.argv[1:5]
base = [int(l.split()[0], 16) for l in open(nm) if l.split()[2:3] == [func]]
for line in open(script):
    m = re.match(r"^\s*[0-9a-f]+\s+(\S+)\+0x([0-9a-f]+)\s+\((.*)\)\s*$", line)
    if m and m.group(1) == func and m.group(3) == binary:
        print("0x%x" % (base[0] + int(m.group(2), 16)))
PY
	addr2line -a -i -e bin/prog <$f.addrs >$f.a2l || fail "addr2line -i on the $f samples failed"
done
[ -s hot.addrs ] || fail "perf script shows no sample of hot: the recording proves nothing"

# check_lines JSON FUNCTION WANT-TEXT [SRCLINE A2L EVENT]: the function's
# lines in our JSON against both oracles (perf script's srcline output,
# addr2line's answers; default script.srcline and FUNCTION.a2l; A2L ""
# for none); WANT-TEXT 1: every line's text is sed's, 0: none has text.
# With EVENT, that event's function and samples only.
check_lines() {
	"$py" - "$1" "$2" "$3" "${4:-script.srcline}" "${5-$2.a2l}" "${6:-}" <<'PY' ||
import collections, json, re, subprocess, sys

ours_file, func, want_text, srcline_file, a2l_file, event = sys.argv[1:7]
bad = []
doc = json.load(open(ours_file))
fs = [f for e in doc["events"] if not event or e["event"] == event
      for f in e["functions"] if f["name"] == func]
if len(fs) != 1:
    print("FAIL: %s: %d functions named %s in our JSON" % (ours_file, len(fs), func), file=sys.stderr)
    sys.exit(1)
f = fs[0]
ours = collections.Counter()
for l in f["lines"]:
    ours[(l["file"], l["line"])] += l["samples"]

# perf script: "  [EVENT:]  IP SYM" then "  FILE:LINE"
perf = collections.Counter()
lines = open(srcline_file, errors="replace").read().split("\n")
for i in range(len(lines) - 1):
    m = re.match(r"^\s*(?:(\S+):)?\s+[0-9a-f]+\s+(\S+)\s*$", lines[i])
    if m and m.group(2) == func and (not event or m.group(1) == event):
        n = re.match(r"^\s*(/\S+):(\d+)\s*$", lines[i + 1])
        perf[(n.group(1), int(n.group(2))) if n else ("??", lines[i + 1].strip())] += 1

# addr2line -a -i: "0xADDR", then frames innermost first: FILE:LINE
a2l = collections.Counter()
first = False
for line in open(a2l_file) if a2l_file else []:
    line = line.rstrip("\n")
    if re.match(r"^0x[0-9a-f]+$", line):
        first = True
        continue
    if first:
        m = re.match(r"^(.*):(\d+)(?: \(discriminator \d+\))?$", line)
        a2l[(m.group(1), int(m.group(2))) if m else ("??", line)] += 1
        first = False

for name, oracle in (("perf script srcline", perf), ("addr2line -i", a2l if a2l_file else perf)):
    if ours != oracle:
        keys = sorted(set(ours) | set(oracle), key=str)
        diff = ["%s:%s ours %d, %s %d" % (k[0], k[1], ours[k], name, oracle[k])
                for k in keys if ours[k] != oracle[k]]
        bad.append("%s: per-line samples differ from %s: %s" % (func, name, "; ".join(diff[:8])))
if f["samples"] != sum(perf.values()):
    bad.append("%s: %d samples, perf script has %d" % (func, f["samples"], sum(perf.values())))
for l in f["lines"]:
    if want_text == "1":
        # sed's line, without its newline (and a CR before it), as text:
        # a byte that is no UTF-8 is U+FFFD.
        want = subprocess.run(["sed", "-n", "%dp" % l["line"], l["file"]],
                              capture_output=True).stdout
        want = want.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", "replace")
        if l["text"] != want:
            bad.append("%s:%d: text %r, sed -n %dp gives %r" % (l["file"], l["line"], l["text"],
                                                                  l["line"], want))
    elif l["text"] is not None:
        bad.append("%s:%d: text %r without a source" % (l["file"], l["line"], l["text"]))
    share = 100.0 * l["samples"] / f["samples"]
    if abs(l["share"] - share) > 1e-4:
        bad.append("%s:%d: share %f, samples say %f" % (l["file"], l["line"], l["share"], share))
if bad:
    print("FAIL: %s:\n  %s" % (ours_file, "\n  ".join(bad)), file=sys.stderr)
    sys.exit(1)
files = sorted(set(k[0].rsplit("/", 1)[-1] for k in ours))
print("%s%s (%s): %d samples on %d lines of %s, as perf script%s count them" %
      (func, " in " + event if event else "", ours_file.rsplit("/", 1)[-1], f["samples"],
       len(ours), " and ".join(files), " and addr2line" if a2l_file else ""))
PY
		fails=$((fails + 1))
}

# ------------------------------------------------- local source text
annotate p.data hot --no-fetch --json
[ "$rc" -eq 0 ] || fail "annotate hot --json: exit $rc: $(head -3 "$err")"
cp "$out" local.json
check_lines local.json hot 1
! grep -q '"name":"cold"' local.json || fail "cold is in the output of 'annotate p.data hot'"
# The workload must spread hot() over lines of both files, and the
# helper's lines must be helper.h's.  Which lines the sampler hits is its
# luck (their counts are compared with perf's and addr2line's above): the
# loop runs 6e7 times over both files and takes most of the run, so a
# sample in each file is a floor, not a share.
"$py" - local.json "$tmp/src" <<'PY' || fails=$((fails + 1))
import json, sys
doc = json.load(open(sys.argv[1]))
f = doc["events"][0]["functions"][0]
src = sys.argv[2]
by_file = {}
for l in f["lines"]:
    by_file.setdefault(l["file"], []).append(l["line"])
bad = []
if not by_file.get(src + "/prog.c"):
    bad.append("no line of prog.c has samples: %s" % by_file)
helper = [l for l in by_file.get(src + "/helper.h", []) if 3 <= l <= 5]
if not helper:
    bad.append("no line of mix() in helper.h has samples: %s" % by_file)
if set(by_file) - {src + "/prog.c", src + "/helper.h"}:
    bad.append("files other than prog.c and helper.h: %s" % sorted(by_file))
if f["build_id"] is None or f["dso"] != "prog":
    bad.append("dso %r, build_id %r" % (f["dso"], f["build_id"]))
odd = [l for l in f["lines"]
       if "\x1b[31mred \ufffd\ufffd \x00 \u00e9 \x9b2J \ufffd2J \u202e */" in (l["text"] or "")]
if not odd:
    bad.append("no line with samples has the comment of odd bytes: the text checks prove less")
for x in f["files"]:
    if x["text_from"] != "local":
        bad.append("%s: text_from %r, expected local" % (x["file"], x["text_from"]))
if bad:
    print("FAIL: workload:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
[ "$(awk '/"build_id":/' local.json | grep -o "\"build_id\":\"$hex\"")" ] ||
	fail "annotate --json: no build_id $hex (eu-readelf's)"

# The listing: under "## hot", a section per file, the hottest line
# marked '>', its text; context lines (no samples) with their text.
annotate p.data hot --no-fetch
[ "$rc" -eq 0 ] || fail "annotate hot: exit $rc: $(head -3 "$err")"
cp "$out" local.txt
"$py" "$DS_SRC/tests/lib/termcheck.py" local.txt ||
	fail "the listing passes a byte to the terminal that it acts on"
grep -qF '/* \x1b[31mred \xff\xfe \x00 é \u009b2J \x9b2J \u202e */' local.txt ||
	fail "the listing does not show the odd bytes escaped: $(grep -a -m1 -F '/* ' local.txt)"
"$py" - local.json local.txt <<'PY' || fails=$((fails + 1))
import json, os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["DS_SRC"], "tests", "lib"))
import termcheck
f = json.load(open(sys.argv[1]))["events"][0]["functions"][0]
text = open(sys.argv[2], "rb").read().decode("utf-8", "replace").split("\n")
bad = []
if not any(re.match(r"^## hot \[\.\] prog  %d samples" % f["samples"], t) for t in text):
    bad.append("no '## hot [.] prog  %d samples' header" % f["samples"])
def sed(file, n):
    """sed's line as the listing must show it: without its newline (and a
    CR before it), escaped as docs/output.md says (termcheck.escape())."""
    b = subprocess.run(["sed", "-n", "%dp" % n, file], capture_output=True).stdout
    b = b.removesuffix(b"\n").removesuffix(b"\r")
    return termcheck.escape(b)
# rows: MARK PERCENT% SAMPLES LINE  TEXT, under "  Percent  Samples   Line  FILE  (local)"
rows, cur = {}, None
for t in text:
    m = re.match(r"^ +Percent +Samples +Line  (\S+)  \((.*)\)$", t)
    if m:
        cur = m.group(1)
        continue
    m = re.match(r"^([>* ]) +(?:([0-9.]+)% +(\d+) +)?(\d+)  (.*)$", t)
    if m and cur:
        rows[(cur, int(m.group(4)))] = (m.group(1), m.group(3), m.group(5))
hottest = max(l["samples"] for l in f["lines"])
for l in f["lines"]:
    r = rows.get((l["file"], l["line"]))
    if not r:
        bad.append("no row for %s:%d" % (l["file"], l["line"]))
        continue
    mark, samples, body = r
    if int(samples or -1) != l["samples"]:
        bad.append("%s:%d: %s samples in the listing, %d in the JSON" %
                   (l["file"], l["line"], samples, l["samples"]))
    if (mark == ">") != (l["samples"] == hottest):
        bad.append("%s:%d: mark %r (hottest has %d samples, it %d)" %
                   (l["file"], l["line"], mark, hottest, l["samples"]))
    if mark == " " and 100.0 * l["samples"] / f["samples"] >= 5:
        bad.append("%s:%d: a line of >= 5%% is not marked" % (l["file"], l["line"]))
    if body != sed(l["file"], l["line"]):
        bad.append("%s:%d: text %r" % (l["file"], l["line"], body))
context = [(k, v) for k, v in rows.items() if v[1] is None]
if not context:
    bad.append("no context lines")
for (file, n), (mark, samples, body) in context:
    if body != sed(file, n):
        bad.append("context %s:%d: text %r, sed: %r" % (file, n, body, sed(file, n)))
    if not any(l["file"] == file and abs(l["line"] - n) <= 2 for l in f["lines"]):
        bad.append("context %s:%d is more than 2 lines from a line with samples" % (file, n))
if bad:
    print("FAIL: listing:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
print("listing: %d lines with samples, %d context lines, the hottest marked" %
      (len(f["lines"]), len(context)))
PY
# --context 0: the lines with samples alone; -l: perf's sorted summary.
annotate p.data hot --no-fetch --context 0 -l
nrows=$(grep -c -E '^[>* ] +[0-9.]+% +[0-9]+ +[0-9]+  ' "$out")
nctx=$(grep -c -E '^ {20,}[0-9]+  ' "$out")
nlines=$("$py" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["events"][0]["functions"][0]["lines"]))' local.json)
[ "$nrows" -eq "$nlines" ] && [ "$nctx" -eq 0 ] ||
	fail "--context 0: $nrows rows with samples (want $nlines), $nctx context rows (want 0)"
nsum=$(grep -c -E '^#  +[0-9.]+%  (prog\.c|helper\.h):[0-9]+$' "$out")
[ "$nsum" -eq "$nlines" ] || fail "-l: $nsum summary lines, want $nlines: $(head -20 "$out")"

# ---------------------------------------------- the choice of functions
# choice JSON TOP PERCENT [NAME...]: our functions are perf script's
# symbols (script.symoff, every sample of the recording) with the most
# samples, at most TOP, each of at least PERCENT of them, most first (in
# any order among equal counts), and the NAMEs among them.  Shares are
# the sampler's luck, but both sides count the same samples.
choice() {
	"$py" - "$@" <<'PY' || fails=$((fails + 1))
import collections, json, re, sys
ours_file, top, pct, names = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
n = collections.Counter()
for line in open("script.symoff", errors="replace"):
    m = re.match(r"^\s*[0-9a-f]+\s+(\S+?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)\s*$", line)
    if m:
        n[m.group(1)] += 1
total = sum(n.values())
want = sorted((c for f, c in n.items() if 100.0 * c / total >= pct), reverse=True)[:top]
fs = [(f["name"], f["samples"]) for e in json.load(open(ours_file))["events"] for f in e["functions"]]
bad = []
if [c for f, c in fs] != want:
    bad.append("counts %s, perf script's most sampled %s" % ([c for f, c in fs], want))
bad += ["%s: %d samples, perf script %d" % (f, c, n[f]) for f, c in fs if n[f] != c]
bad += ["no %s" % f for f in names if f not in [f for f, c in fs]]
if bad:
    print("FAIL: --top %d --percent-limit %g: %s:\n  %s" % (top, pct, fs, "\n  ".join(bad)),
          file=sys.stderr)
    sys.exit(1)
print("--top %d --percent-limit %g: %s, as perf script counts" % (top, pct, " ".join(f for f, c in fs)))
PY
}
# hot and cold each loop 4-6e7 times, most of the run: each has over 1%
# of the samples (a floor: cold has ~13%), hot the most (~85%).
annotate p.data --no-fetch --json
choice "$out" 10 1 hot cold
check_lines "$out" cold 1
annotate p.data --no-fetch --json --top 1
choice "$out" 1 1
annotate -i p.data --no-fetch --json --percent-limit 50
choice "$out" 10 50
annotate p.data cold --no-fetch
[ "$rc" -eq 0 ] && grep -q '^## cold \[\.\] prog ' "$out" && ! grep -q '^## hot ' "$out" ||
	fail "annotate p.data cold: exit $rc: $(grep '^##' "$out")"
annotate p.data no_such_function --no-fetch
[ "$rc" -eq 1 ] && grep -q "no_such_function" "$err" ||
	fail "a function without samples: exit $rc (want 1), stderr: $(cat "$err")"

# Two events: each its own functions and shares (perf script's per event).
if perf record -N -e cpu-clock -e task-clock -F 2000 -o p2.data -- "$tmp/bin/prog" \
	>rec2.log 2>&1; then
	perf script -i p2.data -F event,ip,sym,srcline --full-source-path >script2.srcline \
		2>script.err || fail "perf script of two events failed: $(head -3 script.err)"
	annotate p2.data hot --no-fetch --json
	[ "$rc" -eq 0 ] || fail "two events: exit $rc: $(head -3 "$err")"
	n=$(grep -o '"event":"[a-z-]*"' "$out" | sort -u | tr '\n' ' ')
	[ "$n" = '"event":"cpu-clock" "event":"task-clock" ' ] || fail "two events: events $n"
	for ev in cpu-clock task-clock; do
		check_lines "$out" hot 1 script2.srcline "" $ev
	done
else
	fail "perf record of two events failed: $(tail -3 rec2.log)"
fi

# ------------------------------------------------ no source anywhere
mv src src.away
annotate p.data hot --no-fetch --json
[ "$rc" -eq 0 ] || fail "no source, --json: exit $rc: $(head -3 "$err")"
mv src.away src
cp "$out" nosrc.json
check_lines nosrc.json hot 0
mv src src.away
annotate p.data hot --no-fetch
mv src.away src
grep -q -E "^  +Percent +Samples +Line  $tmp/src/helper\.h  \(no source text: " "$out" ||
	fail "no source: no header saying so for helper.h: $(grep Percent "$out")"
hotline=$("$py" -c '
import json, sys
f = json.load(open(sys.argv[1]))["events"][0]["functions"][0]
l = max(f["lines"], key=lambda l: l["samples"])
print("%s:%d %d" % (l["file"].rsplit("/", 1)[-1], l["line"], l["samples"]))' local.json)
grep -q -E "^> +[0-9.]+% +${hotline#* } +[0-9]+  ${hotline% *}\$" "$out" ||
	fail "no source: the hottest line is not '> SHARE ${hotline#* } LINE ${hotline% *}': $(grep '^>' "$out")"

# ----------------------------------------- the source from debuginfod
# hidden MOUNTS CMD...: CMD in a mount namespace of its own, where each
# of the colon-separated MOUNTS, DIR or DIR=OTHER, covers DIR with an
# empty tmpfs or with OTHER (bind-mounted).
hidden() {
	local mounts=$1
	shift
	unshare -m bash -c 'IFS=: && for m in $0; do
			if [ "${m#*=}" != "$m" ]; then mount --bind "${m#*=}" "${m%%=*}"
			else mount -t tmpfs tmpfs "$m"; fi || exit 99
		done && exec "$@"' "$mounts" "$@"
}
if [ $netns = 0 ]; then
	echo "the debuginfod part: skipped (needs root for a network namespace of its own)"
elif ! hidden "$tmp/src" true 2>/dev/null; then
	echo "the debuginfod part: skipped (no mount namespace: unshare -m failed)"
elif tl_start_debuginfod 8002 "$tmp/srv"; then
	requests() { tl_metric 8002 "http_requests_total{type=\"$1\"}"; }
	src0=$(requests source) dbg0=$(requests debuginfo)
	# The binary stripped (its segments give perf's file offsets their
	# addresses; the debuginfo alone cannot) and the source gone.
	mkdir -p stripped
	strip -o stripped/prog bin/prog || fail "cannot strip bin/prog"
	client=(hidden "$tmp/src:$tmp/bin=$tmp/stripped" env DEBUGINFOD_URLS=http://127.0.0.1:8002
		DEBUGINFOD_CACHE_PATH="$tmp/fcache" "$DSOSTORE" annotate p.data hot --json -v
		--perf-buildid-dir "")
	run "${client[@]}"
	[ "$rc" -eq 0 ] || fail "from debuginfod: exit $rc: $(head -5 "$err")"
	cp "$out" fetched.json
	cp "$err" fetched.err
	check_lines fetched.json hot 1
	src1=$(requests source) dbg1=$(requests debuginfo)
	[ $((src1 - src0)) -eq 2 ] && [ $((dbg1 - dbg0)) -eq 1 ] ||
		fail "from debuginfod: $((src1 - src0)) source requests (want 2: prog.c, helper.h)," \
			"$((dbg1 - dbg0)) debuginfo requests (want 1)"
	grep -q 'annotate: 2 source files: 0 local, 2 asked of debuginfod in one batch (2 downloaded' \
		fetched.err || fail "from debuginfod: -v says: $(grep 'source files' fetched.err)"
	"$py" - fetched.json "$tmp/fcache/$hex" "$tmp/src" debuginfod <<'PY' || fails=$((fails + 1))
import filecmp, json, sys
f = json.load(open(sys.argv[1]))["events"][0]["functions"][0]
entry, src, origin = sys.argv[2:5]
bad = []
names = sorted(x["file"] for x in f["files"])
if names != [src + "/helper.h", src + "/prog.c"]:
    bad.append("files %s" % names)
for x in f["files"]:
    want = entry + "/source" + x["file"].replace("#", "#_").replace("/", "##")
    if x["text_from"] != origin or x["path"] != want:
        bad.append("%s: text_from %r path %r; want %r, %s" %
                   (x["file"], x["text_from"], x["path"], origin, want))
    elif not filecmp.cmp(x["path"], x["file"], shallow=False):
        bad.append("%s: the cached file differs from the source" % x["file"])
if bad:
    print("FAIL: from %s:\n  %s" % (origin, "\n  ".join(bad)), file=sys.stderr)
    sys.exit(1)
print("source text from %s: %s" % (origin, ", ".join(x["file"].rsplit("/", 1)[-1] for x in f["files"])))
PY
	# Again: all from the cache, no request at all.
	run "${client[@]}"
	[ "$rc" -eq 0 ] || fail "from the cache: exit $rc: $(head -5 "$err")"
	check_lines "$out" hot 1
	"$py" - "$out" "$tmp/fcache/$hex" "$tmp/src" debuginfod-cache <<'PY' ||
import json, sys
f = json.load(open(sys.argv[1]))["events"][0]["functions"][0]
bad = [x["file"] for x in f["files"] if x["text_from"] != sys.argv[4]]
if bad:
    print("FAIL: second run: not from the cache: %s" % bad, file=sys.stderr)
    sys.exit(1)
PY
		fails=$((fails + 1))
	[ "$(requests source)" -eq "$src1" ] && [ "$(requests debuginfo)" -eq "$dbg1" ] ||
		fail "from the cache: $(($(requests source) - src1)) source and" \
			"$(($(requests debuginfo) - dbg1)) debuginfo requests (want none)"
	# The listing of the server's text (from the cache now): escaped as
	# the local file's, nothing a terminal acts on.
	run hidden "$tmp/src:$tmp/bin=$tmp/stripped" env DEBUGINFOD_URLS=http://127.0.0.1:8002 \
		DEBUGINFOD_CACHE_PATH="$tmp/fcache" "$DSOSTORE" annotate p.data hot --perf-buildid-dir ""
	[ "$rc" -eq 0 ] || fail "listing from the cache: exit $rc: $(head -5 "$err")"
	"$py" "$DS_SRC/tests/lib/termcheck.py" "$out" ||
		fail "the listing of the server's text passes a byte to the terminal that it acts on"
	grep -qF '/* \x1b[31mred \xff\xfe \x00 é \u009b2J \x9b2J \u202e */' "$out" ||
		fail "the listing of the server's text does not show the odd bytes escaped"
	echo "debuginfod: 2 sources fetched once, then read from the cache"
else
	fail "debuginfod did not get ready"
fi

# ----------------------------------------------------------- errors
annotate "$tmp/missing.data" --no-fetch
[ "$rc" -eq 1 ] && [ "$(wc -l <"$err")" -eq 1 ] && [ ! -s "$out" ] ||
	fail "a missing file: exit $rc, stderr: $(cat "$err")"
annotate p.data --top 0
[ "$rc" -eq 2 ] || fail "--top 0: exit $rc, expected 2"
annotate p.data --percent-limit x
[ "$rc" -eq 2 ] || fail "--percent-limit x: exit $rc, expected 2"

tl_finish annotate.sh
