#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Addresses named from ELF symbols alone (no DWARF function there), in each
# output style against its oracle:
# - Generated assembler programs: a local and a global function with a
#   size, the bytes after each one's end (no symbol holds them), a global
#   one without .size (size 0), a hidden one; under `.file ""` (the
#   linker's nameless STT_FILE, as before glibc's _dl_relocate_static_pie)
#   and under `.file "foo.s"`.  Every byte of .text: GNU style against
#   `addr2line -f` (the nearest symbol below, size ignored; the STT_FILE
#   of any symbol, "" printed ":?"); LLVM style against llvm-symbolizer
#   (a sized symbol names [start, start+size), one of size 0 up to the
#   next symbol, past a sized one's end is "??"; the STT_FILE of a local
#   symbol only, an empty one "??") and JSON against `llvm-symbolizer
#   --output-style=JSON` (function, file, line, start).
# - The system's libz (.dynsym only): every gap between a function's end
#   and the next function (from nm -D -S), its first and last byte, and
#   the last byte of the function before it, the same way.
# - `stack -p` of a program whose frame's pc lies after its function's
#   .size: no name, as eu-stack -p prints it (and the same frames).
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_sanitizer_exitcodes
: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc addr2line llvm-symbolizer nm readelf python3
tl_tmpdir dssymtab
T=$tmp
export HOME=$T/home
mkdir -p "$HOME"

# compare BIN ADDRFILE: the three styles against their oracles, one
# address a line of ADDRFILE (hex with 0x).
compare() {
	local bin=$1 addrs=$2 base=$T/$(basename "$1")
	"$DSOSTORE" symbolize -f -e "$bin" <"$addrs" >"$base.gnu" 2>"$base.err" ||
		fail "$bin: GNU style exit $?: $(head -3 "$base.err")"
	"$DSOSTORE" symbolize -f --output-style=LLVM -e "$bin" $(cat "$addrs") >"$base.llvm" 2>>"$base.err" ||
		fail "$bin: LLVM style exit $?: $(head -3 "$base.err")"
	"$DSOSTORE" symbolize -f --output-style=JSON -e "$bin" $(cat "$addrs") >"$base.json" 2>>"$base.err" ||
		fail "$bin: JSON style exit $?: $(head -3 "$base.err")"
	addr2line -f -e "$bin" <"$addrs" >"$base.a2l"
	llvm-symbolizer --obj="$bin" $(cat "$addrs") >"$base.ls"
	llvm-symbolizer --output-style=JSON --obj="$bin" $(cat "$addrs") >"$base.lsjson"
	python3 - "$addrs" "$base" <<'EOF' || fail "$bin: answers differ from the oracles'"
import json, sys
addrs = [l.strip() for l in open(sys.argv[1]) if l.strip()]
b = sys.argv[2]
bad = 0
def show(style, a, ours, theirs):
    global bad
    bad += 1
    if bad <= 12:
        print("  %s %s: ours %r, oracle %r" % (style, a, ours, theirs), file=sys.stderr)
gnu = open(b + ".gnu").read().split("\n")
a2l = open(b + ".a2l").read().split("\n")
for i, a in enumerate(addrs):
    if gnu[2 * i:2 * i + 2] != a2l[2 * i:2 * i + 2]:
        show("GNU", a, gnu[2 * i:2 * i + 2], a2l[2 * i:2 * i + 2])
llvm = [x for x in open(b + ".llvm").read().split("\n\n") if x.strip()]
ls = [x for x in open(b + ".ls").read().split("\n\n") if x.strip()]
if len(llvm) != len(addrs) or len(ls) != len(addrs):
    show("LLVM", "-", "%d answers" % len(llvm), "%d answers, %d asked" % (len(ls), len(addrs)))
# Every address, those past a sized symbol's end too, where
# llvm-symbolizer names no function ("??", JSON "").
for a, x, y in zip(addrs, llvm, ls):
    if x != y:
        show("LLVM", a, x, y)
ours = [json.loads(l) for l in open(b + ".json") if l.strip()]
theirs = [json.loads(l)[0] for l in open(b + ".lsjson") if l.strip()]
keys = ("FunctionName", "FileName", "Line", "StartAddress")
for a, x, y in zip(addrs, ours, theirs):
    fx = [tuple(f.get(k) for k in keys) for f in x["Symbol"]]
    fy = [tuple(f.get(k) for k in keys) for f in y["Symbol"]]
    if fx != fy:
        show("JSON", a, fx, fy)
named = sum(1 for x in ls if not x.startswith("??"))
print("  %d addresses, %d named by llvm-symbolizer, %d differ" % (len(addrs), named, bad))
sys.exit(1 if bad else 0)
EOF
}

# ---- generated programs
asm_prog() {
	cat <<EOF
	.file "$1"
	.text
	.type	loc_sized, @function
loc_sized:
	nop
	ret
	.size	loc_sized, .-loc_sized
	.byte	0xcc, 0xcc, 0xcc, 0xcc
	.type	loc_nosize, @function
loc_nosize:
	nop
	ret
	.byte	0xcc, 0xcc, 0xcc
	.globl	glob_sized
	.type	glob_sized, @function
glob_sized:
	nop
	nop
	ret
	.size	glob_sized, .-glob_sized
	.byte	0xcc, 0xcc, 0xcc, 0xcc, 0xcc
	.globl	glob_nosize
	.type	glob_nosize, @function
glob_nosize:
	nop
	ret
	.byte	0xcc, 0xcc
	.globl	hid
	.hidden	hid
	.type	hid, @function
hid:
	nop
	ret
	.size	hid, .-hid
	.byte	0xcc, 0xcc
	.globl	main
	.type	main, @function
main:
	xorl	%eax, %eax
	ret
	.size	main, .-main
	.byte	0xcc, 0xcc, 0xcc
	.section	.note.GNU-stack,"",@progbits
EOF
}
for v in empty named; do
	tl_case "asm-$v"
	f=""
	[ "$v" = named ] && f=foo.s
	asm_prog "$f" >"$T/$v.s"
	gcc -nostartfiles -e main -no-pie -Wl,--build-id -o "$T/$v" "$T/$v.s" || fail "gcc $v.s"
	python3 - "$T/$v" >"$T/$v.addrs" <<'EOF'
import subprocess, sys
for l in subprocess.run(["readelf", "-SW", sys.argv[1]], capture_output=True, text=True).stdout.splitlines():
    w = l.replace("[ ", "[").split()
    if len(w) > 5 and w[1] == ".text":
        lo, size = int(w[3], 16), int(w[5], 16)
        for a in range(lo, lo + size):
            print(hex(a))
EOF
	[ -s "$T/$v.addrs" ] || fail "no .text in $v"
	compare "$T/$v" "$T/$v.addrs"
	tl_case_end || true
done

# ---- libz: the gaps after its functions
tl_case libz
libz=$(ldconfig -p 2>/dev/null | awk '$1 == "libz.so.1" && /x86-64/ {print $NF; exit}')
[ -n "$libz" ] || libz=/lib/x86_64-linux-gnu/libz.so.1
if [ ! -r "$libz" ]; then
	echo "  (skipped: no libz.so.1)"
else
	nm -D -S --defined-only "$libz" | python3 -c '
import sys
syms = sorted({(int(w[0], 16), int(w[1], 16)) for w in (l.split() for l in sys.stdin)
               if len(w) == 4 and w[2] in "Tt"})
for (a, z), (b, _) in zip(syms, syms[1:]):
    if z and a + z < b:
        for x in sorted({a + z - 1, a + z, b - 1}):
            print(hex(x))
' >"$T/libz.addrs"
	if [ -s "$T/libz.addrs" ]; then
		compare "$libz" "$T/libz.addrs"
		# (Some gaps asked: llvm-symbolizer names them "??".)
		grep -qx '??' "$T/$(basename "$libz").ls" || fail "libz: no gap asked"
	else
		echo "  (libz: no gap between functions)"
	fi
fi
tl_case_end || true

# ---- stack: a frame past its function's .size
tl_case stack
cat >"$T/gap.s" <<'EOF'
	.text
	.globl	helper
	.type	helper, @function
helper:
	.cfi_startproc
	nop
	.size	helper, .-helper
	subq	$8, %rsp
	.cfi_def_cfa_offset 16
	call	pause@PLT
	addq	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.globl	main
	.type	main, @function
main:
	.cfi_startproc
	subq	$8, %rsp
	.cfi_def_cfa_offset 16
	call	helper
	xorl	%eax, %eax
	addq	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	main, .-main
	.section	.note.GNU-stack,"",@progbits
EOF
if ! command -v eu-stack >/dev/null; then
	echo "  (skipped: no eu-stack)"
elif gcc -Wl,--build-id -o "$T/gap" "$T/gap.s"; then
	"$T/gap" &
	live=$!
	pids+=("$live")
	# (pause(): wait until it sleeps there)
	for _ in $(seq 50); do
		[ "$(awk '{print $3}' "/proc/$live/stat" 2>/dev/null)" = S ] && break
		sleep 0.1
	done
	if ! eu-stack -i -s -p "$live" >"$T/gap.eustack" 2>&1; then
		echo "  (skipped: eu-stack -p was refused: $(head -1 "$T/gap.eustack"))"
	else
		rc=0
		"$DSOSTORE" stack --no-progress -p "$live" >"$T/gap.out" 2>"$T/gap.err" || rc=$?
		[ "$rc" = 0 ] || fail "stack exit $rc: $(head -3 "$T/gap.err")"
		# "#N PC NAME", NAME "??" where eu-stack prints none.  The
		# frame in the gap (the one in gap whose pc is past main's
		# start: helper's) compared, and the frames' pcs.
		norm() {
			awk '/^#[0-9]/ {n = ($3 == "-" || $3 == "") ? "??" : $3; print $1, $2, n}' "$1"
		}
		norm "$T/gap.eustack" >"$T/gap.want"
		norm "$T/gap.out" >"$T/gap.got"
		grep -q "^#1 .* ??$" "$T/gap.want" || fail "eu-stack names the frame in the gap: $(cat "$T/gap.eustack")"
		[ "$(awk '{print $2}' "$T/gap.want")" = "$(awk '{print $2}' "$T/gap.got")" ] ||
			fail "other frames than eu-stack's: $(cat "$T/gap.eustack")"
		[ "$(sed -n 2p "$T/gap.want")" = "$(sed -n 2p "$T/gap.got")" ] ||
			fail "the frame in the gap: ours $(sed -n 2p "$T/gap.got"), eu-stack's $(sed -n 2p "$T/gap.want")"
	fi
	kill "$live" 2>/dev/null
else
	fail "gcc gap.s"
fi
tl_case_end || true

tl_finish symbolize_symtab
