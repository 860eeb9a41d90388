#!/bin/bash
# The debuginfod client against what a hostile review tried:
# servers that lie in ways curl cannot see (half a file with a matching
# Content-Length, padding, decompression bombs, 20 MB of headers), lock
# holders that never finish, a full or read-only disk, a cache removed
# under a batch, paths that try to leave the server's tree, cache entries
# swapped for symlinks or garbage, and directories left behind.
#
# Each case runs `dsostore fetch` (the CLI: what a user sees) with a fresh
# cache and checks what a user would notice: the exit status, the message,
# what the cache holds afterwards (the served file byte for byte, or
# nothing), and how many requests dsserver saw (/control/stats, counted on
# arrival).  Fixtures are compiled here; build IDs come from readelf.
# Only 127.0.0.1 is used.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc readelf curl cmp awk python3 flock
tl_need_dsserver

tl_tmpdir dshostile
T=$tmp
tl_client_env 2
SLACK_MS=4000

# ------------------------------------------------------------- fixtures

S=$T/srv
mkdir -p "$S"
# a: ~200 KiB, so that a body can be cut or padded in its middle; big:
# ~1 MiB, for a holder that is slow but gets somewhere; b: small.
cat >"$S/a.c" <<'EOF'
#include <stdio.h>
static const char pad[200 * 1024] = {1};
int main(int argc, char **argv) { return puts(argv[0]) + pad[argc]; }
EOF
cat >"$S/big.c" <<'EOF'
#include <stdio.h>
static const char pad[1024 * 1024] = {2};
int main(int argc, char **argv) { return puts(argv[0]) + pad[argc]; }
EOF
cat >"$S/b.c" <<'EOF'
#include <stdio.h>
int main(int argc, char **argv) { (void)argv; return printf("%d\n", argc) < 0; }
EOF
for p in a big b; do
	gcc -g -O0 -o "$S/$p" "$S/$p.c" || { echo "SKIP: gcc cannot link" >&2; exit 77; }
	rm -f "$S/$p.c"
done
A=$(tl_build_id "$S/a")
BIG=$(tl_build_id "$S/big")
B=$(tl_build_id "$S/b")
[ -n "$A" ] && [ -n "$BIG" ] && [ -n "$B" ] || { echo "FAIL: no build IDs" >&2; exit 1; }
# A source file to serve, and one outside the served tree.
mkdir -p "$S/src"
echo 'int served;' >"$S/src/ok.c"
echo 'secret' >"$T/outside.txt"

tl_start_dsserver PORT s1 --max-runtime 600 "$S" || exit 1
P1=$PORT
U1=http://127.0.0.1:$P1

ctl() # endpoint [curl -G options...]
{
	local ep=$1
	shift
	curl -q -sS --noproxy '*' -G "$@" "$U1/control/$ep"
}
fault() # spec
{
	local got
	got=$(ctl fault --data-urlencode "spec=$1")
	[ "$got" = ok ] || fail "fault '$1': $got"
}
requests() # build-id [artifact-path]: requests for it
{
	ctl stats --data-urlencode "url=/buildid/$1/${2:-debuginfo}"
}
all_requests() { ctl stats | awk '$1 == "requests" { print $2 }'; }

CACHE=
case_begin()
{
	tl_case "$1"
	MS=0
	ctl idle -d timeout_ms=5000 >/dev/null
	ctl reset >/dev/null
	ctl reset-stats >/dev/null
	CACHE=$T/cache/$(echo "$CASE" | tr -c 'a-zA-Z0-9\n' _)
	export DEBUGINFOD_CACHE_PATH=$CACHE DEBUGINFOD_URLS=$U1
	unset DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME
}
case_end()
{
	tl_case_end "($MS ms)" || head -n 30 "$T/err" | sed 's/^/    | /' >&2
}
RC=0
MS=0
fetch() # ARGS...: dsostore fetch -v ARGS; out, err, RC, MS
{
	local t0 t1
	t0=$(date +%s%N)
	timeout 60 "$DSOSTORE" fetch -v "$@" >"$T/out" 2>"$T/err"
	RC=$?
	t1=$(date +%s%N)
	MS=$(((t1 - t0) / 1000000))
	grep -q -E 'Sanitizer|runtime error:' "$T/err" && fail "sanitizer report"
	[ "$RC" = 124 ] && fail "still running after 60 s"
	return 0
}
expect_rc() { [ "$RC" = "$1" ] || fail "exit status $RC, expected $1"; }
expect_err() # extended regex the stderr must match
{
	grep -q -E "$1" "$T/err" || fail "stderr does not say /$1/"
}
expect_no_err() { grep -q -E "$1" "$T/err" && fail "stderr says /$1/"; return 0; }
expect_requests() # build-id count [artifact]
{
	local n
	n=$(requests "$1" "${3:-}")
	[ "$n" = "$2" ] || fail "$2 request(s) expected for $1, got '$n'"
}
expect_ms_below() { [ "$MS" -lt "$1" ] || fail "$2: took $MS ms, expected < $1 ms"; }
expect_no_tmp()
{
	local left
	left=$(find "$CACHE" -mindepth 2 -regex '.*\.[a-z0-9][a-z0-9][a-z0-9][a-z0-9][a-z0-9][a-z0-9]$' 2>/dev/null)
	[ -z "$left" ] || fail "temporary files left: $left"
}
expect_nothing() # build-id: no file, no miss, no directory left
{
	expect_no_tmp
	[ -e "$CACHE/$1" ] && fail "cache has $1/: $(ls -la "$CACHE/$1" | tail -n +2 | tr '\n' ' ')"
	return 0
}
expect_cached() # build-id file: printed, and the cache holds exactly that file
{
	local line
	line=$(grep "^$1 " "$T/out")
	[ "$line" = "$1 $CACHE/$1/debuginfo" ] || fail "printed '$line'"
	cmp -s "$CACHE/$1/debuginfo" "$2" || fail "cached $1/debuginfo differs from $2"
	expect_no_tmp
}

# --------------------------------------------- 1. a lock wait is bounded

# wait_for N CMD...: until CMD succeeds, N tries at most, 50 ms apart.
wait_for()
{
	local n=$1
	shift
	for ((; n > 0; n--)); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}
locked() { [ -d "$1" ] && ! flock -n "$1" true 2>/dev/null; }
has_tmp() { ls "$1".* >/dev/null 2>&1; } # FILE: a download of it under way

# A holder stopped by SIGSTOP, holding the entry's flock: the waiter gives
# up after DEBUGINFOD_TIMEOUT of no progress, downloads on its own, and
# says so at -v.
case_begin "lock holder stopped (SIGSTOP)"
fault "$B:latency=8000,times=1"
"$DSOSTORE" fetch "$B" >/dev/null 2>"$T/holder.err" &
holder=$!
wait_for 100 locked "$CACHE/$B" || fail "the holder never took the entry's lock"
kill -STOP "$holder"
fetch "$B"
kill -CONT "$holder"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
expect_rc 0
expect_cached "$B" "$S/b"
expect_err "made no progress for $TIMEOUT s; downloading without it"
expect_ms_below $((TIMEOUT * 1000 + SLACK_MS)) "waiting on a stopped holder"
case_end

# Another program holds the flock (no download at all) for longer.
case_begin "flock held by another program"
mkdir -p -m 700 "$CACHE/$B"
flock "$CACHE/$B" sleep 30 &
locker=$!
wait_for 100 locked "$CACHE/$B"
fetch "$B"
kill "$locker" 2>/dev/null
wait "$locker" 2>/dev/null
expect_rc 0
expect_cached "$B" "$S/b"
expect_err "downloading without it"
expect_ms_below $((TIMEOUT * 1000 + SLACK_MS)) "waiting on flock(1)"
expect_requests "$B" 1
case_end

# A holder that is slow but gets somewhere (~150 KB/s, 1 MiB: ~7 s, far
# past DEBUGINFOD_TIMEOUT, but 300 KB per 2 s): waited for, one request.
case_begin "slow holder making progress: waited for"
fault "$BIG:bandwidth=150000"
"$DSOSTORE" fetch "$BIG" >/dev/null 2>"$T/holder.err" &
holder=$!
wait_for 200 has_tmp "$CACHE/$BIG/debuginfo"
fetch "$BIG"
wait "$holder"
expect_rc 0
expect_cached "$BIG" "$S/big"
expect_requests "$BIG" 1
expect_no_err "downloading without it"
case_end

# --------------------------------- 2. a download is accepted only whole

# The first half of the right file, with a matching Content-Length: a
# perfect HTTP answer; the build-ID note is in it.  Rejected, the log names
# the server, nothing is cached, and the next fetch (server fixed) works.
case_begin "half the file, Content-Length = half"
fault "$A:short"
fetch "$A"
expect_rc 1
expect_err "$U1.*not a whole ELF|$U1.*truncated"
expect_nothing "$A"
ctl reset >/dev/null
fetch "$A"
expect_rc 0
expect_cached "$A" "$S/a"
case_end

# 1 GiB of zeros after the file: stopped once the ELF's extent is known,
# long before the gigabyte.
case_begin "1 GiB of padding after the file"
fault "$A:pad=1073741824"
fetch "$A"
expect_rc 1
expect_err "$U1.*padded"
expect_nothing "$A"
expect_ms_below 10000 "a padded body"
case_end

# ------------------------------------------- 3. bounded cost by default

# gzip and deflate bodies that decode to 1 GiB: stopped at the size the
# server announced (X-DEBUGINFOD-SIZE) or, without it, at the default
# ratio of the compressed length; nothing cached either way.
for kind in gzipbomb deflatebomb gzipbomb-nosize; do
	case_begin "$kind to 1 GiB"
	fault "$A:$kind=1073741824"
	fetch "$A"
	expect_rc 1
	expect_nothing "$A"
	expect_err "decodes past|padded"
	du_kb=$(du -sk "$CACHE" 2>/dev/null | awk '{ print $1 }')
	[ "${du_kb:-0}" -lt 65536 ] || fail "the cache grew to $du_kb KiB"
	case_end
done

# A source file is capped far below a debuginfo (64 MiB by default,
# DSOSTORE_SOURCE_MAXSIZE): a Content-Length past the cap is refused before
# the body, a body without an honest one is stopped as it passes the cap;
# nothing is cached, and the server sees the client leave long before the
# end (its log: bytes handed to the socket, "aborted").
src_sent() # the last request's "bytes status" from s1's log
{
	awk '$3 ~ "/source/" { b = $5; st = $7 } END { print b, st }' "$tmp/s1.log"
}
case_begin "source of 64 MiB over a 1 MiB cap (Content-Length)"
fault "$A:pad=67108864"
DSOSTORE_SOURCE_MAXSIZE=1048576 fetch --source "$S/src/ok.c" "$A"
expect_rc 1
expect_err "$U1: $A/source.* announced past the source size limit .*, 1048576 bytes; not fetched"
expect_nothing "$A"
ctl idle >/dev/null
read -r sent status < <(src_sent)
[ "$status" = aborted ] && [ "${sent:-0}" -lt 67108864 ] ||
	fail "the server sent $sent bytes ($status): the transfer was not stopped"
case_end

case_begin "source of 1 GiB: the default cap"
fault "$A:pad=1073741824"
fetch --source "$S/src/ok.c" "$A"
expect_rc 1
expect_err "announced past the source size limit .*, 67108864 bytes; not fetched"
expect_nothing "$A"
expect_ms_below 10000 "a 1 GiB source"
case_end

case_begin "source decoding past a 1 MiB cap (gzip, no size announced)"
fault "$A:gzipbomb-nosize=67108864"
DSOSTORE_SOURCE_MAXSIZE=1048576 fetch --source "$S/src/ok.c" "$A"
expect_rc 1
expect_err "$A/source.* decodes past the source size limit"
expect_nothing "$A"
case_end

case_begin "source under the cap"
fault "$A:pad=1000"
DSOSTORE_SOURCE_MAXSIZE=1048576 fetch --source "$S/src/ok.c" "$A"
expect_rc 0
f=$(awk '{ print $2 }' "$T/out")
[ "$(stat -c %s "$f" 2>/dev/null)" = $(($(stat -c %s "$S/src/ok.c") + 1000)) ] ||
	fail "cached '$f' is not the served file and its 1000 bytes of padding"
case_end

# ------------------------------------------ 4. local errors told as they are

case_begin "20 MB of response headers"
fault "$A:bigheaders=20000000"
fetch "$A"
expect_rc 1
expect_err "headers too large"
expect_no_err "Connection reset"
expect_nothing "$A"
case_end

# A cache on a full disk: "No space left on device", the cache's path,
# one request (no retry), and the server is not marked down.
tiny=$T/tiny
mkdir -p "$tiny"
if mount -t tmpfs -o size=64k tmpfs "$tiny" 2>/dev/null; then
	case_begin "full disk (ENOSPC)"
	export DEBUGINFOD_CACHE_PATH=$tiny/cache
	CACHE=$tiny/cache
	fetch "$A"
	expect_rc 1
	expect_err "$tiny/cache/$A/debuginfo: No space left on device"
	expect_requests "$A" 1
	expect_no_err "not asked again|Input/output error"
	expect_nothing "$A"
	# The space the failed download took is free again.
	fetch "$B"
	expect_rc 0
	expect_cached "$B" "$S/b"
	case_end

	case_begin "read-only cache (EROFS)"
	mount -o remount,ro "$tiny"
	export DEBUGINFOD_CACHE_PATH=$tiny/cache
	CACHE=$tiny/cache
	fetch "$A"
	expect_rc 1
	expect_err "Read-only file system"
	expect_requests "$A" 0
	case_end
	umount "$tiny"
else
	echo "skip full disk / read-only cases: cannot mount a tmpfs here"
fi

case_begin "source path too long for a cache entry name"
long=/$(printf 'd%.0s' $(seq 300))/x.c
fetch --source "$long" "$A"
expect_rc 1
expect_err "too long"
[ "$(all_requests)" = 0 ] || fail "a request was made"
case_end

# ------------------------------- 5. the cache removed underneath a batch

# 60 build IDs (copies of b with patched IDs), each sent at 20 KB/s (about
# a second): the cache removed 0.4 s in, while every body is arriving.  Every printed path exists and holds
# the right file; no build ID downloaded more than twice.
mkdir -p "$S/many"
python3 - "$S/b" "$S/many" 60 <<'EOF' || fail "cannot make the copies"
import sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = bytearray(open(src, 'rb').read())
i = data.find(b'GNU\0', data.find(b'\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00'))
for k in range(n):
    d = bytearray(data)
    d[i + 4:i + 24] = bytes.fromhex('%040x' % (0xbeef0000 + k))
    open('%s/c%03d' % (out, k), 'wb').write(d)
EOF
ctl rescan >/dev/null
case_begin "cache removed under a batch (rm -rf)"
fault "*:bandwidth=20000"
ids=$(for k in $(seq 0 59); do printf '%040x\n' $((0xbeef0000 + k)); done)
(sleep 0.4; rm -rf "$CACHE") &
remover=$!
t0=$(date +%s%N)
timeout 60 "$DSOSTORE" fetch $ids >"$T/out" 2>"$T/err"
RC=$?
MS=$((($(date +%s%N) - t0) / 1000000))
wait "$remover"
expect_rc 0
[ "$(wc -l <"$T/out")" = 60 ] || fail "$(wc -l <"$T/out") paths printed, expected 60"
while read -r id path; do
	k=$((0x$id - 0xbeef0000))
	cmp -s "$path" "$S/many/$(printf 'c%03d' $k)" || fail "$path: missing or wrong"
	n=$(requests "$id")
	[ "$n" -le 2 ] || fail "$id downloaded $n times"
done <"$T/out"
grep -q "Input/output error" "$T/err" && fail "Input/output error"
case_end
rm -rf "$S/many"
ctl rescan >/dev/null

# -------------------------------------------------- 6. no path escapes

case_begin "source path with .. components"
fetch --source /../../../../tmp/x "$A"
expect_rc 1
expect_err "no '\.' or '\.\.' component"
[ "$(all_requests)" = 0 ] || fail "a request was made: $(ctl stats | grep url)"
for bad in /a/./b.c /a/../b.c /a/b/..; do
	fetch --source "$bad" "$A"
	expect_rc 1
	[ "$(all_requests)" = 0 ] || fail "$bad: a request was made"
done
case_end

case_begin "section name '..'"
fetch --section .. "$A"
expect_rc 1
expect_err "section name"
fetch --section a/b "$A"
expect_rc 1
[ "$(all_requests)" = 0 ] || fail "a request was made"
case_end

# A path is sent as given (escaped, never resolved by curl): the server
# echoes what it received.
case_begin "source path reaches the server as given"
fault "*:echo"
fetch --source "/src/a b/#x%y.c" "$A"
expect_rc 0
got=$(cat "$(cut -d" " -f2- "$T/out")")
[ "$got" = "/buildid/$A/source/src/a%20b/%23x%25y.c" ] || fail "the server saw '$got'"
case_end

# A file:// server is read only inside its directory, symlinks followed.
FS=$T/fileserver
mkdir -p "$FS/buildid/$A/source/src"
cp "$S/src/ok.c" "$FS/buildid/$A/source/src/ok.c"
ln -s "$T/outside.txt" "$FS/buildid/$A/source/src/evil.c"
ln -s "$S/a" "$FS/buildid/$A/debuginfo"
case_begin "file:// server: a symlink out of its tree"
export DEBUGINFOD_URLS=file://$FS
fetch --source /src/evil.c "$A"
expect_rc 1
expect_err "outside the server's directory; refused"
ls "$CACHE/$A"/source* >/dev/null 2>&1 && fail "cached a file from outside the tree"
fetch --source /src/ok.c "$A"
expect_rc 0
cmp -s "$(awk '{ print $2 }' "$T/out")" "$S/src/ok.c" || fail "the file inside was not served"
case_end

# -------------------------------------- 7. a cache hit is checked first

for kind in symlink garbage half; do
	case_begin "cache entry is a $kind"
	mkdir -p -m 700 "$CACHE/$A"
	case $kind in
	symlink) ln -s /etc/passwd "$CACHE/$A/debuginfo" ;;
	garbage) echo evil >"$CACHE/$A/debuginfo" ;;
	half) head -c $(($(stat -c %s "$S/a") / 2)) "$S/a" >"$CACHE/$A/debuginfo" ;;
	esac
	fetch "$A"
	expect_rc 0
	expect_cached "$A" "$S/a"
	expect_err "cache $CACHE/$A/debuginfo: .*; removed, to be fetched again"
	expect_requests "$A" 1
	case_end
done

if id nobody >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	case_begin "entry directory owned by another user"
	mkdir -p -m 700 "$CACHE/$A"
	cp "$S/a" "$CACHE/$A/debuginfo"
	chown -R nobody "$CACHE/$A"
	fetch "$A"
	expect_rc 1
	expect_err "cache $CACHE/$A: owned by uid [0-9]+, not by you"
	expect_requests "$A" 0
	case_end
fi

case_begin "cache root writable by everyone"
mkdir -p "$CACHE"
chmod 0777 "$CACHE"
fetch "$A"
expect_rc 1
expect_err "cache $CACHE: writable by everyone \(mode 0777\).*chmod go-w"
expect_requests "$A" 0
chmod 0700 "$CACHE"
fetch "$A"
expect_rc 0
expect_cached "$A" "$S/a"
case_end

# ---------------------------------------- 10. no empty directories left

case_begin "failed fetch leaves no directory"
fault "*:status=500"
U=$(printf '%040x' 0xdeadbeef)
fetch "$U" "$A"
expect_rc 1
expect_nothing "$U"
expect_nothing "$A"
case_end

case_begin "failed perf-cache install leaves no directory"
PERFC=$T/perfc
mkdir -p "$PERFC"
: >"$PERFC/.build-id" # a file where perf's index directory goes: the link fails
timeout 60 "$DSOSTORE" perf-cache install --perf-buildid-dir "$PERFC" --path /opt/x/a "$S/a" \
	>"$T/out" 2>"$T/err"
RC=$?
expect_rc 1
[ -e "$PERFC/opt" ] && fail "left: $(find "$PERFC/opt")"
case_end

tl_finish fetch_hostile.sh "all cases passed"
