#!/bin/bash
# SPDX-License-Identifier: MIT
# Go 1.20's .gopclntab layout (magic 0xfffffff1, still Go 1.22's) from a
# real toolchain and from a real program.  Debian 12's golang-go is 1.19
# (the 1.18 layout, tests/cli/go.sh); bookworm-backports has golang-1.22-go,
# installed beside it in /usr/lib/go-1.22 (scripts/install-deps), and
# wireguard-go, built by Debian with Go 1.22 and shipped stripped: no
# .symtab, no DWARF, no GNU build ID, only the table.
#   - tests/cli/go.sh again with the newest /usr/lib/go-1.NN (NN >= 20): the
#     same program built and compared with that Go's own tools (go tool
#     addr2line, go tool nm) and with llvm-symbolizer on its DWARF;
#   - /usr/bin/wireguard-go: 2000 bytes drawn over .text, our last frame's
#     name and first frame's file:line against that Go's `go tool
#     addr2line` on the same binary (it reads the table too, with Go's
#     own reader: no DWARF to say more, so no inline frames are checked;
#     where its reader decodes a line table the function has not, the C
#     code cgo links in, it is counted apart).
set -u

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
SRC=${DS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lib/testlib.bash"
tl_need python3 readelf
tl_tmpdir dsgonew

gobin=
for d in /usr/lib/go-1.*/bin; do
	v=${d#/usr/lib/go-1.}
	v=${v%%/*}
	case $v in *[!0-9]* | '') continue ;; esac
	[ "$v" -ge 20 ] && [ -x "$d/go" ] || continue
	if [ -z "$gobin" ] || [ "$v" -gt "$best" ]; then
		gobin=$d best=$v
	fi
done
if [ -z "$gobin" ]; then
	echo "SKIP: no Go 1.20 or newer in /usr/lib/go-1.NN (bookworm-backports' golang-1.22-go)" >&2
	exit 77
fi
magic() { # FILE: the magic number of its .gopclntab (little-endian)
	python3 - "$1" <<'PY'
import re, subprocess, sys
out = subprocess.run(["readelf", "-SW", sys.argv[1]], capture_output=True, text=True).stdout
m = re.search(r"\.gopclntab\s+PROGBITS\s+[0-9a-f]+\s+([0-9a-f]+)", out)
if not m:
    sys.exit("no .gopclntab in " + sys.argv[1])
f = open(sys.argv[1], "rb")
f.seek(int(m.group(1), 16))
print("0x%08x" % int.from_bytes(f.read(4), "little"))
PY
}

DS_GO_BIN=$gobin DS_GO_NAME=go_new DS_GO_MAGIC=0xfffffff1 bash "$SRC/tests/cli/go.sh" || fails=$((fails + 1))

wg=/usr/bin/wireguard-go
if [ -x "$wg" ]; then
	tl_case "wireguard-go ($("$gobin/go" version "$wg" | awk '{print $2}'))"
	m=$(magic "$wg")
	[ "$m" = 0xfffffff1 ] || fail "$wg: .gopclntab magic $m, not 0xfffffff1 (bookworm's 1.19 build?)"
	if readelf -SW "$wg" | grep -qE '\.(symtab|debug_info|zdebug_info) '; then
		fail "$wg has symbols or DWARF: the case would not read the table alone"
	fi
	if out=$(PATH=$gobin:$PATH python3 - "$DSOSTORE" "$wg" 2>"$tmp/wg.err" <<'PY'
import random, re, subprocess, sys
ds, wg = sys.argv[1:3]
out = subprocess.run(["readelf", "-SW", wg], capture_output=True, text=True).stdout
m = re.search(r"\.text\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", out)
lo, size = int(m.group(1), 16), int(m.group(2), 16)
rng = random.Random(20)
addrs = sorted({lo + rng.randrange(size) for _ in range(2000)})
inp = "".join("0x%x\n" % a for a in addrs)
run = lambda cmd: subprocess.run(cmd, input=inp, capture_output=True, text=True,
                                 check=True).stdout.splitlines()
gta = run(["go", "tool", "addr2line", wg])
ours, cur = [], None
for line in run([ds, "symbolize", "-e", wg, "-f", "-i", "-a", "--debug-dir", "/nonexistent",
                 "--perf-buildid-dir", ""]):
    if line.startswith("0x"):
        ours.append([])
    else:
        ours[-1].append(line)
assert len(gta) == 2 * len(addrs) and len(ours) == len(addrs)
pos = lambda fl: "?" if fl in ("??:?", "??:0", ":-1", "?:0", ":0") else fl
bad = frames = notab = 0
for i, a in enumerate(addrs):
    fr = ours[i] if len(ours[i]) >= 2 else ["??", "??:0"]
    frames += len(fr) // 2 - 1
    want = (gta[2 * i] if gta[2 * i] != "?" else "??", pos(gta[2 * i + 1]))
    # cgo's C functions have no pc-file or pc-line table (offset 0, which
    # the runtime's pcvalue reads as "none": no line, and so do we);
    # debug/gosym decodes the bytes at offset 0 all the same and prints
    # no file and a negative line (":-6").
    if re.fullmatch(r":-\d+", gta[2 * i + 1]) and (fr[-2], pos(fr[1])) == (want[0], "?"):
        notab += 1
        continue
    if want != (fr[-2], pos(fr[1])):
        bad += 1
        if bad <= 5:
            print("0x%x: go tool addr2line %s; ours %s" % (a, want, fr), file=sys.stderr)
print("%d addresses (%d inline frames besides), %d differ from go tool addr2line (and %d"
      " known: C code, which has no line table)" % (len(addrs), frames, bad, notab))
sys.exit(1 if bad else 0)
PY
	); then
		tl_case_end "$out"
	else
		fail "$(cat "$tmp/wg.err")"
		tl_case_end "$out"
	fi
else
	echo "note: no $wg (bookworm-backports' wireguard-go, scripts/install-deps): not compared" >&2
fi
tl_finish go_new
