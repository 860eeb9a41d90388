#!/bin/bash
# PLT stubs named NAME@plt, as objdump names them.
#
# A small C program (and a C++ one, for -C) built every way the linkers lay
# PLTs out on x86-64: gcc and clang; lazy binding and -z now; -fno-plt
# (calls through the GOT, the .plt.got stubs only); IBT: -fcf-protection
# with -z ibtplt (ld.bfd) or -z force-ibt (lld), since Debian's crt files
# carry no IBT property and the linkers would otherwise not make .plt.sec;
# an IFUNC of the program's own (an IRELATIVE slot, "*ABS*+0xADDR@plt");
# a shared library; split debuginfo (the .debug file's .plt is NOBITS: the
# stubs come from the binary).  And aarch64, linked by lld against a
# library of its own (no aarch64 libc here), plain and with BTI (lld's
# 24-byte stubs), where binutils' objdump has no aarch64 and the oracle is
# llvm-objdump, which labels a stub at its adrp.
#
# The oracle is `objdump -d` (binutils' synthetic symbols): every byte of
# each stub it labels <NAME@plt> (up to its next label or the section's
# end) must be NAME@plt in GNU style, with no line ("NAME@plt", "??:?":
# what addr2line prints for a symbol without line info), and NAME@plt in
# LLVM style; -C against `objdump -d -C`.  Every other byte of the PLT
# sections (PLT0, IBT's lazy stubs) must stay "??".  addr2line itself
# prints ??/??:0 for all of them (it makes no synthetic symbols); that is
# counted, not used.
set -u

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
SRC=${DS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lib/testlib.bash"
tl_need gcc g++ clang clang++ ld.lld objdump readelf objcopy addr2line python3
tl_tmpdir dsplt
T=$tmp
export HOME=$T/home
mkdir -p "$HOME"

cat >"$T/p.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	char *p = malloc(64);

	strcpy(p, argv[0]);
	puts(p);
	printf("%zu %d\n", strlen(p), abs(argc - 3));
	free(p);
	return 0;
}
EOF
cat >"$T/ifunc.c" <<'EOF'
#include <stdio.h>
static int impl(int x) { return x + 1; }
static int (*resolve(void))(int) { return impl; }
int twice(int) __attribute__((ifunc("resolve")));
int main(int argc, char **argv) { puts(argv[0]); return twice(argc); }
EOF
cat >"$T/lib.c" <<'EOF'
#include <stdio.h>
#include <string.h>
int lib_len(const char *s) { printf("%s\n", s); return (int)strlen(s); }
EOF
cat >"$T/cxx.cc" <<'EOF'
#include <iostream>
#include <map>
#include <string>
#include <vector>
int main(int argc, char **argv)
{
	std::map<std::string, std::vector<int>> m;
	for (int i = 0; i < argc; i++)
		m[argv[i]].push_back(i);
	for (const auto &kv : m)
		std::cout << kv.first << ' ' << kv.second.size() << std::endl;
	return 0;
}
EOF

# variant NAME CC FLAGS...
VARIANTS=()
variant()
{
	local name=$1
	shift
	if ! "$@" -Wl,--build-id=sha1 -o "$T/$name" >"$T/$name.log" 2>&1; then
		echo "build of $name failed:" >&2
		cat "$T/$name.log" >&2
		exit 2
	fi
	VARIANTS+=("$name")
}
for cc in gcc clang; do
	for bind in lazy now; do
		b=()
		[ "$bind" = now ] && b=(-Wl,-z,now)
		variant "$cc-$bind" "$cc" -O2 -g "${b[@]}" "$T/p.c"
		variant "$cc-$bind-ibt" "$cc" -O2 -g -fcf-protection -Wl,-z,ibtplt "${b[@]}" "$T/p.c"
		variant "$cc-$bind-noplt" "$cc" -O2 -g -fno-plt "${b[@]}" "$T/p.c"
		variant "$cc-$bind-ibt-noplt" "$cc" -O2 -g -fcf-protection -fno-plt -Wl,-z,ibtplt \
			"${b[@]}" "$T/p.c"
	done
done
variant clang-lld clang -O2 -g -fuse-ld=lld "$T/p.c"
variant clang-lld-ibt clang -O2 -g -fuse-ld=lld -fcf-protection -Wl,-z,force-ibt "$T/p.c"
variant gcc-ifunc gcc -O2 -g "$T/ifunc.c"
variant gcc-lib.so gcc -O2 -g -shared -fPIC "$T/lib.c"
variant gxx-lazy g++ -O2 -g "$T/cxx.cc"
variant gxx-ibt g++ -O2 -g -fcf-protection -Wl,-z,ibtplt "$T/cxx.cc"
variant clangxx-now clang++ -O2 -g -Wl,-z,now "$T/cxx.cc"
# aarch64, where clang and lld can make it.
cat >"$T/a64lib.c" <<'EOF'
int ext_a(int x) { return x + 1; }
int ext_b(int x) { return x * 2; }
int ext_c(int x) { return x - 3; }
EOF
cat >"$T/a64.c" <<'EOF'
int ext_a(int);
int ext_b(int);
int ext_c(int);
void _start(void)
{
	volatile int r = ext_a(1) + ext_b(2) + ext_c(3);
	(void)r;
	for (;;)
		;
}
EOF
A64=(clang --target=aarch64-linux-gnu -O2 -g -nostdlib -fuse-ld=lld)
if command -v llvm-objdump >/dev/null &&
	"${A64[@]}" -fPIC -shared -o "$T/liba64.so" "$T/a64lib.c" 2>/dev/null; then
	variant a64-lld "${A64[@]}" "$T/a64.c" "$T/liba64.so"
	variant a64-lld-bti "${A64[@]}" -mbranch-protection=bti -Wl,-z,force-bti "$T/a64.c" \
		"$T/liba64.so"
else
	echo "no aarch64 variants: clang cannot target aarch64 here, or no llvm-objdump"
fi
# Split: the stripped binary's debuginfo found by build ID.
D=$T/debug
bid=$(tl_build_id "$T/gcc-lazy-ibt")
mkdir -p "$D/.build-id/${bid:0:2}"
objcopy --only-keep-debug "$T/gcc-lazy-ibt" "$D/.build-id/${bid:0:2}/${bid:2}.debug" || exit 2
objcopy --strip-all "$T/gcc-lazy-ibt" "$T/split-gcc-lazy-ibt" || exit 2
readelf -SW "$D/.build-id/${bid:0:2}/${bid:2}.debug" 2>/dev/null | grep -q '\.plt\.sec *NOBITS' ||
	fail "split: the debug file's .plt.sec is not NOBITS"
VARIANTS+=(split-gcc-lazy-ibt)

# The layouts asked for are there.
readelf -SW "$T/gcc-lazy-ibt" | grep -q '\.plt\.sec' || fail "gcc-lazy-ibt has no .plt.sec"
readelf -SW "$T/clang-lld-ibt" | grep -q '\.plt\.sec' || fail "clang-lld-ibt has no .plt.sec"
readelf -SW "$T/gcc-lazy-noplt" | grep -q '\.rela\.plt' && fail "gcc-lazy-noplt has a .rela.plt"
readelf -rW "$T/gcc-ifunc" | grep -q IRELATIVE || fail "gcc-ifunc has no IRELATIVE slot"

# check NAME: the stubs objdump labels against ours, every byte.
check()
{
	local name=$1 bin=$T/$1 dm=() from=$T/$1 objdump=objdump
	case $name in
	a64*) objdump=llvm-objdump ;;
	gxx* | clangxx*) dm=(-C) ;;
	split-*) from=$T/${name#split-} ;; # objdump reads the unstripped one
	esac
	# Sections: "NAME ADDR SIZE" of the executable ones named .plt*.
	readelf -SW "$from" | sed -n 's/^ *\[ *[0-9]*\] *//p' |
		awk '$1 ~ /^\.plt/ && $2 == "PROGBITS" { print $1, $3, $5 }' >"$T/$name.secs"
	"$objdump" -d "${dm[@]}" "$from" >"$T/$name.objdump" || return 1
	python3 - "$T/$name" >"$T/$name.addrs" <<'EOF' || return 1
import re, sys
base = sys.argv[1]
secs = [l.split() for l in open(base + ".secs")]
labels = []
for l in open(base + ".objdump", errors="replace"):
    m = re.match(r"^([0-9a-f]+) <(.*)>:$", l.rstrip("\n"))
    if m:
        labels.append((int(m.group(1), 16), m.group(2)))
labels.sort()
want = {}
for sname, addr, size in secs:
    lo, hi = int(addr, 16), int(addr, 16) + int(size, 16)
    inside = [(a, n) for a, n in labels if lo <= a < hi]
    for a in range(lo, hi):
        want[a] = None
    for i, (a, n) in enumerate(inside):
        if not n.endswith("@plt"):
            continue
        end = inside[i + 1][0] if i + 1 < len(inside) else hi
        for x in range(a, end):
            want[x] = n
with open(base + ".want", "w") as fp:
    for a in sorted(want):
        fp.write("0x%x\t%s\n" % (a, want[a] or "??"))
for a in sorted(want):
    print("0x%x" % a)
EOF
	"$DSOSTORE" symbolize "${dm[@]}" --debug-dir "$D" -f -e "$bin" <"$T/$name.addrs" \
		>"$T/$name.gnu" 2>"$T/$name.err" || fail "$name: GNU style failed"
	"$DSOSTORE" symbolize --debug-dir "$D" --output-style=LLVM -e "$bin" <"$T/$name.addrs" \
		>"$T/$name.llvm" 2>>"$T/$name.err" || fail "$name: LLVM style failed"
	addr2line "${dm[@]}" -f -e "$from" <"$T/$name.addrs" >"$T/$name.a2l"
	python3 - "$T/$name" "$name" "${#dm[@]}" <<'EOF' || fail "$name: PLT names differ from objdump's"
import sys
base, name, demangle = sys.argv[1], sys.argv[2], sys.argv[3] != "0"
want = [l.rstrip("\n").split("\t") for l in open(base + ".want")]
gnu = [l.rstrip("\n") for l in open(base + ".gnu")]
llvm = [b.split("\n") for b in open(base + ".llvm").read().split("\n\n") if b.strip("\n")]
a2l = [l.rstrip("\n") for l in open(base + ".a2l")]
gnu = list(zip(gnu[0::2], gnu[1::2]))
assert len(gnu) == len(want) == len(llvm), "answers: %d GNU, %d LLVM, %d asked" % (
    len(gnu), len(llvm), len(want))
bad = stubs = a2l_named = 0
for (addr, w), g, l, fn in zip(want, gnu, llvm, a2l[0::2]):
    exp = (w, "??:?") if w != "??" else ("??", "??:0")
    stubs += w != "??"
    a2l_named += fn != "??"
    # LLVM style: the stub's name; without a frame, ?? at ??:0:0.
    lexp = [w, "??:0:0"]
    if g != exp or l != lexp:
        bad += 1
        if bad <= 8:
            print("  %s %s: GNU %r LLVM %r, objdump %r" % (name, addr, g, l, w))
print("  %s: %d PLT bytes, %d in %s stubs (objdump), %d differ; addr2line names %d" %
      (name, len(want), stubs, "demangled" if demangle else "its", bad, a2l_named))
sys.exit(1 if bad or not stubs else 0)
EOF
}

for v in "${VARIANTS[@]}"; do
	tl_case "$v"
	check "$v" || fail "$v: oracle failed"
	tl_case_end || true
done
tl_finish symbolize_plt
