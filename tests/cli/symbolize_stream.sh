#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dsostore symbolize` build-ID mode (lines "BUILD-ID ADDR" / "PATH ADDR" on
# stdin) stays bounded however hostile the stream:
#
#  - long lines: a line over 64 KiB (65,536 bytes without its newline) gets
#    the answer of an unresolvable address, in the style in use (addr2line's
#    and llvm-symbolizer's own answer for one: their output on address 0 of
#    the binary), and one message on stderr, and the lines after it are
#    answered as addr2line / llvm-symbolizer answer them; a line of exactly
#    65,536 bytes is still a line.  A 128 MiB line must not be held: peak
#    RSS (GNU time's %M) under 64 MiB, half of it, which any copy of the
#    line would exceed (before: 1 GB line, 1.96 GB RSS).
#  - many distinct build IDs, against dsserver serving nothing (every
#    request a 404): the server's request log must name each distinct build
#    ID exactly once (/control/stats' per-URL counts), also when IDs come
#    back after their batch was let go (the client caches the 404 on disk:
#    a miss it recorded is not asked again) or in another process; and
#    memory must be flat: 20,000 IDs may take no more than 4 MiB over
#    2,000 IDs (both with --batch 256: 8 and 83 batches).  Before the
#    batching each ID cost some 800 bytes held to the end (20,000 IDs:
#    35 MB, 200,000: 227 MB): 18,000 more IDs would add over 13 MiB, and a
#    leak of even 240 bytes per ID breaks the bound.  Then the default
#    batch (4,096) over 5,000 IDs: two batches, one request per ID.
#
# Under ASan the RSS comparisons run with its quarantine off (it holds
# freed memory, up to 256 MB, on purpose); under TSan they are skipped, and
# the big stream has 5,000 IDs (20 batches): each batch of the fetcher
# costs a second or so there, 20,000 IDs a minute.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need gcc nm addr2line llvm-symbolizer eu-readelf python3 curl
tl_need_dsserver
[ -x /usr/bin/time ] || {
	echo "SKIP: no GNU time (/usr/bin/time) for the peak RSS" >&2
	exit 77
}
tl_tmpdir dssymstream
cd "$tmp" || exit 2
export HOME=$tmp/home PERF_BUILDID_DIR=$tmp/perf
unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
mkdir -p "$HOME" "$PERF_BUILDID_DIR"
tl_sanitizer_exitcodes
sanitize=${DS_SANITIZE:-}
rss_check=1
case $sanitize in
*thread*) rss_check= ;;
esac
# The client's cache takes one file per miss, fsync()ed: on tmpfs when
# there is one, else the test spends its time in the disk.
cachebase=$tmp
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	cachebase=$(mktemp -d /dev/shm/dssymstream.XXXXXX) || exit 2
	tl_also_rm+=("$cachebase")
fi

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

# ------------------------------------------- -e: blocks of bare addresses
# -e answers a block of up to 65,536 lines at a time, and while every line
# of a block is an address it keeps the addresses alone, read straight
# from the input buffer (a word of digits at a time); another kind of line
# makes the block's lines whole first.  80,000 lines over the fixture's
# functions (every byte of sq, cube and quad, again and again, shuffled),
# spelled each way the fast reader takes (0x, 0X, bare, upper-case digits,
# 16 digits) and one it leaves to the line parser (17 digits, leading
# zeros), in two blocks: GNU style against addr2line, which reads the
# same lines (and "zz", binutils' 0); LLVM style, lines spelled 0x, with a
# bad line 5,000 lines into the second block (past the first 4,096 items,
# whose arrays are made ready apart) and a line over 64 KiB 1,000 lines
# later, against llvm-symbolizer given 0 there, and one message each.
python3 - "$bin" <<'PY' >bare.check 2>&1 || fail "generating the lines: $(tail -2 bare.check)"
import random, subprocess, sys
out = subprocess.run(["nm", "-S", sys.argv[1]], capture_output=True, text=True).stdout
addrs = []
for l in out.splitlines():
    f = l.split()
    if len(f) == 4 and f[3] in ("sq", "cube", "quad"):
        lo, size = int(f[0], 16), int(f[1], 16)
        addrs += range(lo, lo + size)
assert len(addrs) > 10, out
rng = random.Random(7)
spell = [lambda a: "0x%x" % a, lambda a: "0X%X" % a, lambda a: "%x" % a,
         lambda a: "0x%016x" % a, lambda a: "0x%017x" % a, lambda a: "0x%X" % a]
gnu, llvm, llvm_oracle = [], [], []
for i in range(80000):
    a = rng.choice(addrs)
    gnu.append(spell[i % len(spell)](a))
    if i == 65536 + 5000:
        llvm.append("zz"), llvm_oracle.append("0x0")
    elif i == 65536 + 6000:
        llvm.append("0x%x" % a + " " * 70000), llvm_oracle.append("0x0")
    else:
        w = "0x%x" % a if i % 2 else "0x%X" % a
        llvm.append(w), llvm_oracle.append(w)
gnu[70000] = "zz"
for name, lines in (("bare.gnu.in", gnu), ("bare.llvm.in", llvm), ("bare.llvm.oracle", llvm_oracle)):
    with open(name, "w") as f:
        f.write("\n".join(lines) + "\n")
PY
tl_case "-e: 80,000 addresses spelled every way, GNU style"
addr2line -a -f -i -e "$bin" <bare.gnu.in >bare.gnu.want || fail "addr2line failed"
"$DSOSTORE" symbolize -e "$bin" -a -f -i <bare.gnu.in >bare.gnu.out 2>bare.gnu.err ||
	fail "exit status $?: $(head -3 bare.gnu.err)"
cmp -s bare.gnu.want bare.gnu.out ||
	fail "not addr2line's answers: $(diff bare.gnu.want bare.gnu.out | head -10)"
tl_case_end
tl_case "-e: a bad and a long line in a block of addresses, LLVM style"
llvm-symbolizer --obj="$bin" <bare.llvm.oracle >bare.llvm.want || fail "llvm-symbolizer failed"
"$DSOSTORE" symbolize -e "$bin" --output-style=LLVM <bare.llvm.in >bare.llvm.out 2>bare.llvm.err
rc=$?
[ $rc = 1 ] || fail "exit status $rc, not 1 (bad lines): $(head -3 bare.llvm.err)"
cmp -s bare.llvm.want bare.llvm.out ||
	fail "not llvm-symbolizer's answers: $(diff bare.llvm.want bare.llvm.out | head -10)"
printf '%s\n' "dsostore: zz: not a hexadecimal address" \
	"dsostore: line 71537: longer than 65536 bytes" >bare.err.want
cmp -s bare.err.want bare.llvm.err || fail "stderr: $(head -c 400 bare.llvm.err)"
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

# ------------------------------------------------- many distinct build IDs
mkdir -p "$tmp/empty-served"
tl_start_dsserver port empty "$tmp/empty-served" --max-runtime 300 || exit 1
export DEBUGINFOD_URLS=http://127.0.0.1:$port
ctl() {
	curl -s --max-time 10 "$DEBUGINFOD_URLS/control/$1"
}

# ids N SEED: N distinct made-up 40-digit build IDs, one per line.
ids() {
	python3 -c 'import random, sys
r = random.Random(int(sys.argv[2]))
seen = set()
while len(seen) < int(sys.argv[1]):
    h = "%040x" % r.getrandbits(160)
    if h not in seen:
        seen.add(h)
        print(h)' "$1" "$2"
}

# stream NAME BATCH IDS-FILE [REPEATS-FILE]: the IDs as "BUILD-ID 0x1000"
# lines, then the repeated ones again; checks the answers (each "??",
# "??:0"), and that the server was asked for each distinct ID once.  The
# peak RSS goes to NAME.rss.
stream() {
	local name=$1 batch=$2 ids=$3 again=${4:-/dev/null} rc n
	local -a asan=()

	cat "$ids" "$again" | sed 's/$/ 0x1000/' >"$name.in"
	n=$(wc -l <"$name.in")
	ctl reset-stats >/dev/null
	# ASan keeps freed memory in its quarantine on purpose: off, where
	# the RSS is compared.
	[[ $sanitize == *address* ]] && asan=(ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=0")
	env "${asan[@]}" DEBUGINFOD_CACHE_PATH="$cachebase/cache-$name" \
		/usr/bin/time -f %M -o "$name.rss" "$DSOSTORE" symbolize -f --batch "$batch" \
		<"$name.in" >"$name.out" 2>"$name.err"
	rc=$?
	[ $rc = 1 ] || fail "$name: exit status $rc, not 1: $(grep -v 'no debuginfo' "$name.err" | head -3)"
	[ "$(grep -c '^??$' "$name.out")" = "$n" ] && [ "$(grep -c '^??:0$' "$name.out")" = "$n" ] &&
		[ "$(wc -l <"$name.out")" = $((2 * n)) ] ||
		fail "$name: not ?? and ??:0 for each of the $n lines: $(head -4 "$name.out")"
	# The request count per URL: each distinct ID's debuginfo, once.
	ctl idle >/dev/null
	ctl stats | awk '$1 == "url" { print $2, $3 }' | sort -k2 >"$name.urls"
	sed 's|.*|1 /buildid/&/debuginfo|' "$ids" | sort -k2 >"$name.want"
	cmp -s "$name.want" "$name.urls" ||
		fail "$name: requests are not one per distinct build ID: $(diff "$name.want" "$name.urls" | head -5) ($(wc -l <"$name.urls") URLs, $(wc -l <"$ids") IDs)"
	[ "$(ctl stats | awk '$1 == "requests" { print $2 }')" = "$(wc -l <"$ids")" ] ||
		fail "$name: $(ctl stats | head -1), for $(wc -l <"$ids") distinct IDs"
}

nbig=20000
[ -n "$rss_check" ] || nbig=5000
ids 2000 1 >small.ids
ids $nbig 2 >big.ids
# Back after their batch: 1,000 of the first batches' IDs at the end.
head -1000 big.ids >big.again
tl_case "2,000 and $nbig distinct build IDs, --batch 256"
stream small 256 small.ids
stream big 256 big.ids big.again
small_rss=$(peak_rss small.rss) big_rss=$(peak_rss big.rss)
if [ -n "$rss_check" ] && [ "$big_rss" -gt $((small_rss + 4096)) ]; then
	fail "memory is not flat: $big_rss KB for $nbig IDs, $small_rss KB for 2,000"
fi
tl_case_end "(peak RSS $small_rss KB and $big_rss KB)"

# The default batch, and IDs the cache of another run has: the 2,000 of
# the first run, again, in the same cache, cost no request.
tl_case "5,000 IDs, default batch; misses cached by an earlier run"
ids 5000 3 >mid.ids
cat small.ids mid.ids | sed 's/$/ 0x1000/' >mid.in
ctl reset-stats >/dev/null
DEBUGINFOD_CACHE_PATH=$cachebase/cache-small "$DSOSTORE" symbolize -f <mid.in >mid.out 2>mid.err
rc=$?
[ $rc = 1 ] || fail "exit status $rc: $(grep -v 'no debuginfo' mid.err | head -3)"
[ "$(grep -c '^??:0$' mid.out)" = 7000 ] || fail "not 7,000 answers: $(grep -c '^??:0$' mid.out)"
ctl idle >/dev/null
ctl stats | awk '$1 == "url" { print $2, $3 }' | sort -k2 >mid.urls
sed 's|.*|1 /buildid/&/debuginfo|' mid.ids | sort -k2 >mid.want
cmp -s mid.want mid.urls ||
	fail "requests are not one per new ID: $(diff mid.want mid.urls | head -5) ($(wc -l <mid.urls) URLs)"
tl_case_end

# A stream over more binaries than the process may open files: 40
# programs, each asked twice around, under `ulimit -n 20`.  Without a
# budget the store runs into EMFILE (shown, as the case for the option);
# with --fd-budget 8 every answer is addr2line's on the same binary.
tl_case "40 binaries under ulimit -n 20: --fd-budget 8"
mkdir -p fdb
for i in $(seq 1 40); do
	printf 'int f%d(int x) { return x * %d + 1; }\nint main(int c, char **v) { return f%d(c); }\n' \
		"$i" "$i" "$i" >"fdb/p$i.c"
	gcc -O1 -g "fdb/p$i.c" -o "fdb/p$i" ||
		fail "gcc p$i.c"
done
for r in 1 2; do
	for i in $(seq 1 40); do
		echo "$PWD/fdb/p$i 0x$(nm "fdb/p$i" | awk -v f="f$i" '$3 == f { print $1 }')"
	done
done >fdb.in
while read -r bin addr; do
	addr2line -f -e "$bin" "$addr"
done <fdb.in >fdb.want
(
	ulimit -n 20
	DEBUGINFOD_URLS= "$DSOSTORE" symbolize -f <fdb.in >fdb.nobudget 2>fdb.nobudget.err
	DEBUGINFOD_URLS= "$DSOSTORE" symbolize -f --fd-budget 8 <fdb.in >fdb.out 2>fdb.err
	echo $? >fdb.rc
)
[ "$(cat fdb.rc)" = 0 ] || fail "--fd-budget 8: exit status $(cat fdb.rc): $(head -3 fdb.err)"
cmp -s fdb.want fdb.out || fail "--fd-budget 8: answers differ from addr2line's: $(diff fdb.want fdb.out | head -6)"
grep -q 'Too many open files' fdb.nobudget.err ||
	echo "note: without --fd-budget the stream did not run out of descriptors" >&2
tl_case_end "($(grep -c 'Too many open files' fdb.nobudget.err) EMFILE failures without it)"

tl_finish symbolize_stream
