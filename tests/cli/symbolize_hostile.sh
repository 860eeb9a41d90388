#!/bin/bash
# `dsostore symbolize` on structurally valid debuginfo whose DWARF sections
# claim far more than is there.
#
# A small C program is built with -g, its debuginfo split off with
# objcopy --only-keep-debug, and copies of that file are made by
# tests/gen/elfhole.py:
#   hole     .debug_info is 4 GiB of zeros: a hole, so the file is a few
#            KB on disk (readelf -S reads it, du says so).  Zeros read as
#            units of length 0, one every 4 bytes;
#   zlib     .debug_info is SHF_COMPRESSED: a real zlib stream of zeros
#            (4 MB) whose Chdr says 4 GiB - 4 KiB, the most that libelf
#            0.188 inflates in one zlib call (its avail_out is 32 bits);
#            libelf's own limit (1032 to 1) lets it through;
#   zlib4g   the same claiming exactly 4 GiB;
#   zstd     ELFCOMPRESS_ZSTD, RLE blocks (128 KB) claiming 4 GiB;
#   symtab   .symtab is a hole of 4 GiB - 16 (178 million null symbols);
#            the DWARF, intact, must then give addr2line's whole answer;
#   debuglink  the stripped binary, its .gnu_debuglink naming a copy
#            whose .debug_info is a hole of 1 GiB + 3 (over 2^30: our CRC
#            sums a hole in 2^30 steps), with the CRC that Python's zlib
#            sums over every byte: ours skips the hole, and must agree, or
#            the file is refused.
# For each, symbolize -v of an address inside a function must end under
# `timeout 30` (not a timing assertion: bench/ is for speed), peak RSS
# below 100 MB (/usr/bin/time %M), name the function (the oracle:
# addr2line -f on the original binary, agreeing with nm), and say on
# stderr what was wrong with which section.  The untouched debuginfo must
# give what addr2line gives, so that the fixture itself is known good.
#
# DS_KEEP_TMP=1 keeps the scratch directory.
set -u

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
SRC=${DS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lib/testlib.bash"
tl_need gcc objcopy nm readelf addr2line python3 du timeout
if [ ! -x /usr/bin/time ]; then
	echo "SKIP: /usr/bin/time (GNU time) is not installed" >&2
	exit 77
fi

tl_tmpdir dshostile
T=$tmp
# Nothing of the user's: no ~/.debug, no servers, no /usr/lib/debug.
export HOME=$T/home PERF_BUILDID_DIR=$T/perf
unset DEBUGINFOD_URLS
mkdir -p "$HOME" "$PERF_BUILDID_DIR" "$T/empty"
HOLE=(python3 "$SRC/tests/gen/elfhole.py")
GIB4=$((1 << 32))
RSS_MAX_KB=$((100 * 1024))

cat >"$T/prog.c" <<'EOF'
#include <stdio.h>
__attribute__((noinline)) int work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += i * i % 7;
	return s;
}
int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", work(argc * 1000));
	return 0;
}
EOF
gcc -g -O1 -Wl,--build-id -o "$T/prog" "$T/prog.c" || exit 2
objcopy --only-keep-debug "$T/prog" "$T/prog.debug" || exit 2

# An address in the middle of work(), from nm; addr2line names its function.
read -r start size < <(nm -S "$T/prog" | awk '$4 == "work" { print $1, $2 }')
[ -n "${start:-}" ] || { echo "FAIL: nm finds no work() in prog" >&2; exit 2; }
ADDR=$(printf '0x%x' $((0x$start + 0x$size / 2)))
FUNC=$(addr2line -f -e "$T/prog" "$ADDR" | head -1)
[ "$FUNC" = work ] || { echo "FAIL: addr2line names $ADDR '$FUNC', nm says work" >&2; exit 2; }

# sym FILE: symbolize -v -f ADDR of FILE: $T/out, $T/err, $T/rss (peak
# RSS in KB, of timeout's child too: time reports what wait4() does, the
# largest of the waited-for descendants); status that of symbolize (124
# when timeout stopped it).
sym() {
	/usr/bin/time -f %M -o "$T/rss" timeout 30 "$DSOSTORE" symbolize -v --debug-dir "$T/empty" \
		--perf-buildid-dir "" -e "$1" -f "$ADDR" >"$T/out" 2>"$T/err"
}

# section_fits FILE: readelf -S reads FILE without a warning and its
# .debug_info lies inside it; sets SEC_SIZE (bytes) and SEC_OFF.
section_fits() {
	local fsize off='' sz=''

	SEC_SIZE='' SEC_OFF=''
	if ! readelf -SW "$1" >"$T/sections" 2>"$T/readelf.err" || grep -q Warning "$T/readelf.err"; then
		fail "readelf -S does not read $(basename "$1"): $(head -3 "$T/readelf.err")"
		return 1
	fi
	read -r off sz < <(sed -n 's/.*\] \.debug_info *[A-Z]* *[0-9a-f]* \([0-9a-f]*\) \([0-9a-f]*\).*/\1 \2/p' \
		"$T/sections")
	fsize=$(stat -c %s "$1")
	if [ -z "$off" ] || [ $((0x$off + 0x$sz)) -gt "$fsize" ]; then
		fail "$(basename "$1"): .debug_info (${off:-?} + ${sz:-?}) not inside its $fsize bytes"
		return 1
	fi
	SEC_SIZE=$((0x$sz)) SEC_OFF=$((0x$off))
}

tl_case baseline
if ! sym "$T/prog.debug"; then
	fail "symbolize of the untouched debuginfo exits $?: $(head -3 "$T/err")"
fi
addr2line -f -e "$T/prog" "$ADDR" >"$T/want"
cmp -s "$T/want" "$T/out" || fail "untouched debuginfo: '$(tr '\n' ' ' <"$T/out")', addr2line: '$(tr '\n' ' ' <"$T/want")'"
tl_case_end

# check FILE fn|whole STDERR-REGEX...: the assertions every hostile copy
# shares; with "whole", the output must be addr2line's on the original,
# not only the function name.  Each regex must match a line of stderr.
check() {
	local file=$1 whole=$2 rc=0 rss re

	shift 2

	sym "$file" || rc=$?
	rss=$(tail -1 "$T/rss" 2>/dev/null)
	if [ "$rc" = 124 ]; then
		fail "symbolize did not finish in 30 s"
	elif [ "$rc" != 0 ]; then
		fail "symbolize exits $rc: $(head -3 "$T/err")"
	fi
	if ! [[ ${rss:-x} =~ ^[0-9]+$ ]] || [ "$rss" -ge "$RSS_MAX_KB" ]; then
		fail "peak RSS ${rss:-?} KB, not under $RSS_MAX_KB KB"
	fi
	[ "$(head -1 "$T/out")" = "$FUNC" ] ||
		fail "names $ADDR '$(head -1 "$T/out")', addr2line on the original says $FUNC"
	[ "$whole" != whole ] || cmp -s "$T/want" "$T/out" ||
		fail "says '$(tr '\n' ' ' <"$T/out")', addr2line on the original '$(tr '\n' ' ' <"$T/want")'"
	for re; do
		grep -Eq "$re" "$T/err" || fail "stderr does not match /$re/: $(head -3 "$T/err")"
	done
	[ "$CASE_FAILED" = 0 ] || sed 's/^/    stderr: /' "$T/err" | head -5 >&2
	tl_case_end "(${rss:-?} KB)"
}

tl_case hole
"${HOLE[@]}" hole "$T/prog.debug" "$T/hole.debug" .debug_info $GIB4 || exit 2
if section_fits "$T/hole.debug"; then
	[ "$SEC_SIZE" = $GIB4 ] || fail ".debug_info is $SEC_SIZE bytes, not 4 GiB"
	disk=$(du -k "$T/hole.debug" | cut -f1)
	[ "$disk" -lt 1024 ] || fail "hole.debug takes $disk KB on disk: the filesystem made no hole"
fi
check "$T/hole.debug" fn '\.debug_info offset 0x0 is no unit header.*CU scan stops'

for v in zlib:$((GIB4 - 4096)) zlib4g:$GIB4 zstd:$GIB4; do
	name=${v%%:*}
	claim=${v#*:}
	tl_case "$name"
	"${HOLE[@]}" "${name%4g}" "$T/prog.debug" "$T/$name.debug" .debug_info "$claim" || exit 2
	section_fits "$T/$name.debug"
	check "$T/$name.debug" fn "\.debug_info: [0-9]+ bytes of ${name%4g} that claim $claim decompressed.*not decompressed"
done

tl_case symtab
"${HOLE[@]}" hole "$T/prog.debug" "$T/symtab.debug" .symtab $((GIB4 - 16)) || exit 2
[ "$(du -k "$T/symtab.debug" | cut -f1)" -lt 1024 ] || fail "symtab.debug is not sparse"
check "$T/symtab.debug" whole '\.symtab: [0-9]+ null symbols in a row.*not read'

tl_case debuglink
mkdir -p "$T/dl"
objcopy --strip-debug "$T/prog" "$T/dl/prog.nolink" || exit 2
"${HOLE[@]}" hole "$T/prog.debug" "$T/dl/prog.debug" .debug_info $(((1 << 30) + 3)) || exit 2
[ "$(du -k "$T/dl/prog.debug" | cut -f1)" -lt 1024 ] || fail "dl/prog.debug is not sparse"
# .gnu_debuglink as binutils writes it: the name, NUL, zeros to 4, the
# CRC-32 little-endian (objcopy --add-gnu-debuglink would read it through
# stdio: 5 s a GiB).
python3 - "$T/dl/prog.debug" "$T/dl/link" <<'EOF' || exit 2
import os, struct, sys, zlib
crc = 0
with open(sys.argv[1], 'rb') as f:
    for b in iter(lambda: f.read(1 << 22), b''):
        crc = zlib.crc32(b, crc)
name = os.path.basename(sys.argv[1]).encode() + b'\0'
name += b'\0' * (-len(name) % 4)
open(sys.argv[2], 'wb').write(name + struct.pack('<I', crc))
EOF
objcopy --add-section .gnu_debuglink="$T/dl/link" "$T/dl/prog.nolink" "$T/dl/prog" || exit 2
check "$T/dl/prog" fn 'found .*/dl/prog\.debug \(debuglink\)' 'prog\.debug: .*no unit header'

tl_finish symbolize_hostile
