#!/bin/bash
# Folded functions: where the linker merged identical functions
# of several CUs into one copy (gold and lld --icf=all), every one of those
# CUs describes the same bytes.  The answer for such an address must come
# from one CU: its function, its inline frames, its line.  Before this, the
# innermost scope of one CU and the line row of another could be joined
# into frames no program has.
#
# Three CUs each define fold_X() with the same body around their own
# always-inline helper_X(); the linker folds them.  For every byte of the
# folded code:
#   - no answer names functions of two CUs (from first principles: the
#     names say which CU they are from);
#   - GNU style equals addr2line's frames, and LLVM style
#     llvm-symbolizer's (but for the outermost function's name, which LLVM
#     takes from any of the ELF aliases the folding left): both take the
#     first CU in .debug_info order that has a line or a function there
#     (binutils' _bfd_dwarf2_find_nearest_line, LLVM's DWARFDebugAranges).
# clang's CUs are DWARF 4: addr2line 2.40 drops inline frames whose ranges
# are DW_FORM_rnglistx (docs/oracles.md).
set -u

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
SRC=${DS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lib/testlib.bash"
tl_need gcc clang ld.gold ld.lld addr2line llvm-symbolizer nm python3
tl_tmpdir dsicf
T=$tmp
export HOME=$T/home
unset DEBUGINFOD_URLS
mkdir -p "$HOME"

for x in a b c; do
	cat >"$T/$x.c" <<EOF
static inline __attribute__((always_inline)) int helper_$x(int v)
{
	int r = v * 3 + 1;

	if (r & 4)
		r ^= 0x55;
	return r;
}

__attribute__((noinline)) int fold_$x(const int *p, int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += helper_$x(p[i]) ^ i;
	return s;
}
EOF
done
cat >"$T/main.c" <<'EOF'
int fold_a(const int *, int), fold_b(const int *, int), fold_c(const int *, int);

int main(int argc, char **argv)
{
	int v[4] = { argc, 2, 3, 4 };

	(void)argv;
	return fold_a(v, 4) + fold_b(v, 3) + fold_c(v, 2);
}
EOF

# NAME CC LINKER: build, check the folding, compare.
run() {
	local name=$1 cc=$2 ld=$3 bin=$T/$1 lo hi addrs=$T/$1.addrs

	tl_case "$name"
	if ! (cd "$T" && $cc -O2 -g -ffunction-sections -fuse-ld="$ld" -Wl,--icf=all \
		-o "$bin" main.c a.c b.c c.c) 2>"$T/$name.cc.err"; then
		fail "build failed: $(head -3 "$T/$name.cc.err")"
		tl_case_end
		return
	fi
	# Folded: the three functions at one address.
	read -r lo hi <<<"$(nm -S "$bin" | awk '$4 ~ /^fold_[abc]$/ { a[$1] = $2 }
		END { n = 0; for (k in a) { n++; s = k; z = a[k] } if (n == 1) print s, z }')"
	if [ -z "$lo" ]; then
		fail "$ld did not fold fold_a, fold_b, fold_c: $(nm "$bin" | grep fold_ | tr '\n' ' ')"
		tl_case_end
		return
	fi
	lo=$((16#$lo))
	hi=$((lo + 16#$hi))
	python3 -c "import sys; [print(hex(a)) for a in range($lo, $hi)]" >"$addrs"

	"$DSOSTORE" symbolize --output-style=LLVM -f -i -a -e "$bin" <"$addrs" >"$T/$name.ds.llvm" ||
		fail "dsostore symbolize (LLVM) failed"
	llvm-symbolizer --obj="$bin" -f --inlines -a --no-demangle <"$addrs" >"$T/$name.llvm" ||
		fail "llvm-symbolizer failed"
	"$DSOSTORE" symbolize -f -i -a -e "$bin" <"$addrs" >"$T/$name.ds.gnu" ||
		fail "dsostore symbolize (GNU) failed"
	addr2line -f -i -a -e "$bin" <"$addrs" >"$T/$name.a2l" || fail "addr2line failed"

	python3 - "$T/$name.ds.llvm" "$T/$name.llvm" "$T/$name.ds.gnu" "$T/$name.a2l" <<'EOF' ||
import re, sys

def answers(path, llvm):
    # address -> list of frames (function, location)
    out, cur = {}, None
    lines = open(path).read().split("\n")
    i = 0
    while i < len(lines):
        l = lines[i]
        if re.fullmatch(r"0x[0-9a-f]+", l):
            cur = int(l, 16)
            out[cur] = []
            i += 1
            continue
        if not l:
            i += 1
            continue
        out[cur].append((l, lines[i + 1]))
        i += 2
    return out

def cu_of(fn):
    m = re.fullmatch(r"(?:fold|helper)_([abc])", fn)
    return m.group(1) if m else None

ds_l, llvm, ds_g, a2l = (answers(p, None) for p in sys.argv[1:5])
bad = 0
for addr, frames in ds_l.items():
    cus = {cu_of(f) for f, _ in frames} - {None}
    if len(cus) > 1:
        bad += 1
        if bad <= 5:
            print(f"  {addr:#x}: frames of CUs {sorted(cus)}: {frames}")
def outer_unnamed(ans):
    # llvm-symbolizer names the outermost frame after an ELF symbol at its
    # address (--use-symbol-table), and of the aliases a folding leaves it
    # takes any; its other frames and every location are DWARF's.
    return {a: fr[:-1] + [("*", fr[-1][1])] if fr else fr for a, fr in ans.items()}

for name, mine, ref in (("llvm-symbolizer", outer_unnamed(ds_l), outer_unnamed(llvm)),
                        ("addr2line", ds_g, a2l)):
    diff = [a for a in ref if mine.get(a) != ref[a]]
    for a in diff[:5]:
        print(f"  {a:#x} {name}: {ref[a]}\n  {'':>{len(hex(a))}} dsostore: {mine.get(a)}")
    print(f"  {len(ref)} addresses, {len(diff)} differ from {name}")
    bad += len(diff)
# The case is only a test if the CUs really claim these bytes.
if not any(cu_of(f) for fr in llvm.values() for f, _ in fr):
    print("  llvm-symbolizer names no fold_/helper_ function: nothing folded in DWARF?")
    bad += 1
sys.exit(1 if bad else 0)
EOF
		fail "answers differ (above)"
	tl_case_end "[$((hi - lo)) bytes folded]"
}

run gcc_gold gcc gold
run clang_lld "clang -gdwarf-4" lld
tl_finish symbolize_icf
