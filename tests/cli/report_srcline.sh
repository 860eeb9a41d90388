#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report -s sym,srcline and -s srcline where the line table says line 0 of
# a known file (what rustc and clang emit for compiler-made code): perf
# 6.1 (built without libbfd, so running addr2line) reads addr2line's
# "zero.c:?" as file zero.c, line 0, and prints one row "zero.c:0" for the
# whole function; we printed a "SYM+OFFSET" row per sampled address.
# Compared with perf report on the same recording, table line for line.
#
# The workload: hot_c, plain C compiled with gcc -g (rows "main.c:N"),
# and zero_loop, a hand-written assembler loop whose every line-table row
# is line 0 of zero.c.  GNU as drops ".loc 1 0" (binutils' dwarf2dbg.c
# takes line 0 for "no location yet"), so zero.s is assembled by clang's
# integrated assembler, which keeps it; the .s carries its own minimal
# .debug_info compile unit (DW_AT_stmt_list, low_pc/high_pc) because
# addr2line finds a line table only through a CU that covers the address.
# The setup is checked with readelf (line 0 rows of zero.c) and addr2line
# ("zero.c:?") before anything is compared.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc clang addr2line readelf python3
tl_tmpdir dssrcline
cd "$tmp" || exit 2
export HOME=$tmp/home DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
tl_sanitizer_exitcodes
tl_perf_or_skip
# perf 6.12 too, when scripts/peers has it (tl_report_same: tl_report_612)
TL_PERF612=$(tl_peer_or_none perf-6.12)

cat >zero.s <<'EOF'
	.text
	.file 1 "zero.c"
	.globl	zero_loop
	.type	zero_loop, @function
zero_loop:
	.loc 1 0
	movq	%rdi, %rax
	xorl	%ecx, %ecx
.Lloop:
	.loc 1 0
	imulq	$31, %rax, %rax
	addq	%rcx, %rax
	incq	%rcx
	cmpq	%rdi, %rcx
	jb	.Lloop
	ret
.Lend:
	.size	zero_loop, .-zero_loop

	# one DWARF 4 compile unit, no children: name, stmt_list, low/high pc
	.section	.debug_abbrev,"",@progbits
	.uleb128 1		# abbreviation 1
	.uleb128 0x11		# DW_TAG_compile_unit
	.byte	0		# DW_CHILDREN_no
	.uleb128 0x03		# DW_AT_name
	.uleb128 0x08		# DW_FORM_string
	.uleb128 0x10		# DW_AT_stmt_list
	.uleb128 0x17		# DW_FORM_sec_offset
	.uleb128 0x11		# DW_AT_low_pc
	.uleb128 0x01		# DW_FORM_addr
	.uleb128 0x12		# DW_AT_high_pc
	.uleb128 0x06		# DW_FORM_data4 (a length)
	.byte	0, 0
	.byte	0

	.section	.debug_info,"",@progbits
	.long	.Linfo_end - .Linfo_start
.Linfo_start:
	.short	4		# version
	.long	.debug_abbrev
	.byte	8		# address size
	.uleb128 1
	.asciz	"zero.c"
	.long	.debug_line	# this object's line table (relocated at link)
	.quad	zero_loop
	.long	.Lend - zero_loop
.Linfo_end:
	.section	.note.GNU-stack,"",@progbits
EOF
cat >main.c <<'EOF'
#include <stdio.h>

unsigned long zero_loop(unsigned long n);

__attribute__((noinline, noclone)) unsigned long hot_c(unsigned long n)
{
	unsigned long x = n;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 13 + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

int main(void)
{
	printf("%lx %lx\n", zero_loop(300000000), hot_c(100000000));
	return 0;
}
EOF
if ! clang -c zero.s -o zero.o || ! gcc -O2 -g -o prog main.c zero.o; then
	echo "FAIL: cannot build the workload" >&2
	exit 1
fi

# The setup: zero_loop's rows are line 0 of zero.c, addr2line says "zero.c:?".
tl_case setup
start=$(nm prog | awk '$3 == "zero_loop" { print $1 }')
readelf --debug-dump=decodedline prog | awk '$1 == "zero.c" && $2 == "0"' | grep -q . ||
	fail "readelf shows no line-0 row of zero.c"
a2l=$(addr2line -e prog "$(printf '%x' $((0x$start + 8)))")
[ "${a2l##*/}" = "zero.c:?" ] || fail "addr2line in zero_loop: '$a2l', not zero.c:?"
tl_case_end
[ "$fails" = 0 ] || tl_finish report_srcline

if ! perf record -N -e cpu-clock:u -F 2000 -o w.data -- ./prog >rec.log 2>&1; then
	echo "FAIL: perf record: $(tail -3 rec.log)" >&2
	exit 1
fi

# What both tools print alike: perf's output without its first line, its
# bare "#" lines and its closing tip (as report_perfopts.sh).
norm() {
	sed '1d' | grep -v '^#$' | sed '/^# (Tip:/,$d' | awk 'NF { for (; e > 0; e--) print ""; print; next } { e++ }'
}

# Rows the two name otherwise by design (docs/report.md, "Not as perf"),
# where whether a sample lands is luck: a PLT stub (ld.so calls libc's
# stubs at start-up) is NAME@plt in ours, an address in perf 6.1; code of
# a symbol with no line row (crt1's _start, at start-up) is SYM+OFFSET in
# ours, "??:0" in perf.  Such rows are left out on both sides, and then
# the widths they change are not compared.
unplt() {
	python3 - "$1" "$2" <<'PY'
import re, sys
ours = open(sys.argv[1]).read().split("\n")
perf = open(sys.argv[2]).read().split("\n")
row = lambda l: l.strip() and not l.startswith("#")
same = {" ".join(l.split()) for l in perf}
plt = [l for l in ours if row(l) and "@plt" in l and " ".join(l.split()) not in same]
noline = [l for l in ours if row(l) and "@plt" not in l and re.search(r"\s\S+\+\d+\s*$", l)]
if not plt and not noline:
    sys.exit(0)
mine = {" ".join(l.split()) for l in ours}
ours = [l for l in ours if l not in plt and l not in noline]
if plt:
    # perf's name of a stub: an address, "@plt", another stub's NAME@plt
    # (libc's), or _init (the program's); a row of perf's that is ours too
    # stays
    perf = [l for l in perf if l.startswith("#") or " ".join(l.split()) in mine or
            not re.search(r"\] (0x[0-9a-f]+|\S*@plt|_init)\b", l)]
if noline:
    ours = [l for l in ours if not re.search(r"\s\?\?:0\s*$", l)]
    perf = [l for l in perf if not row(l) or not re.search(r"\s\?\?:0\s*$", l)]
# (and the column rulers "# ....  ...." as one dot a column: the widths
# are not compared)
flat = lambda l: re.sub(r"\.+", ".", l) if re.fullmatch(r"# [. ]+", l.rstrip()) else l
squeeze = lambda ls: "\n".join(" ".join(flat(l).split()) for l in ls)
open(sys.argv[1], "w").write(squeeze(ours))
open(sys.argv[2], "w").write(squeeze(perf))
PY
}

# same NAME OPTIONS...: our table of w.data is perf's
# (tl_report_same, with this test's norm and unplt).
same() {
	tl_report_same w.data "$@"
}

# --dsos prog: the rows of the program alone.  The rest of a recording
# are single samples in ld.so and libc at start-up (which ones is luck),
# and perf sizes Source:Line by the srclines it computed while sorting --
# only of entries that met another with the same symbol -- and cuts the
# others to that width, a quirk perf_report.sh tolerates; every row of
# prog here has many samples.
same sym-srcline -s sym,srcline --dsos prog
# zero_loop runs 3x hot_c's iterations, so it has samples (the floor: at
# least one); all of them are the one row zero.c:0.
tl_case zero-row
[ "$(grep -cE '\] zero_loop +zero\.c:0$' sym-srcline.ours.text)" = 1 ] ||
	fail "-s sym,srcline: not one row 'zero_loop zero.c:0': $(grep zero_loop sym-srcline.ours.text | head -3)"
! grep -q 'zero_loop+' sym-srcline.ours.text || fail "-s sym,srcline: a SYM+OFFSET row of zero_loop"
tl_case_end
same srcline -s srcline --dsos prog
grep -qE '%  zero\.c:0$' srcline.ours.text || fail "-s srcline: no row zero.c:0"

tl_finish report_srcline
