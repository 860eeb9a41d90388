#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generates the seed corpus of the symbolize-an-ELF fuzz target
# (fuzz_symelf.c) into OUTDIR (emptied first).  Nothing here is committed:
# ELF files must not be tracked, so the seeds are compiled on each run.
#
#   fuzz/gen_symelf_corpus.sh OUTDIR
#
# Each seed is one way a DSO reaches the index builder: gcc and clang,
# DWARF 4 and 5, -O0 and -O2 with always_inline chains, C++ (templates,
# namespaces: demangling), 32 bit, compressed debug sections, a shared
# library, split DWARF's skeletons, dwz, debug info only, symbols only, .dynsym only,
# MiniDebugInfo (.gnu_debugdata), truncated copies (inside the
# section headers, inside .debug_info), and a .debug_info of zeros or
# claiming 1000 times its compressed size.  Small on purpose: every input is
# a whole ELF and DWARF parse, and a fuzzer spends its time where the
# bytes are.
set -euo pipefail

out=${1:?usage: gen_symelf_corpus.sh OUTDIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dssymcorpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

rm -rf "$out"
mkdir -p "$out"

cat >"$tmp/prog.c" <<'EOF'
volatile int sink;
static inline __attribute__((always_inline)) int leaf(int x) { return x * sink + 1; }
static inline __attribute__((always_inline)) int mid(int x) { return x > 2 ? leaf(x) : leaf(x + 3) * 2; }
__attribute__((noinline)) int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += mid(i); return s; }
int main(int argc, char **argv) { (void)argv; return work(argc); }
EOF
cat >"$tmp/prog.cc" <<'EOF'
namespace ns {
template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T get(T k) const { return v * k; }
};
inline __attribute__((always_inline)) int twice(int x) { return 2 * x; }
__attribute__((noinline)) int use(int x) { return twice(x) + Box<int>{x}.get(3); }
}
int main(int argc, char **) { return ns::use(argc) + (int)ns::Box<double>{1.5}.get(argc); }
EOF
echo 'int lib_f(int x) { return x * 3; } int lib_g(int y) { return lib_f(y) + 1; }' >"$tmp/lib.c"

n=0
# seed NAME CC FLAGS... : compile one seed; a missing compiler or -m32
# support only means fewer seeds.
seed() {
	local name=$1 cc=$2
	shift 2
	command -v "$cc" >/dev/null || return 1
	if "$cc" "$@" -Wl,-z,noseparate-code -o "$out/$name" 2>/dev/null; then
		n=$((n + 1))
	else
		rm -f "$out/$name"
		return 1
	fi
}

seed gcc-O2-g gcc -g -O2 "$tmp/prog.c" || true
seed gcc-O0-g gcc -g -O0 "$tmp/prog.c" || true
seed gcc-O2-dwarf4 gcc -gdwarf-4 -O2 "$tmp/prog.c" || true
seed gcc-O2-gz gcc -g -O2 -gz=zlib "$tmp/prog.c" || true
seed gcc-O2-gz-gnu gcc -g -O2 -gz=zlib-gnu "$tmp/prog.c" || true
seed gcc32-O2-g gcc -m32 -g -O2 "$tmp/prog.c" || true
seed clang-O2-g clang -g -O2 "$tmp/prog.c" || true
seed clang-O2-dwarf4 clang -gdwarf-4 -O2 "$tmp/prog.c" || true
# rnglistx, strx, addrx; no .debug_aranges: CUs from their top DIEs
seed clang-O2-fsections clang -gdwarf-5 -O2 -ffunction-sections "$tmp/prog.c" || true
seed gxx-O1-g g++ -g -O1 "$tmp/prog.cc" || true
seed gcc-lib.so gcc -g -O2 -shared -fPIC "$tmp/lib.c" || true
# Split DWARF: skeleton units, DWARF 4 (GNU) and 5; their .dwo files are
# not seeds, and comp_dir is "." so that nothing outside the harness's
# directory is looked for.
split_seed() {
	local name=$1 cc=$2
	shift 2
	command -v "$cc" >/dev/null || return 1
	if (cd "$tmp" && "$cc" "$@" -gsplit-dwarf -fdebug-prefix-map="$tmp"=. -c prog.c -o "$name.o" &&
		"$cc" -Wl,-z,noseparate-code -o "$out/$name" "$name.o") 2>/dev/null; then
		n=$((n + 1))
	else
		rm -f "$out/$name"
		return 1
	fi
}
split_seed gcc-O2-split4 gcc -O2 -gdwarf-4 || true
split_seed clang-O2-split5 clang -O2 -gdwarf-5 || true
# C++ names LLVM style respells (empty packs, '>' '>' after one, closure
# constructors, cv-qualified function types, inheriting constructors) and
# names that look like them.
i=0
for name in _Z1fIJEiEvv _Z1fIiJEiEvv _ZN3FooUt_C2Ev _ZZ4mainENKUlvE_C2EOS_ _Z1fIFivEEvRKT_ \
	_ZN1DCI41BEi _ZrsIiEvv _ZN1AIiEgtIiEEbv \
	_ZSt12__get_helperILm1ESt14default_deleteIKiEJEERT0_RSt11_Tuple_implIXT_EJS3_DpT1_EE; do
	echo "int f$i(int) __asm__(\"$name\"); int f$i(int x) { return x + $i; }"
	i=$((i + 1))
done >"$tmp/names.c"
echo 'int main(void) { return 0; }' >>"$tmp/names.c"
seed gcc-cxx-names gcc -O1 "$tmp/names.c" || true

if [ -f "$out/gcc-O2-g" ]; then
	g=$out/gcc-O2-g
	# Split: debug info only (code NOBITS), symbols only, .dynsym only.
	objcopy --only-keep-debug "$g" "$out/gcc-O2-g.debug" && n=$((n + 1))
	strip --strip-debug -o "$out/gcc-O2-g.symtab" "$g" && n=$((n + 1))
	strip -o "$out/gcc-O2-g.stripped" "$g" && n=$((n + 1))
	# MiniDebugInfo as Fedora builds it: the function symbols of an
	# --only-keep-debug copy, xz-compressed into .gnu_debugdata.
	if command -v xz >/dev/null; then
		nm "$g" --format=posix --defined-only | awk '$2 ~ /[Tt]/ {print $1}' >"$tmp/funcs"
		objcopy --only-keep-debug "$g" "$tmp/debug"
		objcopy -S --remove-section .gdb_index --remove-section .comment \
			--keep-symbols="$tmp/funcs" "$tmp/debug" "$tmp/mini"
		xz -c "$tmp/mini" >"$tmp/mini.xz"
		objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$out/gcc-O2-g.stripped" \
			"$out/gcc-O2-g.minidebuginfo" && n=$((n + 1))
	fi
	# dwz: partial units and DW_FORM_ref_udata across them.
	if command -v dwz >/dev/null; then
		cp "$g" "$out/gcc-O2-g.dwz"
		dwz "$out/gcc-O2-g.dwz" 2>/dev/null || true
		n=$((n + 1))
	fi
	# Truncated: inside the section header table, in the middle of the
	# file (inside the DWARF), and in the first page.
	size=$(stat -c %s "$g")
	head -c $((size - 100)) "$g" >"$out/gcc-O2-g.cut-shdrs" && n=$((n + 1))
	head -c $((size / 2)) "$g" >"$out/gcc-O2-g.cut-half" && n=$((n + 1))
	off=$(readelf -SW "$g" | sed -n 's/.*\] \.debug_info *[A-Z]* *[0-9a-f]* \([0-9a-f]*\).*/\1/p')
	if [ -n "$off" ]; then
		head -c $((0x$off + 40)) "$g" >"$out/gcc-O2-g.cut-debug-info" && n=$((n + 1))
	fi
	head -c 4000 "$g" >"$out/gcc-O2-g.cut-4000" && n=$((n + 1))
	# Section headers intact, DWARF damaged: zeros over the middle of
	# .debug_info, 0xff over the middle of .debug_line.
	for sec in debug_info:zero debug_line:ff; do
		name=${sec%%:*}
		read -r off sz < <(readelf -SW "$g" |
			sed -n "s/.*\] \.$name *[A-Z]* *[0-9a-f]* \([0-9a-f]*\) \([0-9a-f]*\).*/\1 \2/p")
		[ -n "${off:-}" ] || continue
		cp "$g" "$out/gcc-O2-g.bad-$name"
		if [ "${sec#*:}" = zero ]; then
			head -c $((0x$sz / 3)) /dev/zero
		else
			head -c $((0x$sz / 3)) /dev/zero | tr '\0' '\377'
		fi | dd of="$out/gcc-O2-g.bad-$name" bs=1 seek=$((0x$off + 0x$sz / 3)) conv=notrunc \
			status=none
		n=$((n + 1))
	done
	# Section headers intact, .debug_info claiming more than is there
	# (tests/gen/elfhole.py): 256 KiB of zeros at the end of the file (units
	# of length 0), and SHF_COMPRESSED with a real zlib stream of 16 MiB
	# of zeros (16 KB: past our ratio limit, within libelf's).
	if command -v python3 >/dev/null; then
		hole=$(cd "$(dirname "$0")/.." && pwd)/tests/gen/elfhole.py
		python3 "$hole" hole "$g" "$out/gcc-O2-g.hole-debug-info" .debug_info $((256 << 10)) &&
			n=$((n + 1))
		python3 "$hole" zlib "$g" "$out/gcc-O2-g.zlib-claim-debug-info" .debug_info \
			$((16 << 20)) && n=$((n + 1))
	fi
fi
# PLT stubs (lib/symbolize/symtab.c names them NAME@plt): IBT's .plt.sec and a 16-byte
# .plt.got, -z now, -fno-plt (.plt.got only), and lies about them: every
# .rela.plt symbol index out of range, .plt.got's sh_entsize 3, .rela.plt
# claiming 64 times its size.
echo '#include <stdio.h>
int main(int argc, char **argv) { puts(argv[0]); printf("%d", argc); return 0; }' >"$tmp/plt.c"
seed gcc-plt-ibt gcc -O2 -fcf-protection -Wl,-z,ibtplt "$tmp/plt.c" || true
seed gcc-plt-now gcc -O2 -Wl,-z,now "$tmp/plt.c" || true
seed gcc-noplt gcc -O2 -fno-plt "$tmp/plt.c" || true
if [ -f "$out/gcc-plt-ibt" ] && command -v python3 >/dev/null; then
	python3 - "$out/gcc-plt-ibt" "$out" <<'PY' && n=$((n + 3))
import struct, sys
src, out = sys.argv[1], sys.argv[2]
elf = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<Q", elf, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3a)
def shdr(i):
    return shoff + i * shentsize
stroff, = struct.unpack_from("<Q", elf, shdr(shstrndx) + 0x18)
def name(i):
    off = stroff + struct.unpack_from("<I", elf, shdr(i))[0]
    return bytes(elf[off:elf.index(0, off)]).decode()
secs = {name(i): shdr(i) for i in range(shnum)}
def variant(suffix, edit):
    b = bytearray(elf)
    edit(b)
    open("%s/gcc-plt-ibt.%s" % (out, suffix), "wb").write(b)
def bad_syms(b):
    off, size = struct.unpack_from("<QQ", b, secs[".rela.plt"] + 0x18)
    for r in range(off, off + size, 24):
        info, = struct.unpack_from("<Q", b, r + 8)
        struct.pack_into("<Q", b, r + 8, (0xffffff << 32) | (info & 0xffffffff))
variant("bad-rela-sym", bad_syms)
variant("bad-pltgot-entsize", lambda b: struct.pack_into("<Q", b, secs[".plt.got"] + 0x38, 3))
def big_rela(b):
    size, = struct.unpack_from("<Q", b, secs[".rela.plt"] + 0x20)
    struct.pack_into("<Q", b, secs[".rela.plt"] + 0x20, size * 64)
variant("big-rela-plt", big_rela)
PY
fi
if [ -f "$out/gxx-O1-g" ]; then
	size=$(stat -c %s "$out/gxx-O1-g")
	head -c $((size * 3 / 4)) "$out/gxx-O1-g" >"$out/gxx-O1-g.cut" && n=$((n + 1))
fi
# Not ELF at all.
printf '#!/bin/sh\necho not ELF\n' >"$out/text"
: >"$out/empty"

echo "gen_symelf_corpus: $n seeds in $out"
