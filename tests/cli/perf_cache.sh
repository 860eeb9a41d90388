#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dsostore perf-cache install, with perf itself as the oracle: a stripped
# workload is recorded (perf report shows hex, no function names), its
# debuginfo is installed into perf's build-id cache by build ID and by
# binary, and then perf report must name the workload's functions and
# source lines.  Also: the layout on disk as perf 6.1 writes it (entry
# under the binary's real path, relative .build-id link), a hard link on
# one file system and a copy across two, a second install that changes
# nothing, a later install by path that supersedes the build-ID-only
# entry, and the refusals: no debuginfo (nothing created), a bad build ID
# argument, a read-only cache.
set -euo pipefail

. "$DS_SRC/tests/lib/testlib.bash"
: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc objcopy strip readelf

tl_tmpdir dsperfcache
cd "$tmp"
umask 022
# perf reads its cache from $HOME/.debug (buildid.dir in ~/.perfconfig
# aside) and not from $PERF_BUILDID_DIR: each scenario gets its own HOME.
export HOME=$tmp/home0
mkdir -p "$HOME"
unset PERF_BUILDID_DIR
tl_sanitizer_exitcodes
tl_perf_or_skip

# ----------------------------------------------------------- workload
# Three functions that each burn ~0.1 s of CPU in a loop whose lines are
# marked, so that the expected source lines come from the source.  The
# process's CPU clock times them, not the wall's: cpu-clock samples the
# task's own time, ~400 samples a function under any load, and a sample
# on each loop line is then a floor.
cat >w.c <<'EOF'
#include <time.h>

volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void burn_alpha(void)
{
	double t = now();
	unsigned long x = 1;

	while (now() - t < 0.1)
		for (int i = 0; i < 2000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL; /* LOOP */
	sink = x;
}

__attribute__((noinline)) void burn_beta(void)
{
	double t = now();
	unsigned long x = 2;

	while (now() - t < 0.1)
		for (int i = 0; i < 2000; i++)
			x ^= (x << 7) ^ (x >> 9) ^ (unsigned long)i; /* LOOP */
	sink = x;
}

__attribute__((noinline)) void burn_gamma(void)
{
	double t = now();
	unsigned long x = 3;

	while (now() - t < 0.1)
		for (int i = 0; i < 2000; i++)
			x = (x >> 3) + x * 31 + (unsigned long)i; /* LOOP */
	sink = x;
}

int main(void)
{
	burn_alpha();
	burn_beta();
	burn_gamma();
	return 0;
}
EOF
gcc -g -O1 -Wl,--build-id -o w w.c
objcopy --only-keep-debug w w.debug
strip --strip-all -o ws w
BID=$(readelf -n ws | awk '/Build ID:/ {print $3}')
[ -n "$BID" ] || { echo "FAIL: no build ID in the workload" >&2; exit 1; }
[ "$(readelf -n w.debug 2>/dev/null | awk '/Build ID:/ {print $3}')" = "$BID" ] ||
	{ echo "FAIL: objcopy --only-keep-debug changed the build ID" >&2; exit 1; }
XX=${BID:0:2} REST=${BID:2}
WS_REAL=$(realpath ws)
LOOP_LINES=$(grep -n '/\* LOOP \*/' w.c | cut -d: -f1 | tr '\n' ' ')

# A debug directory holding the debuginfo the way distributions do.
mkdir -p "dd/.build-id/$XX"
cp w.debug "dd/.build-id/$XX/$REST.debug"

perf record -N -e cpu-clock -o F -- ./ws >rec.log 2>&1 || {
	echo "FAIL: perf record of the workload:" >&2
	cat rec.log >&2
	exit 1
}

# perf report of the workload's own samples, with HOME=$1.
report() {
	HOME=$1 perf report -i "$tmp/F" --stdio --sort "$2" 2>/dev/null | grep -v '^#' |
		grep -v '^$' || true
}

# The workload's function names (none before, all three after).
names_in() {
	grep -oE 'burn_(alpha|beta|gamma)' | sort -u | tr '\n' ' '
}

before=$(report "$HOME" dso,sym)
if ! grep -q ' ws ' <<<"$before"; then
	fail "perf report has no samples in ws:"$'\n'"$before"
fi
if [ -n "$(names_in <<<"$before")" ]; then
	fail "perf report named the stripped workload's functions before any install:"$'\n'"$before"
fi
grep -qE ' ws +\[\.\] 0x[0-9a-f]+' <<<"$before" ||
	fail "perf report did not show hex addresses for ws before the install:"$'\n'"$before"

# perf report with HOME=$1 must name all three functions, and give source
# lines of w.c that are the marked loops.
expect_perf_resolves() {
	local home=$1 what=$2 syms lines bad=""

	syms=$(report "$home" sym)
	if [ "$(names_in <<<"$syms")" != "burn_alpha burn_beta burn_gamma " ]; then
		fail "$what: perf report --sort sym does not name the workload's functions:"$'\n'"$syms"
	fi
	lines=$(report "$home" srcline | grep -oE 'w\.c:[0-9]+' | cut -d: -f2 | sort -un)
	if [ -z "$lines" ]; then
		fail "$what: perf report --sort srcline has no line of w.c"
		return
	fi
	for l in $LOOP_LINES; do
		grep -qx "$l" <<<"$lines" || bad="$bad $l"
	done
	[ -z "$bad" ] || fail "$what: perf report --sort srcline lacks the loop lines$bad" \
		"(it has: $(echo $lines))"
}

# Every file under the cache with inode, mode, size and times: what "no
# change" means.
snapshot() {
	find "$1" -printf '%p %i %m %s %T@ %C@ %l\n' | sort
}

# ------------------------------------------- 1. by build ID, found in dd
H1=$tmp/home1
out=$("$DSOSTORE" perf-cache install --perf-buildid-dir "$H1/.debug" --debug-dir "$tmp/dd" \
	"$BID" 2>err1) || fail "install by build ID failed: $(cat err1)"
entry1="$H1/.debug/[dsostore]/$BID/$BID"
[ "$out" = "$BID $entry1/debug" ] || fail "install by build ID printed '$out'"
[ ! -s err1 ] || fail "install by build ID wrote to stderr: $(cat err1)"
[ "$(readlink "$H1/.debug/.build-id/$XX/$REST")" = "../../[dsostore]/$BID/$BID" ] ||
	fail "link: $(readlink "$H1/.debug/.build-id/$XX/$REST" || echo none)"
[ "$(readelf -n "$entry1/debug" 2>/dev/null | awk '/Build ID:/ {print $3}')" = "$BID" ] ||
	fail "the installed debug file has not the build ID"
cmp -s "$entry1/debug" w.debug || fail "the installed debug file differs from w.debug"
# One file system: a hard link to the debug directory's file, as perf does.
[ "$entry1/debug" -ef "dd/.build-id/$XX/$REST.debug" ] ||
	fail "on one file system the debug file is not a hard link to its source"
for d in "$H1/.debug" "$H1/.debug/.build-id" "$H1/.debug/.build-id/$XX" \
	"$H1/.debug/[dsostore]" "$H1/.debug/[dsostore]/$BID" "$entry1"; do
	[ "$(stat -c %a "$d")" = 755 ] || fail "$d is mode $(stat -c %a "$d"), not 755 as perf"
done
leftover=$(find "$H1/.debug" -name '*.??????')
[ -z "$leftover" ] || fail "temporary files left: $leftover"
expect_perf_resolves "$H1" "by build ID"

# A second install finds the file in place: same line, nothing touched.
snap=$(snapshot "$H1/.debug")
out2=$("$DSOSTORE" perf-cache install --perf-buildid-dir "$H1/.debug" --debug-dir "$tmp/dd" \
	"$BID" 2>err2) || fail "second install failed: $(cat err2)"
[ "$out2" = "$out" ] || fail "second install printed '$out2', the first '$out'"
[ "$(snapshot "$H1/.debug")" = "$snap" ] || fail "second install changed the cache:"$'\n'"$(
	diff <(echo "$snap") <(snapshot "$H1/.debug"))"
# Without --debug-dir the debuginfo is found in perf's cache itself.
out3=$("$DSOSTORE" perf-cache install --perf-buildid-dir "$H1/.debug" --debug-dir "$tmp/none" \
	"$BID" 2>err3) || fail "install from perf's own cache failed: $(cat err3)"
[ "$out3" = "$out" ] || fail "install from perf's own cache printed '$out3'"
[ "$(snapshot "$H1/.debug")" = "$snap" ] || fail "install from perf's own cache changed it"

# ---------- 2. by binary: the entry goes under its real path and the
# build-ID-only entry of step 1 goes away (nothing links to it any more).
out=$("$DSOSTORE" perf-cache install --perf-buildid-dir "$H1/.debug" --debug-dir "$tmp/dd" \
	./ws 2>err4) || fail "install by binary failed: $(cat err4)"
entry2="$H1/.debug$WS_REAL/$BID"
[ "$out" = "$BID $entry2/debug" ] || fail "install by binary printed '$out'"
[ "$(readlink "$H1/.debug/.build-id/$XX/$REST")" = "../..$WS_REAL/$BID" ] ||
	fail "link after install by binary: $(readlink "$H1/.debug/.build-id/$XX/$REST")"
[ ! -e "$H1/.debug/[dsostore]/$BID" ] || fail "the superseded [dsostore] entry is still there"
cmp -s "$entry2/debug" w.debug || fail "debug file by binary differs from w.debug"
expect_perf_resolves "$H1" "by binary"
# perf's own view of its cache: the entry is the binary's.
listed=$(HOME=$H1 perf buildid-cache --list 2>/dev/null || true)
[ "$listed" = "$BID $WS_REAL" ] || fail "perf buildid-cache --list: '$listed'"

# ---------- 3. --path with a build ID; the debuginfo on another file
# system (if /dev/shm is one) is copied, not linked.
H3=$tmp/home3
src_dir=$tmp/dd
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$tmp")" ]; then
	shm=$(mktemp -d /dev/shm/dsperfcache.XXXXXX)
	tl_also_rm+=("$shm")
	cp -r dd/. "$shm/"
	src_dir=$shm
fi
out=$("$DSOSTORE" perf-cache install --perf-buildid-dir "$H3/.debug" --debug-dir "$src_dir" \
	--path /opt/app/bin/server "$BID" 2>err5) || fail "install with --path failed: $(cat err5)"
entry3="$H3/.debug/opt/app/bin/server/$BID"
[ "$out" = "$BID $entry3/debug" ] || fail "install with --path printed '$out'"
[ "$(readlink "$H3/.debug/.build-id/$XX/$REST")" = "../../opt/app/bin/server/$BID" ] ||
	fail "link with --path: $(readlink "$H3/.debug/.build-id/$XX/$REST")"
cmp -s "$entry3/debug" w.debug || fail "debug file with --path differs from w.debug"
if [ "$src_dir" != "$tmp/dd" ]; then
	[ "$(stat -c %h "$entry3/debug")" = 1 ] || fail "across file systems the debug file is not a copy"
	[ "$(stat -c %a "$entry3/debug")" = 644 ] || fail "the copy is mode $(stat -c %a "$entry3/debug")"
fi
leftover=$(find "$H3/.debug" -name '*.??????')
[ -z "$leftover" ] || fail "temporary files left: $leftover"
expect_perf_resolves "$H3" "with --path"

# ------------------------------------------------------------- refusals
# No debuginfo anywhere (a debug directory whose file has another build
# ID): exit 1, one message, nothing created in the cache.
cat >o.c <<'EOF'
int main(void) { return 7; }
EOF
gcc -g -O1 -Wl,--build-id -o o o.c
mkdir -p "bad/.build-id/$XX"
cp o "bad/.build-id/$XX/$REST.debug"
H4=$tmp/home4
if "$DSOSTORE" perf-cache install --perf-buildid-dir "$H4/.debug" --debug-dir "$tmp/bad" \
	"$BID" >out6 2>err6; then
	fail "install without a matching debuginfo succeeded: $(cat out6)"
fi
[ ! -s out6 ] || fail "install without debuginfo printed: $(cat out6)"
grep -q "^dsostore: $BID: no debuginfo" err6 || fail "no-debuginfo message: $(cat err6)"
[ ! -e "$H4/.debug" ] || fail "a refused install created $(find "$H4/.debug")"

# Bad build IDs: refused one by one, the good argument still installed,
# exit status 1.
if "$DSOSTORE" perf-cache install --perf-buildid-dir "$H4/.debug" --debug-dir "$tmp/dd" \
	xyz12 "$BID" abc >out7 2>err7; then
	fail "bad build IDs gave exit status 0"
fi
grep -qx "dsostore: xyz12: neither a file nor a build ID (2 to 128 hex digits)" err7 ||
	fail "no message for xyz12: $(cat err7)"
grep -qx "dsostore: abc: neither a file nor a build ID (2 to 128 hex digits)" err7 ||
	fail "no message for abc (odd length): $(cat err7)"
[ "$(wc -l <err7)" = 2 ] || fail "stderr for bad build IDs: $(cat err7)"
[ "$(cat out7)" = "$BID $H4/.debug/[dsostore]/$BID/$BID/debug" ] ||
	fail "the good argument among bad ones: '$(cat out7)'"

# A read-only cache: a clear message naming the cache and the reason.
H5=$tmp/home5
mkdir -p "$H5/.debug"
ro_msg=""
if [ "$(id -u)" = 0 ]; then
	# root writes through mode bits: mount a read-only file system there.
	if unshare -m true 2>/dev/null; then
		unshare -m bash -c 'mount -t tmpfs -o ro tmpfs "$1" && shift && exec "$@"' _ \
			"$H5/.debug" "$DSOSTORE" perf-cache install --perf-buildid-dir "$H5/.debug" \
			--debug-dir "$tmp/dd" "$BID" >out8 2>err8 && st=0 || st=$?
		ro_msg="Read-only file system"
	fi
else
	chmod 0555 "$H5/.debug"
	"$DSOSTORE" perf-cache install --perf-buildid-dir "$H5/.debug" --debug-dir "$tmp/dd" \
		"$BID" >out8 2>err8 && st=0 || st=$?
	chmod 0755 "$H5/.debug"
	ro_msg="Permission denied"
fi
if [ -n "$ro_msg" ]; then
	[ "$st" = 1 ] || fail "read-only cache: exit status $st"
	[ ! -s out8 ] || fail "read-only cache printed: $(cat out8)"
	grep -qx "dsostore: $BID: cannot install $tmp/dd/.build-id/$XX/$REST.debug into perf's build-id cache $H5/.debug: $ro_msg" err8 ||
		fail "read-only cache message: $(cat err8)"
else
	echo "note: read-only cache not tested (no mount namespace)" >&2
fi

tl_finish perf_cache "perf report resolves the stripped workload after each install"
