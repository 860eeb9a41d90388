#!/bin/bash
# SPDX-License-Identifier: MIT
# dsostore report on Go programs.  A CPU-bound Go program (three
# noinline functions: a plain one, a method on a pointer receiver, a
# generic one) is built unstripped and with -ldflags='-s -w', and each
# build recorded with perf record -e cpu-clock.  Go's linker writes no GNU
# build ID: the binaries are found by their path (the mapped file), as
# perf finds them.
#  - unstripped: the rows of >= 1% are perf report's (it reads .symtab);
#  - stripped: perf report, which reads no .gopclntab, shows the Go code
#    as addresses; ours names it from Go's table.  The oracle: every
#    sample's IP (perf script of the same recording) mapped to the
#    function of `go tool nm -size` on the unstripped build that holds
#    it; each row of ours for the binary must be such a function with the
#    share (summed periods over the event's) its samples have, and every
#    such function of >= 1% a row.  Names as the pclntab spells them (no
#    `.abi0`, `[...]` for generic shapes: docs/oracles.md).
set -u

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
SRC=${DS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lib/testlib.bash"
tl_need go perf python3
tl_tmpdir dsgoreport
export HOME=$tmp/home GOFLAGS=-mod=mod GOPROXY=off GOCACHE=$tmp/gocache GOPATH=$tmp/gopath \
	CGO_ENABLED=0 GOTOOLCHAIN=local
unset DEBUGINFOD_URLS PERF_BUILDID_DIR
mkdir -p "$HOME" "$tmp/src"
tl_perf_or_skip
tl_sanitizer_exitcodes

cat >"$tmp/src/main.go" <<'EOF'
package main

import (
	"fmt"
	"os"
)

type acc struct{ x uint64 }

//go:noinline
func burnA(n int, x uint64) uint64 {
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func (a *acc) burnB(n int) {
	for i := 0; i < n; i++ {
		a.x ^= a.x << 13
		a.x ^= a.x >> 7
		a.x ^= a.x << 17
	}
}

//go:noinline
func burnC[T ~uint64 | ~uint32](n int, x T) T {
	for i := 0; i < n; i++ {
		x = x*31 + T(i)
	}
	return x
}

func main() {
	n := 30000000
	a := &acc{x: 1}
	x := burnA(3*n, 1)
	a.burnB(2 * n)
	x += burnC(2*n, uint64(x))
	fmt.Fprintln(os.Stdout, x, a.x)
}
EOF
printf 'module example.com/goreport\n\ngo 1.18\n' >"$tmp/src/go.mod"
mkdir -p "$tmp/full" "$tmp/stripped"
if ! (cd "$tmp/src" && go build -o "$tmp/full/burn" . &&
	go build -ldflags='-s -w' -o "$tmp/stripped/burn" .) >"$tmp/build.log" 2>&1; then
	cat "$tmp/build.log" >&2
	fail "go build"
	tl_finish go_report
fi

# record NAME: $tmp/NAME.data of $tmp/NAME/burn, perf's table, ours.
record() {
	perf record -N -e cpu-clock -F 4000 -o "$tmp/$1.data" -- "$tmp/$1/burn" \
		>"$tmp/$1.rec" 2>&1 || { fail "perf record ($1): $(tail -2 "$tmp/$1.rec")"; return 1; }
	perf report -i "$tmp/$1.data" --stdio --sort dso,sym >"$tmp/$1.perf" 2>"$tmp/$1.perferr" ||
		{ fail "perf report ($1): $(head -2 "$tmp/$1.perferr")"; return 1; }
	"$DSOSTORE" report "$tmp/$1.data" --stdio --no-fetch --perf-buildid-dir "" \
		--sort dso,sym >"$tmp/$1.ours" 2>"$tmp/$1.err" ||
		{ fail "dsostore report ($1): $(head -2 "$tmp/$1.err")"; return 1; }
	if grep -q -E 'Sanitizer|runtime error' "$tmp/$1.err"; then
		fail "dsostore report ($1): sanitizer report: $(head -5 "$tmp/$1.err")"
	fi
}

tl_case unstripped
if record full; then
	python3 - "$tmp/full.perf" "$tmp/full.ours" <<'PY' || fail "rows differ from perf report's"
import re, sys

def rows(path):
    out = {}
    for line in open(path, errors="replace"):
        m = re.match(r"^\s+([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$", line)
        if m and not line.startswith("#"):
            out.setdefault(m.group(2, 3, 4), float(m.group(1)))
    return out

perf, ours = rows(sys.argv[1]), rows(sys.argv[2])
# One unit of the last digit, as a float (abs(1.00 - 0.99) > 0.01); a row
# of ours on the 1% line is compared with perf's twin whatever its share.
bad = ["perf %s %.2f%%, ours %s" % (" ".join(k), v, ours.get(k))
       for k, v in perf.items() if v >= 1 and abs(ours.get(k, -1) - v) > 0.0101]
bad += ["ours %s %.2f%%, perf %s" % (" ".join(k), v, perf.get(k))
        for k, v in ours.items() if v >= 1 and abs(perf.get(k, -1) - v) > 0.0101]
if not any(k[2] == "main.burnA" for k in perf):
    bad.append("perf names no main.burnA: the oracle is broken")
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
fi
tl_case_end

tl_case stripped
if record stripped; then
	grep -q -E '%  +burn +\[\.\] 0x[0-9a-f]{16}$' "$tmp/stripped.perf" ||
		fail "perf report names the stripped Go code: the case proves nothing"
	go tool nm -size -sort address "$tmp/full/burn" >"$tmp/nm"
	perf script -i "$tmp/stripped.data" -F period,ip,dso >"$tmp/script" 2>/dev/null ||
		fail "perf script"
	if python3 - "$tmp/nm" "$tmp/script" "$tmp/stripped.ours" >"$tmp/cmp.out" 2>&1 <<'PY'; then
import bisect, re, sys

funcs, names = [], []
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) >= 4 and p[2] in "Tt" and int(p[1]) > 0:
        funcs.append((int(p[0], 16), int(p[1])))
        names.append(re.sub(r"\[[^\[\]]*\]", "[...]", re.sub(r"\.abi0$", "", " ".join(p[3:]))))
total, held = 0, {}
for line in open(sys.argv[2]):
    p = line.split()
    if len(p) < 3:
        continue
    period, ip = int(p[0]), int(p[1], 16)
    total += period
    if not p[-1].endswith("/burn)"):
        continue
    i = bisect.bisect_right(funcs, (ip, float("inf"))) - 1
    name = names[i] if i >= 0 and ip < funcs[i][0] + funcs[i][1] else "0x%x" % ip
    held[name] = held.get(name, 0) + period
want = {k: 100.0 * v / total for k, v in held.items()}
ours = {}
for line in open(sys.argv[3]):
    m = re.match(r"^\s+([0-9.]+)%\s+burn\s+\[\.\]\s+(.+?)\s*$", line)
    if m:
        ours[m.group(2)] = float(m.group(1))
bad = ["ours %s %.2f%%, its samples' functions: %s" % (k, v, want.get(k))
       for k, v in ours.items() if abs(want.get(k, -1) - v) > 0.01]
bad += ["%s %.2f%% is no row of ours" % (k, v) for k, v in want.items()
        if v >= 1 and k not in ours]
for f in ("main.burnA", "main.(*acc).burnB", "main.burnC[...]"):
    if f not in ours:
        bad.append("no row for " + f)
for b in bad:
    print("  " + b, file=sys.stderr)
print("%d rows of burn, as the functions holding their samples' IPs" % len(ours))
sys.exit(1 if bad else 0)
PY
		tl_case_end "$(cat "$tmp/cmp.out")"
	else
		fail "$(cat "$tmp/cmp.out")"
		tl_case_end
	fi
else
	tl_case_end
fi

tl_finish go_report
