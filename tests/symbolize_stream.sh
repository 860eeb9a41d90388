#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dsostore symbolize` build-ID mode (lines "BUILD-ID ADDR" / "PATH ADDR" on
# stdin) stays bounded however hostile the stream (issue 9):
#
#  - long lines: a line over 64 KiB (65,536 bytes without its newline) gets
#    the answer of an unresolvable address, in the style in use (addr2line's
#    and llvm-symbolizer's own answer for one: their output on address 0 of
#    the binary), and one message on stderr, and the lines after it are
#    answered as addr2line / llvm-symbolizer answer them; a line of exactly
#    65,536 bytes is still a line.  A 128 MiB line must not be held: peak
#    RSS (GNU time's %M) under 64 MiB, half of it, which any copy of the
#    line would exceed (before: 1 GB line, 1.96 GB RSS).
#
# Under TSan the RSS check is skipped.
set -uo pipefail
. "$DS_SRC/tests/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need gcc nm addr2line llvm-symbolizer eu-readelf python3
[ -x /usr/bin/time ] || {
	echo "SKIP: no GNU time (/usr/bin/time) for the peak RSS" >&2
	exit 77
}
tl_tmpdir dssymstream
cd "$tmp" || exit 2
export HOME=$tmp/home PERF_BUILDID_DIR=$tmp/perf
unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS
mkdir -p "$HOME" "$PERF_BUILDID_DIR"
tl_sanitizer_exitcodes
sanitize=${DS_SANITIZE:-}
rss_check=1
case $sanitize in
*thread*) rss_check= ;;
esac

# peak_rss FILE: the KB GNU time wrote there.
peak_rss() {
	tail -1 "$1"
}

# ------------------------------------------------------------ the binary
cat >s.c <<'EOF'
#include <stdio.h>
__attribute__((noinline)) int sq(int x) { return x * x; }
__attribute__((noinline)) int cube(int x) { return sq(x) * x; }
__attribute__((noinline)) int quad(int x) { return sq(sq(x)); }
int main(int argc, char **argv) { (void)argv; printf("%d\n", cube(argc) + quad(argc)); return 0; }
EOF
gcc -g -O1 -Wl,--build-id=sha1 -o s s.c || {
	fail "compiling the fixture"
	exit 1
}
bid=$(tl_build_id s)
[ ${#bid} = 40 ] || {
	fail "no build ID in the fixture (eu-readelf: '$bid')"
	exit 1
}
mkdir -p "dbg/.build-id/${bid:0:2}"
cp s "dbg/.build-id/${bid:0:2}/${bid:2}.debug"
mapfile -t addrs < <(nm s | awk '$3 == "sq" || $3 == "cube" || $3 == "quad" { print "0x" $1 }')
[ ${#addrs[@]} = 3 ] || {
	fail "nm did not give the 3 functions: ${addrs[*]}"
	exit 1
}
bin=$tmp/s

# ---------------------------------------------------------- long lines
# A "PATH ADDR" line padded with blanks to N bytes: it would be a good
# request if it were not too long.
padded() {
	python3 -c 'import sys
line = sys.argv[1]
sys.stdout.write(line + " " * (int(sys.argv[2]) - len(line)) + "\n")' "$1" "$2"
}
{
	echo "$bin ${addrs[0]}"
	padded "$bin ${addrs[1]}" 3000000
	echo "$bid ${addrs[1]}"
	padded "$bin ${addrs[2]}" 65536
	padded "$bin ${addrs[0]}" 65537
	echo "$bin ${addrs[2]}"
} >long.in
# Expected, per style: the oracle for each line that fits, its answer to
# an address it cannot resolve (0) for each one too long.
for style in GNU LLVM; do
	if [ $style = GNU ]; then
		oracle() { addr2line -f -e "$bin" "$@"; }
	else
		oracle() { llvm-symbolizer --obj="$bin" "$@"; }
	fi
	{
		oracle "${addrs[0]}"
		oracle 0
		oracle "${addrs[1]}" "${addrs[2]}"
		oracle 0
		oracle "${addrs[2]}"
	} >long.$style.want
	tl_case "long lines, $style style"
	"$DSOSTORE" symbolize -f --output-style=$style --debug-dir dbg <long.in >long.$style.out 2>long.$style.err
	rc=$?
	[ $rc = 1 ] || fail "exit status $rc, not 1 (bad lines): $(head -3 long.$style.err)"
	cmp -s long.$style.want long.$style.out ||
		fail "not the oracle's answers: $(diff long.$style.want long.$style.out | head -10)"
	printf '%s\n' "dsostore: line 2: longer than 65536 bytes" \
		"dsostore: line 5: longer than 65536 bytes" >long.err.want
	cmp -s long.err.want long.$style.err ||
		fail "stderr is not one message per long line: $(head -c 400 long.$style.err)"
	tl_case_end
done
tl_case "long lines, JSON style"
"$DSOSTORE" symbolize --output-style=JSON --debug-dir dbg <long.in >long.json 2>long.json.err
python3 - long.json "$bin" "$bid" <<'PY' 2>long.json.check || fail "$(tail -1 long.json.check)"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 6, "%d objects for 6 lines" % len(rows)
modules = [r["ModuleName"] for r in rows]
assert modules == [sys.argv[2], "", sys.argv[3], sys.argv[2], "", sys.argv[2]], modules
for i in (1, 4):
    assert "longer than 65536 bytes" in rows[i]["Error"]["Message"], rows[i]
for i in (0, 2, 3, 5):
    assert "Error" not in rows[i] and rows[i]["Symbol"][0]["FunctionName"], rows[i]
PY
tl_case_end

tl_case "a 128 MiB line is not held"
{
	echo "$bin ${addrs[0]}"
	head -c $((128 << 20)) /dev/zero | tr '\0' x
	echo
	echo "$bin ${addrs[1]}"
} | /usr/bin/time -f %M -o huge.rss "$DSOSTORE" symbolize -f >huge.out 2>huge.err
rc=$?
{
	addr2line -f -e "$bin" "${addrs[0]}" 0 "${addrs[1]}"
} >huge.want
[ $rc = 1 ] || fail "exit status $rc: $(head -3 huge.err)"
cmp -s huge.want huge.out || fail "answers: $(diff huge.want huge.out | head)"
rss=$(peak_rss huge.rss)
# Under ASan its runtime's share is counted too: 64 MiB still tells a
# held line (128 MiB and more) from none.
if [ -n "$rss_check" ] && [ "$rss" -ge $((64 << 10)) ]; then
	fail "peak RSS $rss KB for a 128 MiB line: it was held"
fi
tl_case_end "(peak RSS $rss KB)"

tl_finish symbolize_stream
