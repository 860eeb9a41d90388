#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dsostore serve` as elfutils' and gdb's clients see it: a node serving a
# -F directory (a program built here, stripped of everything, its debuginfo
# split off) to debuginfod-find (debuginfo, executable, source, section),
# curl (HEAD, X-DEBUGINFOD-MAXSIZE), gdb and eu-stack symbolizing a core
# of that program without any local file but the core.  Expected bytes
# come from the files on disk and objcopy; expected functions and lines
# from the source itself (its marked lines); request counts from /metrics.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
tl_sanitizer_exitcodes

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need debuginfod-find gdb eu-stack eu-readelf readelf gcc objcopy curl cmp timeout
tl_tmpdir dsclients
tl_client_env 30
src=$tmp/src srv=$tmp/srv run=$tmp/run
mkdir -p "$src" "$srv" "$run"

# ---- the program: aborts two calls deep.  Compiled by absolute path, so
# the DWARF names $src/crash.c; the node's directory gets the code with no
# symbol table (names and lines are only in the debug file) and the debug
# file.  A file next to the source that the DWARF does not name.
cat >"$src/crash.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void crash_here(int depth)
{
	if (depth > 0)
		abort(); /* LINE:crash_here */
	printf("%d\n", depth);
}

__attribute__((noinline)) void crash_middle(int depth)
{
	crash_here(depth + 1); /* LINE:crash_middle */
	printf("not reached\n");
}

int main(int argc, char **argv)
{
	(void)argv;
	crash_middle(argc); /* LINE:main */
	return 0;
}
EOF
echo 'int not_compiled;' >"$src/notes.c"
line() { grep -n "LINE:$1 " "$src/crash.c" | cut -d: -f1; }
gcc -g -O0 -o "$srv/crash" "$src/crash.c" 2>"$tmp/gcc.err" || {
	echo "FAIL: cannot compile: $(cat "$tmp/gcc.err")" >&2
	exit 1
}
objcopy --only-keep-debug "$srv/crash" "$srv/crash.debug" &&
	objcopy --strip-all --add-gnu-debuglink="$srv/crash.debug" "$srv/crash" || {
	echo "FAIL: objcopy cannot split the program" >&2
	exit 1
}
B=$(tl_build_id "$srv/crash")
[ -n "$B" ] && [ "$(tl_build_id "$srv/crash.debug")" = "$B" ] || {
	echo "FAIL: eu-readelf reads no build ID, or two" >&2
	exit 1
}
! readelf -sW "$srv/crash" | grep -q crash_ || fail "the stripped program still names its functions"

# ---- its core: gdb runs it to its abort() and dumps it (gcore of the
# stopped process: no system core_pattern involved).  Then the program
# goes: the clients have only the core.
cp "$srv/crash" "$run/crash"
(cd "$run" && timeout 120 gdb -batch -nx -iex 'set debuginfod enabled off' -ex run \
	-ex 'gcore core' ./crash) >"$tmp/gcore.log" 2>&1
if [ ! -s "$run/core" ]; then
	echo "FAIL: gdb made no core; its output:" >&2
	tail -20 "$tmp/gcore.log" >&2
	exit 1
fi
rm "$run/crash"

# ---- the node
tl_start_serve port node 0 -F "$srv" --upstream "" --cache "$tmp/node-cache" || exit 1
node_pid=${pids[-1]}
export DEBUGINFOD_URLS=http://127.0.0.1:$port
url=$DEBUGINFOD_URLS/buildid/$B
requests() { # type: http_requests_total of that type on the node
	tl_metric "$port" "http_requests_total{type=\"$1\"}"
}
# moved WHAT TYPE BEFORE OP N: the node's count of TYPE requests is
# BEFORE + N (OP "=") or at least that (OP ">=").
moved() {
	local now
	now=$(requests "$2")
	if [ "$4" = "=" ] && [ "$now" -ne $(($3 + $5)) ] || [ "$now" -lt $(($3 + $5)) ]; then
		fail "$1: http_requests_total{type=\"$2\"} went from $3 to $now, expected $4 $(($3 + $5))"
	fi
}
# eu_find CACHE ARGS...: debuginfod-find into a cache of its own; its
# stderr in $tmp/eu.err, the path it prints on stdout.
eu_find() {
	DEBUGINFOD_CACHE_PATH=$tmp/$1 debuginfod-find "${@:2}" 2>"$tmp/eu.err"
}

# ---- debuginfod-find: debuginfo, executable, sources, sections
tl_case "debuginfod-find debuginfo and executable"
for art in debuginfo executable; do
	[ $art = debuginfo ] && want=$srv/crash.debug || want=$srv/crash
	before=$(requests $art)
	if got=$(eu_find cache-$art $art "$B"); then
		cmp -s "$want" "$got" || fail "$art: $got is not $want"
	else
		fail "$art: debuginfod-find failed: $(cat "$tmp/eu.err")"
	fi
	moved "$art" $art "$before" = 1
done
tl_case_end

tl_case "debuginfod-find source"
before=$(requests source)
if got=$(eu_find cache-src source "$B" "$src/crash.c"); then
	cmp -s "$src/crash.c" "$got" || fail "$got is not $src/crash.c"
else
	fail "debuginfod-find source $src/crash.c failed: $(cat "$tmp/eu.err")"
fi
moved "a named source" source "$before" = 1
# Files that exist but that the DWARF does not name: the system's, the
# node's own, one next to the source.
for path in /etc/passwd "$srv/crash.debug" "$src/notes.c"; do
	if got=$(eu_find cache-src source "$B" "$path"); then
		fail "$path was served: $got"
	else
		grep -q "No such file or directory" "$tmp/eu.err" ||
			fail "$path: debuginfod-find says $(cat "$tmp/eu.err"), not 'No such file or directory'"
	fi
	code=$(curl -s -o "$tmp/body" -w '%{http_code}' "$url/source$path")
	[ "$code" = 404 ] || fail "GET source$path: $code, expected 404"
done
tl_case_end

tl_case "debuginfod-find section"
# .debug_info is the debug file's; .text has no bytes there (NOBITS), so
# it is the executable's.
objcopy --dump-section .debug_info="$tmp/want.debug_info" "$srv/crash.debug" "$tmp/junk" &&
	objcopy --dump-section .text="$tmp/want.text" "$srv/crash" "$tmp/junk" ||
	fail "objcopy cannot dump the sections"
for sec in .debug_info .text; do
	before=$(requests section)
	if got=$(eu_find cache-sec section "$B" $sec); then
		cmp -s "$tmp/want$sec" "$got" || fail "$sec: $got is not objcopy's $sec"
	else
		fail "section $sec: debuginfod-find failed: $(cat "$tmp/eu.err")"
	fi
	moved "section $sec" section "$before" = 1
done
got=$(eu_find cache-sec section "$B" .no_such_section) && fail "an absent section was served: $got"
tl_case_end

# ---- HEAD: GET's headers, no body.  HTTP/1.0 over bash's /dev/tcp: the
# node closes the connection after its answer, so everything it sent is
# read, body or not.
tl_case "HEAD"
size=$(stat -c %s "$srv/crash.debug")
curl -s -D "$tmp/get.h" -o "$tmp/get.body" "$url/debuginfo" || fail "GET debuginfo failed"
curl -s -I "$url/debuginfo" >"$tmp/head.h" || fail "curl -I failed"
header() { # file name: that header's value
	tr -d '\r' <"$1" | awk -v n="$2" 'tolower($1) == tolower(n) ":" {print $2}'
}
head -1 "$tmp/head.h" | grep -q '^HTTP/1.1 200' || fail "HEAD: $(head -1 "$tmp/head.h")"
for h in X-DEBUGINFOD-SIZE Content-Length; do
	[ "$(header "$tmp/head.h" $h)" = "$size" ] ||
		fail "HEAD: $h is '$(header "$tmp/head.h" $h)', the file has $size bytes"
	[ "$(header "$tmp/get.h" $h)" = "$size" ] ||
		fail "GET: $h is '$(header "$tmp/get.h" $h)', the file has $size bytes"
done
[ "$(header "$tmp/head.h" X-DEBUGINFOD-FILE)" = crash.debug ] ||
	fail "HEAD: X-DEBUGINFOD-FILE is '$(header "$tmp/head.h" X-DEBUGINFOD-FILE)', not crash.debug"
[ "$(header "$tmp/head.h" Content-Type)" = application/octet-stream ] ||
	fail "HEAD: Content-Type is '$(header "$tmp/head.h" Content-Type)'"
[ "$(header "$tmp/head.h" Cache-Control)" = public ] ||
	fail "HEAD: Cache-Control is '$(header "$tmp/head.h" Cache-Control)', not public"
# The file's mtime, as HTTP dates are written (RFC 9110, IMF-fixdate).
mtime=$(TZ=GMT LC_ALL=C date -r "$srv/crash.debug" '+%a, %d %b %Y %H:%M:%S GMT')
got=$(tr -d '\r' <"$tmp/head.h" | sed -n 's/^[Ll]ast-[Mm]odified: //p')
[ "$got" = "$mtime" ] || fail "HEAD: Last-Modified is '$got', the file's mtime $mtime"
cmp -s "$tmp/get.body" "$srv/crash.debug" || fail "GET: the body is not the debug file"
if exec 3<>"/dev/tcp/127.0.0.1/$port"; then
	printf 'HEAD /buildid/%s/debuginfo HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$B" >&3
	timeout 20 cat <&3 >"$tmp/head.raw" || fail "HEAD over HTTP/1.0: the node did not close"
	exec 3<&-
	# Everything after the blank line that ends the headers.
	body=$(awk 'h {n += length($0) + 1} /^\r?$/ {h = 1} END {print n + 0}' "$tmp/head.raw")
	grep -q $'^HTTP/1.[01] 200' "$tmp/head.raw" || fail "raw HEAD: $(head -1 "$tmp/head.raw")"
	[ "$body" = 0 ] || fail "raw HEAD: $body bytes after the headers"
else
	fail "cannot connect to 127.0.0.1:$port"
fi
tl_case_end

# ---- X-DEBUGINFOD-MAXSIZE: 406 below the size, the file at the size.
tl_case "MAXSIZE"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-DEBUGINFOD-MAXSIZE: $((size - 1))" "$url/debuginfo")
[ "$code" = 406 ] || fail "MAXSIZE size-1: $code, expected 406"
code=$(curl -s -o "$tmp/body" -w '%{http_code}' -H "X-DEBUGINFOD-MAXSIZE: $size" "$url/debuginfo")
[ "$code" = 200 ] && cmp -s "$tmp/body" "$srv/crash.debug" || fail "MAXSIZE = size: $code"
if got=$(DEBUGINFOD_MAXSIZE=100 eu_find cache-max debuginfo "$B"); then
	fail "DEBUGINFOD_MAXSIZE=100: debuginfod-find got $got"
else
	grep -q "File too large" "$tmp/eu.err" ||
		fail "DEBUGINFOD_MAXSIZE=100: debuginfod-find says $(cat "$tmp/eu.err")"
fi
tl_case_end

# ---- gdb: the core alone, the executable and its debuginfo from the
# node.  The backtrace names the functions and lines of crash.c.
# frames_named WHO FILE: FILE's lines, "FUNCTION PATH:LINE[:COLUMN]" for
# each frame innermost first, name crash_here, crash_middle and main, in
# that order, at their marked lines of crash.c.
frames_named() {
	local f n prev=0

	for f in crash_here crash_middle main; do
		n=$(grep -n -E "^$f $src/crash\.c:$(line $f)(:[0-9]+)?\$" "$2" | head -1 | cut -d: -f1)
		if [ -z "$n" ]; then
			fail "$1 has no frame '$f at crash.c:$(line $f)'"
		elif [ "$n" -le "$prev" ]; then
			fail "$1 has $f before its callee"
		fi
		prev=${n:-$prev}
	done
}
tl_case "gdb"
bd=$(requests debuginfo) be=$(requests executable)
DEBUGINFOD_CACHE_PATH=$tmp/cache-gdb timeout 120 gdb -batch -nx -iex 'set debuginfod enabled on' \
	-ex bt -c "$run/core" >"$tmp/gdb.out" 2>&1
# "#4  0x000055555555516f in crash_here (depth=2) at /src/crash.c:7"
sed -n -E 's/^#[0-9]+ +(0x[0-9a-f]+ in )?([^ ]+) \(.*\) at ([^ ]+)$/\2 \3/p' "$tmp/gdb.out" \
	>"$tmp/gdb.frames"
frames_named "gdb's backtrace" "$tmp/gdb.frames"
grep -q -E "^Core was generated by .*$run/crash" "$tmp/gdb.out" || fail "gdb did not read the core"
moved "gdb" debuginfo "$bd" ">=" 1
moved "gdb" executable "$be" ">=" 1
grep -q "/buildid/$B/debuginfo 200 " "$tmp/node.err" || fail "the node's log has no 200 for the debuginfo"
grep -q "/buildid/$B/executable 200 " "$tmp/node.err" || fail "the node's log has no 200 for the executable"
if [ "$CASE_FAILED" != 0 ]; then
	sed 's/^/  gdb: /' "$tmp/gdb.out" | tail -20 >&2
fi
tl_case_end

# ---- eu-stack --core: likewise (libdwfl asks debuginfod for the
# executable of the core's main module, which is gone, and for its
# debuginfo).  -s: source lines, "    FILE:LINE:COLUMN" under each frame.
tl_case "eu-stack"
bd=$(requests debuginfo) be=$(requests executable)
DEBUGINFOD_CACHE_PATH=$tmp/cache-eustack timeout 120 eu-stack -s --core="$run/core" \
	>"$tmp/eustack.out" 2>"$tmp/eustack.err"
awk '/^#[0-9]/ {f = $3} /^    \// {print f, $1}' "$tmp/eustack.out" >"$tmp/eustack.frames"
frames_named "eu-stack -s" "$tmp/eustack.frames"
moved "eu-stack" debuginfo "$bd" ">=" 1
moved "eu-stack" executable "$be" ">=" 1
[ -s "$tmp/cache-eustack/$B/executable" ] && cmp -s "$tmp/cache-eustack/$B/executable" "$srv/crash" ||
	fail "eu-stack's client cache has not the node's executable"
if [ "$CASE_FAILED" != 0 ]; then
	sed 's/^/  eu-stack: /' "$tmp/eustack.out" "$tmp/eustack.err" | tail -20 >&2
fi
tl_case_end

# ---- /metrics: responses and transfers counted too.  Then SIGTERM: the
# node exits 0, with nothing for a sanitizer to say.
tl_case "metrics and exit"
tl_metrics "$port" >"$tmp/metrics"
grep -q '^http_responses_total{result="file"} [1-9]' "$tmp/metrics" ||
	fail "no http_responses_total{result=\"file\"} > 0"
grep -q '^http_responses_transfer_bytes_count{code="200",type="debuginfo"} [1-9]' "$tmp/metrics" ||
	fail "no http_responses_transfer_bytes_count{code=\"200\",type=\"debuginfo\"} > 0"
grep -q '^ready 1$' "$tmp/metrics" || fail "the node is not ready any more"
rc=0
tl_stop "$node_pid" 60 || rc=$?
[ "$rc" = 0 ] || fail "the node exited $rc on SIGTERM"
if grep -q -E 'Sanitizer|runtime error' "$tmp/node.err"; then
	fail "sanitizer report: $(grep -m3 -E 'Sanitizer|runtime error' "$tmp/node.err")"
fi
tl_case_end

tl_finish serve_clients.sh "all checks passed"
