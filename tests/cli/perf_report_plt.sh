#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dsostore report's rows for PLT stubs, against perf
# report.  A loop in a shared library (libl.so) and one in the program
# call a one-line function of another library (libt.so) through their
# PLTs, many times, so that a good share of the samples land in the stubs.
# Built with gcc four ways: lazy binding and -z now, each plain and with
# IBT (-fcf-protection -z ibtplt: the stubs that run are in .plt.sec),
# and recorded unstripped and with the program and libl.so stripped.
#
# Where samples land is the sampler's luck; what each sample's address is
# is not.  The oracles, on the same recording:
#  - perf script's samples (address, DSO, period) and objdump -d's stub
#    labels: every stub of the test's files that a sample landed in is a
#    row of ours, with the share of those samples' periods (to the
#    rounding of two decimals), and no other stub is;
#  - perf report --stdio --sort dso,sym: perf 6.1 names a stub `tiny@plt`
#    in a shared library's .plt (lazy or -z now), and there our row must be
#    perf's, share for share.  Where perf 6.1 names no stub
#    (docs/oracles.md, "perf 6.1 (report)": .plt.sec; an executable whose
#    .dynsym defines nothing; a zero-size `_init` stretched over all of an
#    executable's stubs) perf's rows are addresses or `_init`: those
#    stand for the stubs (and perf's `_init` for .init and .plt's header
#    too) and are not compared; our rows there are the samples';
#  - every other row of >= 1% of either is the other's, share for share.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc strip objdump readelf python3
tl_tmpdir dsperfplt
cd "$tmp" || exit 2
export HOME=$tmp/home
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_URLS
tl_perf_or_skip
tl_sanitizer_exitcodes

cat >t.c <<'EOF'
int tiny(int x) { return x + 1; }
EOF
cat >l.c <<'EOF'
int tiny(int x);
__attribute__((noinline)) int lib_loop(long n)
{
	int x = 0;
	for (long i = 0; i < n; i++)
		x = tiny(x);
	return x;
}
EOF
cat >m.c <<'EOF'
#include <stdio.h>
int tiny(int x);
int lib_loop(long n);
int main(void)
{
	int x = lib_loop(60000000);
	for (long i = 0; i < 40000000; i++)
		x = tiny(x);
	printf("%d\n", x);
	return 0;
}
EOF

# build DIR CFLAGS LDFLAGS: DIR/u (unstripped), DIR/s (m, libl.so stripped)
build() {
	mkdir -p "$1/u" "$1/s" &&
		gcc -O2 -fPIC $2 -shared -o "$1/u/libt.so" t.c &&
		gcc -O2 -fPIC $2 -shared -o "$1/u/libl.so" l.c -L"$1/u" -lt -Wl,-rpath,'$ORIGIN' $3 &&
		gcc -O2 $2 -o "$1/u/m" m.c -L"$1/u" -ll -lt -Wl,-rpath,'$ORIGIN' $3 &&
		cp "$1/u/libt.so" "$1/s/" && strip -o "$1/s/libl.so" "$1/u/libl.so" &&
		strip -o "$1/s/m" "$1/u/m"
}

# cmp.py PERF OURS DIR SCRIPT: the comparison of one recording (above);
# exit 0, 1 (what differs, on stderr), or 3: no sample landed in a stub.
cat >cmp.py <<'PY'
import os, re, sys

perf_file, ours_file, d, script = sys.argv[1:5]
# Shares are printed to two decimals: one that comes from the samples is
# within half a unit of the last digit.
TOL, ROUND, MIN = 0.0101, 0.0051, 1.0
TEST_DSOS = ("m", "libl.so")

def rows(path):
    out = []
    for line in open(path, errors="replace"):
        m = re.match(r"^\s+([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$", line)
        if m and not line.startswith("#"):
            out.append((float(m.group(1)), m.group(2, 3, 4)))
    return out

def stubs(dso):
    """objdump's stub labels of dso: name -> [(lo, hi) file offsets]."""
    secs = []
    for line in open("%s/%s.sections" % (d, dso)):
        m = re.match(r"^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            secs.append((int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)))
    labels = []
    for line in open("%s/%s.objdump" % (d, dso)):
        m = re.match(r"^([0-9a-f]+) <(.+)> \(File Offset: 0x([0-9a-f]+)\):", line)
        if m:
            labels.append((int(m.group(1), 16), m.group(2), int(m.group(3), 16)))
    labels.sort()
    out = {}
    for i, (addr, label, off) in enumerate(labels):
        if not label.endswith("@plt"):
            continue
        sec = [s for s in secs if s[0] <= addr < s[0] + s[2]]
        end = sec[0][0] + sec[0][2] if sec else addr + 16
        if i + 1 < len(labels) and labels[i + 1][0] < end:
            end = labels[i + 1][0]
        out.setdefault(label, []).append((off, off + end - addr))
    return out

def stub_shares(labels):
    """(dso, stub) -> share of the samples' periods, from perf script: each
    sample's file offset is its address in the mapping its mmap event
    gives (the process maps each file once per segment)."""
    maps, total, per = {}, 0, {}
    mm = re.compile(r"PERF_RECORD_MMAP2? .*\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (\S+) [^\]]*\]: \S+ (.+)$")
    sm = re.compile(r"^\s*(\d+)\s+([0-9a-f]+) \((.*)\)\s*$")
    for line in open(script, errors="replace"):
        m = mm.search(line)
        if m:
            maps.setdefault(m.group(4).strip(), []).append(
                (int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 0)))
            continue
        m = sm.match(line)
        if not m:
            continue
        period, ip, path = int(m.group(1)), int(m.group(2), 16), m.group(3)
        total += period
        dso = os.path.basename(path)
        if dso not in labels:
            continue
        for start, size, pgoff in maps.get(path, []):
            if start <= ip < start + size:
                off = ip - start + pgoff
                for label, ranges in labels[dso].items():
                    if any(lo <= off < hi for lo, hi in ranges):
                        per[(dso, label)] = per.get((dso, label), 0) + period
                break
    return {k: 100.0 * v / total for k, v in per.items()} if total else {}

perf, ours = rows(perf_file), rows(ours_file)
bad, direct, stand_in = [], [], []
if not perf or not ours:
    bad.append("no rows (perf %d, ours %d)" % (len(perf), len(ours)))
labels = {dso: stubs(dso) for dso in TEST_DSOS}
want = stub_shares(labels)
# Our stub rows of the test's files are the samples' stubs, share for
# share.  (A sample in libc's PLT, an IRELATIVE stub, is not what this
# case is about: docs/oracles.md.)
our_stubs = {(k[0], k[2]): s for s, k in ours if k[0] in labels and k[2].endswith("@plt")}
for key in sorted(set(want) | set(our_stubs)):
    if key not in our_stubs:
        bad.append("%s %s: %.4f%% of the samples are in the stub, ours has no row" %
                   (key[0], key[1], want[key]))
    elif key not in want:
        bad.append("%s %s: our row %.2f%%, no sample is in the stub" % (key[0], key[1], our_stubs[key]))
    elif abs(our_stubs[key] - want[key]) > ROUND:
        bad.append("%s %s: ours %.2f%%, the samples in it %.4f%%" %
                   (key[0], key[1], our_stubs[key], want[key]))
# Where perf names the stub, its row is ours.
for share, key in perf:
    if key[0] in labels and (key[0], key[2]) in our_stubs:
        direct.append(key[2] + " in " + key[0])
        if abs(our_stubs[(key[0], key[2])] - share) > TOL:
            bad.append("%s %s: perf %.2f%%, ours %.2f%%" %
                       (key[0], key[2], share, our_stubs[(key[0], key[2])]))

def stands_in(key):
    """perf's row for samples in a stub it does not name: an address in a
    stub, or `_init` stretched over an executable's stubs."""
    if key[0] not in labels or not any(k[0] == key[0] for k in want):
        return False
    m = re.fullmatch(r"0x([0-9a-f]{16})", key[2])
    if m:
        off = int(m.group(1), 16)
        return any(lo <= off < hi for r in labels[key[0]].values() for lo, hi in r)
    return key[2] == "_init"

# Every other row of >= 1%, both ways.
for share, key in perf:
    if (key[0], key[2]) in our_stubs:
        continue
    if stands_in(key):
        # What it holds is perf's business (_init stretched to the next
        # symbol perf has: over the stubs, .plt's header, .init); our
        # rows there are checked against the samples above.
        stand_in.append("%s %s %.2f%%" % (key[0], key[2], share))
        continue
    if share < MIN:
        continue
    hit = [s for s, k in ours if k == key]
    if not hit:
        bad.append("perf's row %.2f%% %s is not in ours" % (share, " ".join(key)))
    elif abs(hit[0] - share) > TOL:
        bad.append("%s: perf %.2f%%, ours %.2f%%" % (" ".join(key), share, hit[0]))
for share, key in ours:
    if share >= MIN and (key[0], key[2]) not in our_stubs and not stands_in(key) and \
            not any(k == key for s, k in perf):
        bad.append("our row %.2f%% %s is not in perf's" % (share, " ".join(key)))
for b in bad:
    print("  " + b, file=sys.stderr)
if not want and not bad:
    # (3: the caller records again)
    print("  no sample in a stub of the test's files: the case proves nothing", file=sys.stderr)
    sys.exit(3)
print("direct %d stubs %d: %s; perf's stand-ins: %s" % (len(direct), len(want),
      "; ".join(direct) or "-", "; ".join(stand_in) or "-"))
sys.exit(1 if bad else 0)
PY

# record_case NAME V: NAME/V.data recorded from NAME/V/m, with perf's
# report and script of it and ours; false (said) when a tool failed.
record_case() {
	local data=$1/$2.data

	if ! perf record -N -e cpu-clock -F 4000 -o "$data" -- "$1/$2/m" >"$data.rec" 2>&1; then
		fail "perf record: $(tail -2 "$data.rec")"
		return 1
	fi
	perf report -i "$data" --stdio --sort dso,sym >"$data.perf" 2>"$data.perferr" ||
		{ fail "perf report: $(head -2 "$data.perferr")"; return 1; }
	perf script -i "$data" -F period,ip,dso --show-mmap-events >"$data.script" 2>/dev/null ||
		{ fail "perf script on $data"; return 1; }
	"$DSOSTORE" report "$data" --stdio --no-fetch --perf-buildid-dir "" --sort dso,sym \
		>"$data.ours" 2>"$data.err" || { fail "dsostore report: $(head -2 "$data.err")"; return 1; }
	! grep -q -E 'Sanitizer|runtime error' "$data.err" ||
		{ fail "sanitizer: $(head -5 "$data.err")"; return 1; }
}

# cmp_case NAME DATA: cmp.py on that recording, its words in DATA.cmp.
cmp_case() {
	python3 cmp.py "$2.perf" "$2.ours" "$1" "$2.script" >"$2.cmp" 2>&1
}

direct=0 substitute=0 direct_lazy=0 direct_now=0
for variant in "lazy||" "now||-Wl,-z,now" "ibt|-fcf-protection|-Wl,-z,ibtplt" \
	"ibtnow|-fcf-protection|-Wl,-z,ibtplt,-z,now"; do
	IFS='|' read -r name cflags ldflags <<<"$variant"
	if ! build "$name" "$cflags" "$ldflags" >"$name.log" 2>&1; then
		fail "$name: cannot build: $(tail -2 "$name.log")"
		continue
	fi
	if [ "${cflags:-}" ] && ! readelf -SW "$name/u/libl.so" | grep -q '\.plt\.sec'; then
		fail "$name: libl.so has no .plt.sec: the IBT case proves nothing"
	fi
	for f in m libl.so; do
		objdump -d -F "$name/u/$f" >"$name/$f.objdump"
		readelf -SW "$name/u/$f" >"$name/$f.sections"
	done
	for v in u s; do
		tl_case "$name.$v"
		data=$name/$v.data
		# A recording whose samples missed every stub (a loaded host's
		# timer can leave the task a few dozen) proves nothing either
		# way: it is made again, up to five times; every one is
		# compared all the same, and only the comparison fails the case.
		rc=2
		for attempt in 1 2 3 4 5; do
			record_case "$name" "$v" || { rc=2; break; }
			cmp_case "$name" "$data"
			rc=$?
			[ "$rc" = 3 ] || break
			echo "  $name.$v: no sample in a stub of the test's files (recording $attempt)"
		done
		if [ "$rc" = 2 ]; then
			tl_case_end # (the tool's failure said)
		elif [ "$rc" = 0 ]; then
			d=$(awk '{print $2; exit}' "$data.cmp")
			direct=$((direct + d))
			case $name in
			lazy) direct_lazy=$((direct_lazy + d)) ;;
			now) direct_now=$((direct_now + d)) ;;
			esac
			substitute=$((substitute + $(awk '{sub(":", "", $4); print $4; exit}' "$data.cmp") - d))
			tl_case_end "$(tail -1 "$data.cmp")"
		else
			fail "$(cat "$data.cmp")"
			tl_case_end
		fi
	done
done
# perf 6.1 names the stubs of a shared library's .plt: those rows must
# have been compared with perf's own, for lazy binding and for -z now.
# libl.so's loop calls its stub 60 million times: a few percent of a
# recording's samples land there (cpu-clock samples the task's own time;
# on a loaded host its timer may still leave a recording a few dozen, so
# one without a stub sample is made again, above).
[ "$direct" -ge 2 ] || fail "only $direct PLT rows compared with perf's own"
[ "$direct_lazy" -ge 1 ] && [ "$direct_now" -ge 1 ] ||
	fail "no PLT row compared with perf's own for lazy binding ($direct_lazy) or -z now ($direct_now)"

tl_finish perf_report_plt "$direct PLT rows as perf's, $substitute against objdump and perf's rows over the stub"
