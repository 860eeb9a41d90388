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
# The oracle is perf report --stdio --sort dso,sym: every row of >= 1% of
# ours (of a stub, >= 0.1%) must be perf's (DSO, [.], symbol text, share within 0.01), and the
# reverse, as tests/cli/perf_report.sh compares them.  perf 6.1 names a stub
# `tiny@plt` in a shared library's .plt (lazy or -z now), and there we
# must give its row exactly.  Where perf 6.1 names no stub (docs/oracles.md,
# "perf 6.1 (report)": .plt.sec; an executable whose .dynsym defines
# nothing; a zero-size `_init` stretched over an executable's .plt) the
# stub's name is objdump -d's label and the row's share the sum of perf's
# rows over the stub's bytes: its addresses, or that `_init` row.  Those
# rows are counted and printed apart.
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
	for v in u s; do
		tl_case "$name.$v"
		data=$name/$v.data
		if ! perf record -N -e cpu-clock -F 4000 -o "$data" -- "$name/$v/m" >"$data.rec" 2>&1; then
			fail "perf record: $(tail -2 "$data.rec")"
			tl_case_end
			continue
		fi
		perf report -i "$data" --stdio --sort dso,sym >"$data.perf" 2>"$data.perferr" ||
			fail "perf report: $(head -2 "$data.perferr")"
		"$DSOSTORE" report "$data" --stdio --no-fetch --perf-buildid-dir "" --sort dso,sym \
			>"$data.ours" 2>"$data.err" || fail "dsostore report: $(head -2 "$data.err")"
		grep -q -E 'Sanitizer|runtime error' "$data.err" && fail "sanitizer: $(head -5 "$data.err")"
		for f in m libl.so; do
			objdump -d -F "$name/u/$f" >"$name/$f.objdump"
			readelf -SW "$name/u/$f" >"$name/$f.sections"
		done
		if python3 - "$data.perf" "$data.ours" "$name" >"$data.cmp" 2>&1 <<'PY'; then
import re, sys

perf_file, ours_file, d = sys.argv[1:4]
# Rows of >= MIN are compared; stub rows from PLT_MIN: a -z now stub is
# one jmp, and its share can fall under 1% on a loaded machine.
TOL, MIN, PLT_MIN = 0.01, 1.0, 0.1

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

perf, ours = rows(perf_file), rows(ours_file)
bad, used, direct, subst = [], set(), [], []
if not perf or not ours:
    bad.append("no rows (perf %d, ours %d)" % (len(perf), len(ours)))
labels = {dso: stubs(dso) for dso in ("m", "libl.so")}
for share, key in ours:
    # The stubs of the test's own files; a sample that lands in libc's
    # PLT on a loaded machine (an IRELATIVE stub, our *ABS*+0x...@plt and
    # perf's "@plt": docs/oracles.md) is not what this case is about.
    if not key[2].endswith("@plt") or share < PLT_MIN or key[0] not in labels:
        continue
    hit = [i for i, (s, k) in enumerate(perf) if k == key and i not in used]
    if hit:
        used.add(hit[0])
        direct.append(key[2] + " in " + key[0])
        if abs(perf[hit[0]][0] - share) > TOL:
            bad.append("%s %s: perf %.2f%%, ours %.2f%%" % (key[0], key[2], perf[hit[0]][0], share))
        continue
    ranges = labels.get(key[0], {}).get(key[2])
    if not ranges:
        bad.append("%s %s: no such objdump stub label" % (key[0], key[2]))
        continue
    # perf's rows over the stub's bytes: addresses (file offsets), or a
    # symbol stretched over it that we do not show (_init).
    ours_names = {k[2] for s, k in ours if k[0] == key[0]}
    part = []
    for i, (s, k) in enumerate(perf):
        if i in used or k[0] != key[0]:
            continue
        m = re.fullmatch(r"0x([0-9a-f]{16})", k[2])
        if (m and any(lo <= int(m.group(1), 16) < hi for lo, hi in ranges)) or \
           (not m and k[2] == "_init" and "_init" not in ours_names):
            part.append(i)
    got = sum(perf[i][0] for i in part)
    used.update(part)
    subst.append("%s in %s (perf: %s)" % (key[2], key[0],
                 ", ".join(sorted({perf[i][1][2] for i in part})) or "nothing"))
    if abs(got - share) > TOL * max(1, len(part)):
        bad.append("%s %s: ours %.2f%%, perf's rows over its bytes %.2f%%" %
                   (key[0], key[2], share, got))
# Every other row of >= 1%, both ways.
for i, (share, key) in enumerate(perf):
    if i in used or share < MIN:
        continue
    hit = [s for s, k in ours if k == key]
    if not hit:
        bad.append("perf's row %.2f%% %s is not in ours" % (share, " ".join(key)))
    elif abs(hit[0] - share) > TOL:
        bad.append("%s: perf %.2f%%, ours %.2f%%" % (" ".join(key), share, hit[0]))
for share, key in ours:
    if share >= MIN and not key[2].endswith("@plt") and not any(k == key for s, k in perf):
        bad.append("our row %.2f%% %s is not in perf's" % (share, " ".join(key)))
if not direct and not subst:
    bad.append("no @plt row of >= 1%: the case proves nothing")
for b in bad:
    print("  " + b, file=sys.stderr)
print("direct %d substitute %d: %s" % (len(direct), len(subst), "; ".join(direct + subst)))
sys.exit(1 if bad else 0)
PY
			d=$(awk '{print $2; exit}' "$data.cmp")
			direct=$((direct + d))
			case $name in
			lazy) direct_lazy=$((direct_lazy + d)) ;;
			now) direct_now=$((direct_now + d)) ;;
			esac
			substitute=$((substitute + $(awk '{sub(":", "", $4); print $4; exit}' "$data.cmp")))
			tl_case_end "$(tail -1 "$data.cmp")"
		else
			fail "$(cat "$data.cmp")"
			tl_case_end
		fi
	done
done
# perf 6.1 names the stubs of a shared library's .plt: those rows must
# have been compared with perf's own.  Four recordings have one (lazy and
# -z now, unstripped and stripped), but a stub row is compared only from
# 0.1% of the samples, and on a loaded machine one of them can fall under
# it: at least two, one of lazy binding and one of -z now.  (From 1%, a
# CI run once had 3, and once none of -z now.)
[ "$direct" -ge 2 ] || fail "only $direct PLT rows compared with perf's own"
[ "$direct_lazy" -ge 1 ] && [ "$direct_now" -ge 1 ] ||
	fail "no PLT row compared with perf's own for lazy binding ($direct_lazy) or -z now ($direct_now)"

tl_finish perf_report_plt "$direct PLT rows as perf's, $substitute against objdump and perf's rows over the stub"
