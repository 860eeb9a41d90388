#!/bin/bash
# Names as binutils and LLVM print them: `dsostore symbolize -C`
# against the tools themselves, on code nobody here wrote.
#
# Programs: a Rust program built by /usr/bin/rustc (Debian's 1.63, not a
# rustup one) with legacy mangling (1.63's default: `-C
# symbol-mangling-version=legacy` would need -Z unstable-options) and with
# v0 (`-C symbol-mangling-version=v0`, stable since 1.59); googletest with
# its samples, gcc and clang (tests/corpus/gtest.bash); a C program whose
# functions carry names binutils leaves alone (D, broken Itanium, a
# _GLOBAL__sub_I_ constructor).
#
# frames:  ~2000 addresses (function starts and middles) through
#          `symbolize -C -f -i -a` and `addr2line -C -f -i -a`.  Where the
#          answers without -C already differ (addr2line's own quirks, see
#          docs/oracles.md: clang's rnglistx, C++ functions without a
#          linkage name) the address says nothing about names and is only
#          counted; everywhere else the -C answers must be identical.
# symbols: every function symbol, on a copy without DWARF: GNU style names
#          it as `nm -C` (bfd_demangle, addr2line's options) names one of
#          the symbols there; LLVM style as llvm-cxxfilt (LLVM 14's
#          demangler, llvm-symbolizer's) spells the raw name, except for
#          the kinds of names docs/oracles.md lists, which are counted.
set -u

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
SRC=${DS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lib/testlib.bash"
tl_need gcc addr2line nm objcopy llvm-cxxfilt python3
RUSTC=/usr/bin/rustc
if [ ! -x "$RUSTC" ]; then
	echo "SKIP: $RUSTC (Debian's rustc) is not installed" >&2
	exit 77
fi
rc=0
GTEST=$(tl_corpus gtest) || rc=$?
[ "$rc" = 0 ] || exit "$rc"
tl_tmpdir dsnames
T=$tmp
export HOME=$T/home
mkdir -p "$HOME"

# ---------------------------------------------------------------- sources

cat >"$T/names.rs" <<'EOF'
use std::collections::HashMap;
use std::fmt;

pub struct Point<T> {
    x: T,
    y: T,
}

impl<T: fmt::Display> fmt::Display for Point<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

pub trait Shape {
    fn area(&self) -> f64;
}

impl Shape for Point<f64> {
    #[inline(never)]
    fn area(&self) -> f64 {
        self.x * self.y
    }
}

#[inline(never)]
fn total<T: Copy + std::ops::Add<Output = T>>(v: &[T], zero: T) -> T {
    v.iter().fold(zero, |a, &b| a + b)
}

#[inline(never)]
fn shapes(n: usize) -> Vec<Box<dyn Shape>> {
    (0..n).map(|i| Box::new(Point { x: i as f64, y: 2.0 }) as Box<dyn Shape>).collect()
}

fn main() {
    let mut m: HashMap<String, Vec<Point<i32>>> = HashMap::new();
    for i in 0..12 {
        m.entry(format!("k{}", i % 4)).or_default().push(Point { x: i, y: -i });
    }
    let mut keys: Vec<_> = m.keys().cloned().collect();
    keys.sort();
    for k in &keys {
        for p in &m[k] {
            println!("{} {}", k, p);
        }
    }
    let a: f64 = shapes(5).iter().map(|s| s.area()).sum();
    println!("{} {} {}", total(&[1, 2, 3], 0), total(&[1.5f64, 2.5], 0.0), a);
}
EOF

# Names that are no Itanium, Rust or (for binutils' default style) D names
# to demangle, on real functions.
cat >"$T/odd.c" <<'EOF'
int d_function(int) __asm__("_D4test3fooFiZi");
int d_function(int x) { return x + 1; }
int broken(int) __asm__("_Zjunk");
int broken(int x) { return x * 3; }
int ctor(int) __asm__("_GLOBAL__sub_I_odd.c");
int ctor(int x) { return x - 2; }
int v0_like(int) __asm__("_RNvCsjunk");
int v0_like(int x) { return x ^ 5; }
int main(int argc, char **argv)
{
	(void)argv;
	return d_function(argc) + broken(argc) + ctor(argc) + v0_like(argc);
}
EOF

# C++ names whose LLVM spelling LLVM style follows (llvm_respell and
# friends in lib/symbolize/names.c), one function each: empty packs, '>' '>'
# after an empty pack, closure and unnamed-type constructors and
# destructors, references to cv-qualified function types, gcc's CI4
# inheriting constructor (DWARF linkage names); and operators
# that must keep their '>' '>'.
python3 - "$T/spell.c" <<'EOF'
import sys
names = ["_Z1fIJEiEvv", "_Z1fIiJEiEvv", "_Z1fIJEJEEvv", "_ZN1AIJEE1fEv",
         "_ZSt12__get_helperILm1ESt14default_deleteIKiEJEERT0_RSt11_Tuple_implIXT_EJS3_DpT1_EE",
         "_ZN3FooUt_C2Ev", "_ZN3FooUt0_D1Ev", "_ZZ4mainENKUlvE_C2Ev", "_ZZ4mainENKUlvE0_D2Ev",
         "_ZZ4mainENKUliE_clEi", "_Z1fIFivEEvRKT_", "_Z1fIFivEEvPKT_", "_Z1fIFviEEvRVKT_",
         "_ZrsIiEvv", "_ZN1AIiEgtIiEEbv", "_ZN1AIN1BIiEEE1fIN1CIiEEEEvv", "_ZlsRSoRK1A",
         "_ZN1DCI41BEi"]
with open(sys.argv[1], "w") as f:
    for i, n in enumerate(names):
        f.write('int f%d(int) __asm__("%s");\nint f%d(int x) { return x + %d; }\n' % (i, n, i, i))
    f.write("int main(int argc, char **argv)\n{\n\t(void)argv;\n\treturn %s;\n}\n" %
            " + ".join("f%d(argc)" % i for i in range(len(names))))
EOF

"$RUSTC" -g -C opt-level=2 -o "$T/rust-legacy" "$T/names.rs" >"$T/rustc.log" 2>&1 &&
	"$RUSTC" -g -C opt-level=2 -C symbol-mangling-version=v0 -o "$T/rust-v0" \
		"$T/names.rs" >>"$T/rustc.log" 2>&1 || {
	echo "rustc failed:" >&2
	cat "$T/rustc.log" >&2
	exit 2
}
gcc -O1 -g -o "$T/odd" "$T/odd.c" || exit 2
gcc -O1 -o "$T/spell" "$T/spell.c" || exit 2
# The mangling asked for is the one we got: v0 names for the crate's own
# functions, legacy ones otherwise.
nm "$T/rust-v0" | grep -q ' _RNvCs[0-9A-Za-z_]*5names4main$' || fail "rust-v0: no v0 name for main"
nm "$T/rust-legacy" | grep -q ' _ZN5names4main17h[0-9a-f]*E$' || fail "rust-legacy: no legacy name for main"

PROGS=("rust-legacy:$T/rust-legacy" "rust-v0:$T/rust-v0" "odd:$T/odd" "spell:$T/spell")
# Every build of the googletest corpus: -O0 keeps the most names out of
# line (5,145 function symbols), clang names its closures its own way.
for v in gcc-O0-g4 gcc-O2 gcc-O2-g5-lto clang-O2 clang-O2-g4-gz; do
	[ -x "$GTEST/$v/prog" ] || fail "no $GTEST/$v/prog"
	PROGS+=("gtest-$v:$GTEST/$v/prog")
done

# ----------------------------------------------------------------- checks

# sample NAME BIN: up to 1000 function symbols spread over the table, the
# start and the middle of each, into $T/NAME.addrs.
sample()
{
	nm -S --defined-only "$2" | awk '$3 ~ /^[tTwW]$/ { print $1, $2 }' | sort -u >"$T/$1.syms"
	python3 - "$T/$1.syms" >"$T/$1.addrs" <<'EOF'
import sys
syms = [l.split() for l in open(sys.argv[1])]
step = max(1, (len(syms) + 999) // 1000)
for lo, size in syms[::step]:
    lo, size = int(lo, 16), int(size, 16)
    print("0x%x" % lo)
    if size > 1:
        print("0x%x" % (lo + size // 2))
EOF
}

# frames NAME BIN: the -C answers compared where the raw ones agree.
frames()
{
	local name=$1 bin=$2 c
	sample "$name" "$bin"
	for c in raw C; do
		local opt=()
		[ "$c" = C ] && opt=(-C)
		addr2line "${opt[@]}" -f -i -a -e "$bin" <"$T/$name.addrs" >"$T/$name.a2l.$c"
		"$DSOSTORE" symbolize "${opt[@]}" -f -i -a -e "$bin" <"$T/$name.addrs" \
			>"$T/$name.ds.$c" 2>"$T/$name.ds.err" || fail "$name: dsostore symbolize failed"
	done
	python3 - "$T/$name" "$name" <<'EOF' || fail "$name: -C answers differ from addr2line's"
import sys
base, name = sys.argv[1], sys.argv[2]
def blocks(path):
    out = []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("0x"):
            out.append([])
        else:
            out[-1].append(line)
    return out
a_raw, a_c = blocks(base + ".a2l.raw"), blocks(base + ".a2l.C")
d_raw, d_c = blocks(base + ".ds.raw"), blocks(base + ".ds.C")
assert len(a_raw) == len(a_c) == len(d_raw) == len(d_c), "block counts differ"
compared = skipped = demangled = bad = 0
for i, (ar, ac, dr, dc) in enumerate(zip(a_raw, a_c, d_raw, d_c)):
    if ar != dr:
        skipped += 1
        continue
    compared += 1
    demangled += sum(1 for r, c in zip(ar[0::2], ac[0::2]) if r != c)
    if ac != dc:
        bad += 1
        if bad <= 5:
            print("  %s #%d: addr2line -C %r\n  %s      dsostore -C  %r" % (name, i, ac, "", dc))
print("  %s frames: %d addresses, %d compared (%d frames demangled), %d differ; %d not"
      " compared (raw answers differ)" % (name, len(a_raw), compared, demangled, bad, skipped))
# Enough of the sample must say something about names.
sys.exit(1 if bad or compared < 0.75 * len(a_raw) else 0)
EOF
}

# symbols NAME BIN: every function symbol's name, GNU and LLVM style.
symbols()
{
	local name=$1 bin=$2
	objcopy --strip-debug "$bin" "$T/$name.nodbg" || return 1
	nm --defined-only "$T/$name.nodbg" | awk '$2 ~ /^[tTwW]$/ { print "0x" $1 }' |
		sort -u >"$T/$name.sa"
	nm -C --defined-only "$T/$name.nodbg" | awk '$2 ~ /^[tTwW]$/' >"$T/$name.nmC"
	"$DSOSTORE" symbolize -f -e "$T/$name.nodbg" <"$T/$name.sa" | awk 'NR % 2 == 1' \
		>"$T/$name.raw"
	"$DSOSTORE" symbolize -C -f -e "$T/$name.nodbg" <"$T/$name.sa" | awk 'NR % 2 == 1' \
		>"$T/$name.gnu"
	"$DSOSTORE" symbolize --output-style=LLVM -e "$T/$name.nodbg" <"$T/$name.sa" |
		awk 'NR % 3 == 1' >"$T/$name.llvm"
	llvm-cxxfilt <"$T/$name.raw" >"$T/$name.llx"
	python3 - "$T/$name" "$name" "$SRC/tests/gen" <<'EOF' || fail "$name: names differ from nm -C / llvm-cxxfilt"
import re, sys
base, name = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
import symbolize_gen as sg
lines = lambda ext: [l.rstrip("\n") for l in open(base + ext, errors="replace")]
aliases = {}
for l in lines(".nmC"):
    addr, _, nm = l.split(" ", 2)
    aliases.setdefault(int(addr, 16), set()).add(nm)
addrs, raw, gnu, llvm, llx = lines(".sa"), lines(".raw"), lines(".gnu"), lines(".llvm"), lines(".llx")
assert len(addrs) == len(raw) == len(gnu) == len(llvm) == len(llx), "line counts differ"
bad = demangled = 0
known = {}
kind = sg.llvm_spelling_kind
for a, r, g, l, x in zip(addrs, raw, gnu, llvm, llx):
    if g != r:
        demangled += 1
    if g not in aliases.get(int(a, 16), ()):
        bad += 1
        if bad <= 5:
            print("  %s %s GNU: %r, nm -C: %r" % (name, a, g, sorted(aliases.get(int(a, 16), ()))))
    if l != x:
        k = kind(l, x, r)
        if k:
            known[k] = known.get(k, 0) + 1
        else:
            bad += 1
            if bad <= 5:
                print("  %s %s LLVM: %r, llvm-cxxfilt: %r" % (name, a, l, x))
print("  %s symbols: %d names (%d demangled), %d differ; LLVM spelling not followed: %s"
      % (name, len(addrs), demangled, bad, ", ".join("%d %s" % (n, k) for k, n in
                                                    sorted(known.items())) or "none"))
sys.exit(1 if bad else 0)
EOF
}

for p in "${PROGS[@]}"; do
	name=${p%%:*} bin=${p#*:}
	tl_case "$name"
	case $name in odd | spell) ;; *) frames "$name" "$bin" ;; esac
	symbols "$name" "$bin" || fail "$name: symbols"
	tl_case_end || true
done
# Inheriting constructors (CI1/CI2, which gcc -O0 keeps out of line):
# LLVM names one after its own class, libiberty after the base class.  In
# LLVM style, every one of the -O0 build's names as llvm-symbolizer -C.
tl_case "inheriting constructors, LLVM style"
O0=$GTEST/gcc-O0-g4/prog
if [ -x "$O0" ]; then
	nm "$O0" | awk '$3 ~ /C[I][12]/ { print "0x" $1 }' | sort -u >"$T/ci.addrs"
	n=$(wc -l <"$T/ci.addrs")
	[ "$n" -gt 0 ] || fail "no inheriting constructor in $O0"
	"$DSOSTORE" symbolize --output-style=LLVM -C -f -e "$O0" <"$T/ci.addrs" |
		awk 'NR % 3 == 1' >"$T/ci.ds"
	llvm-symbolizer --obj="$O0" -f -C <"$T/ci.addrs" | awk 'NR % 3 == 1' >"$T/ci.llvm"
	cmp -s "$T/ci.ds" "$T/ci.llvm" ||
		fail "names differ from llvm-symbolizer's: $(diff "$T/ci.ds" "$T/ci.llvm" | head -4)"
	tl_case_end "[$n addresses]" || true
else
	CASE=
	echo "skip inheriting constructors: no $O0"
fi
# D names stay as binutils leaves them; a v0 name is demangled.
grep -qx '_D4test3fooFiZi' "$T/odd.gnu" || fail "odd: the D name is not left alone"
grep -q '^names::main$' "$T/rust-v0.gnu" || fail "rust-v0: main is not names::main"
grep -q '^names::main::h[0-9a-f]*$' "$T/rust-legacy.llvm" ||
	fail "rust-legacy: LLVM style drops the hash of main"
tl_finish symbolize_names
