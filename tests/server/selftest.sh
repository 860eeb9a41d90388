#!/usr/bin/env bash
# Self-test of dsserver, the fault-injecting debuginfod test server: it
# serves the right bytes (compared with the files and with objcopy's dump of
# sections), answers like elfutils 0.188 (404, 503, 406), injects every
# fault kind per build ID and globally, counts and logs every request, talks
# to the real elfutils client, and stops cleanly.  Only 127.0.0.1 is used.
set -u
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

DSSERVER=${DSSERVER:-${DS_BUILD:-build}/dsserver}
for tool in gcc curl objcopy readelf strip awk cmp; do
	if ! command -v $tool >/dev/null; then
		echo "skip: $tool is not installed" >&2
		exit 77
	fi
done
if [ ! -x "$DSSERVER" ]; then
	echo "FAIL: no dsserver at $DSSERVER" >&2
	exit 1
fi

tmp=$(mktemp -d)
pid=
fail=0
cleanup() {
	[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

bad() {
	echo "FAIL: $*" >&2
	fail=$((fail + 1))
}
eq() { # what expected actual
	[ "$2" = "$3" ] || bad "$1: expected '$2', got '$3'"
}
same() { # what expected-file actual-file
	cmp -s "$2" "$3" || bad "$1: $3 differs from $2"
}
at_least() { # what min-seconds seconds
	awk -v a="$3" -v m="$2" 'BEGIN { exit !(a >= m) }' || bad "$1: took $3 s, expected >= $2 s"
}
at_most() { # what max-seconds seconds
	awk -v a="$3" -v m="$2" 'BEGIN { exit !(a <= m) }' || bad "$1: took $3 s, expected <= $2 s"
}
# Waits for the server $pid to exit by itself, which it must do with status 0.
stopped_within() { # seconds what
	for _ in $(seq $((10 * $1))); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $pid 2>/dev/null; then
		bad "$2: server still running after $1 s"
		kill -KILL $pid
	fi
	wait $pid
	eq "$2: exit status" 0 $?
	pid=
}

# ---- corpus: a (unstripped, -g), b (stripped) + b.debug (--only-keep-debug)
srv=$tmp/srv
mkdir -p "$srv"
cat >"$srv/a.c" <<'EOF'
#include <stdio.h>
/* Padding so that a bandwidth cap takes measurable time. */
static const char pad[96 * 1024] = {1};
int main(int argc, char **argv) { return puts(argv[0]) + pad[argc]; }
EOF
cat >"$srv/b.c" <<'EOF'
#include <stdio.h>
static int twice(int x) { return 2 * x; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", twice(argc)); return 0; }
EOF
echo "not an ELF file" >"$srv/garbage.txt"
echo "outside" >"$tmp/outside.c"
gcc -g -O0 -o "$srv/a" "$srv/a.c" || { bad "building a"; exit 1; }
gcc -g -O0 -o "$srv/b" "$srv/b.c" &&
	objcopy --only-keep-debug "$srv/b" "$srv/b.debug" &&
	strip "$srv/b" || { bad "building b"; exit 1; }

build_id() {
	readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3 }'
}
A=$(build_id "$srv/a")
B=$(build_id "$srv/b")
eq "b.debug has b's build ID" "$B" "$(build_id "$srv/b.debug")"
[ -n "$A" ] && [ -n "$B" ] && [ "$A" != "$B" ] || { bad "build IDs '$A' '$B'"; exit 1; }
objcopy --dump-section .debug_info="$tmp/b.debug_info" "$srv/b.debug" &&
	objcopy --dump-section .text="$tmp/b.text" "$srv/b" || bad "objcopy --dump-section"

# ---- start: one fault from the command line, port on stdout
"$DSSERVER" --log "$tmp/log" --max-runtime 120 \
	--fault "$B:status=502,times=1,artifact=executable" "$srv" >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do
	grep -q '^PORT ' "$tmp/out" && break
	sleep 0.1
done
port=$(awk '/^PORT / { print $2 }' "$tmp/out")
[ -n "$port" ] || { bad "no PORT line: $(cat "$tmp/err")"; exit 1; }
U=http://127.0.0.1:$port

# Every request to the debuginfod API goes through req, which notes its path
# in $tmp/sent (req runs in subshells), so the server's counters can be
# checked at the end.
: >"$tmp/sent"
req() { # path [curl options]: prints "<code> <bytes> <seconds>", body in ${REQ_OUT:-$tmp/got}
	local path=$1
	shift
	echo "$path" >>"$tmp/sent"
	curl -q -s --noproxy '*' --path-as-is -o "${REQ_OUT:-$tmp/got}" -D "$tmp/hdr" \
		-w '%{http_code} %{size_download} %{time_total}' "$@" "$U$path"
}
ctl() { # endpoint [name=value...]: sets a fault or the like, must answer 200
	local ep=$1 args=()
	shift
	for a in "$@"; do
		args+=(--data-urlencode "$a")
	done
	curl -q -sf --noproxy '*' -G -X POST "${args[@]}" "$U/control/$ep" >/dev/null ||
		bad "control $ep $*"
}
code() { # path [curl options]: the status code only
	req "$@" | cut -d' ' -f1
}
seconds() { # path [curl options]: the time the request took
	req "$@" | cut -d' ' -f3
}
header() { # name: its value in the last response
	tr -d '\r' <"$tmp/hdr" | awk -v n="$1" 'tolower($1) == tolower(n) ":" { print $2 }'
}

# ---- the debuginfod API
eq "cli fault, first request" 502 "$(code /buildid/$B/executable)"
eq "cli fault used up" 200 "$(code /buildid/$B/executable)"
same "B executable" "$srv/b" "$tmp/got"
eq "A debuginfo" 200 "$(code /buildid/$A/debuginfo)"
same "A debuginfo" "$srv/a" "$tmp/got"
eq "A X-DEBUGINFOD-SIZE" "$(stat -c %s "$srv/a")" "$(header X-DEBUGINFOD-SIZE)"
eq "A Content-Length" "$(stat -c %s "$srv/a")" "$(header Content-Length)"
eq "A X-DEBUGINFOD-FILE" "$(realpath "$srv/a")" "$(header X-DEBUGINFOD-FILE)"
[ -n "$(header Last-Modified)" ] || bad "no Last-Modified"
eq "A executable" 200 "$(code /buildid/$A/executable)"
same "A executable" "$srv/a" "$tmp/got"
eq "B debuginfo" 200 "$(code /buildid/$B/debuginfo)"
same "B debuginfo" "$srv/b.debug" "$tmp/got"
eq "B .debug_info" 200 "$(code /buildid/$B/section/.debug_info)"
same "B .debug_info" "$tmp/b.debug_info" "$tmp/got"
eq "B .text (NOBITS in b.debug, from b)" 200 "$(code /buildid/$B/section/.text)"
same "B .text" "$tmp/b.text" "$tmp/got"
eq "missing section" 404 "$(code /buildid/$B/section/.nosuch)"
eq "A source" 200 "$(code "/buildid/$A/source$(realpath "$srv/a.c")")"
same "A source" "$srv/a.c" "$tmp/got"
eq "source outside the served dir" 404 "$(code "/buildid/$A/source$(realpath "$tmp/outside.c")")"
eq "source via .." 404 "$(code "/buildid/$A/source$(realpath "$srv")/../outside.c")"
eq "source of an unknown build ID" 404 "$(code "/buildid/0011/source$(realpath "$srv/a.c")")"
eq "unknown build ID" 404 "$(code /buildid/00112233445566778899aabbccddeeff00112233/debuginfo)"
eq "uppercase build ID" 503 "$(code "/buildid/${A^^}/debuginfo")"
eq "odd-length build ID" 503 "$(code "/buildid/${A:1}/debuginfo")"
eq "non-hex build ID" 503 "$(code /buildid/xyz0/debuginfo)"
eq "unknown artifact" 503 "$(code /buildid/$A/debugsource)"
size_a=$(stat -c %s "$srv/a")
eq "MAXSIZE too small" 406 "$(code /buildid/$A/debuginfo -H "X-DEBUGINFOD-MAXSIZE: $((size_a - 1))")"
eq "MAXSIZE just enough" 200 "$(code /buildid/$A/debuginfo -H "X-DEBUGINFOD-MAXSIZE: $size_a")"
eq "metrics" 200 "$(code /metrics)"
grep -q '^ready 1$' "$tmp/got" || bad "/metrics has no 'ready 1'"

# ---- faults
ctl fault bid='*' kind=latency arg=400
at_least "global latency=400" 0.38 "$(seconds /buildid/$B/debuginfo)"
ctl reset

ctl fault bid=$A kind=bandwidth arg=200000
at_least "bandwidth=200000 on $size_a bytes" 0.3 "$(seconds /buildid/$A/debuginfo)"
same "A at 200 kB/s" "$srv/a" "$tmp/got"
ctl reset

ctl fault bid=$A kind=status arg=500
eq "per-build-ID status" 500 "$(code /buildid/$A/debuginfo)"
eq "other build ID unaffected" 200 "$(code /buildid/$B/debuginfo)"
ctl fault spec='*:status=503'
ctl fault bid=$B kind=ok
eq "global status, A" 500 "$(code /buildid/$A/debuginfo)" # A's own rule wins
eq "global status, B exempted by ok" 200 "$(code /buildid/$B/debuginfo)"
eq "global status, unknown build ID" 503 "$(code /buildid/0011/debuginfo)"
ctl reset

ctl fault bid=$A kind=status arg=503 times=2
eq "times=2, 1st" 503 "$(code /buildid/$A/debuginfo)"
eq "times=2, 2nd" 503 "$(code /buildid/$A/debuginfo)"
eq "times=2, then normal" 200 "$(code /buildid/$A/debuginfo)"
eq "no rule left" "" "$(curl -q -s --noproxy '*' "$U/control/faults")"

ctl fault bid=$A kind=truncate arg=100
req /buildid/$A/debuginfo >/dev/null
eq "truncate: curl error" 18 $?
eq "truncate: bytes" 100 "$(stat -c %s "$tmp/got")"
cmp -s -n 100 "$srv/a" "$tmp/got" || bad "truncate: wrong bytes"
ctl fault bid=$A kind=reset arg=100
req /buildid/$A/debuginfo >/dev/null
rc=$?
[ $rc = 56 ] || [ $rc = 18 ] || bad "reset: curl exit $rc, expected 56 (recv error)"
[ "$(stat -c %s "$tmp/got")" -le 100 ] || bad "reset: more than 100 bytes"

# hang and stall wait in their own threads: other requests go on meanwhile
ctl fault bid=$A kind=stall arg=100 artifact=executable
ctl fault bid=$A kind=hang artifact=debuginfo
(
	out=$(req /buildid/$A/executable -m 1)
	echo "${out% *} $?" >"$tmp/stall.out"
) &
stall=$!
(
	out=$(req /buildid/$A/debuginfo -m 1)
	echo "${out% *} $?" >"$tmp/hang.out"
) &
hang=$!
sleep 0.3
at_most "a request while others hang" 1 "$(seconds /buildid/$B/executable)"
wait $stall $hang
eq "stall: code, bytes, curl timeout" "200 100 28" "$(cat "$tmp/stall.out")"
eq "hang: no answer, curl timeout" "000 0 28" "$(cat "$tmp/hang.out")"

ctl fault bid=$A kind=wrongfile arg=$B artifact=debuginfo
ctl fault bid=$A kind=wrongfile arg="$(realpath "$srv/garbage.txt")" artifact=executable
eq "wrongfile=B" 200 "$(code /buildid/$A/debuginfo)"
same "wrongfile=B sends b.debug" "$srv/b.debug" "$tmp/got"
eq "wrongfile=PATH" 200 "$(code /buildid/$A/executable)"
same "wrongfile=PATH sends it" "$srv/garbage.txt" "$tmp/got"
ctl reset
ctl fault bid=$A kind=gzip
eq "gzip, not asked for" "200 $size_a" "$(req /buildid/$A/debuginfo | cut -d' ' -f1-2)"
eq "gzip, ignoring MAXSIZE" 200 "$(code /buildid/$A/debuginfo --compressed -H 'X-DEBUGINFOD-MAXSIZE: 100')"
eq "gzip Content-Encoding" gzip "$(header Content-Encoding)"
eq "gzip X-DEBUGINFOD-SIZE" $size_a "$(header X-DEBUGINFOD-SIZE)"
[ "$(header Content-Length)" -lt $((size_a / 2)) ] || bad "gzip: Content-Length $(header Content-Length)"
same "gzip: decompressed" "$srv/a" "$tmp/got"

ctl reset
ctl fault bid=$A kind=redirect arg="http://127.0.0.1:1%p"
eq "redirect" 302 "$(code /buildid/$A/debuginfo)"
eq "redirect Location" "http://127.0.0.1:1/buildid/$A/debuginfo" "$(header Location)"
ctl fault bid=$A kind=redirect arg="file:///etc/hostname"
eq "redirect to file://" "302 file:///etc/hostname" "$(code /buildid/$A/executable) $(header Location)"
eq "a GET to /control works" "ok" "$(curl -q -s --noproxy '*' "$U/control/fault?spec=$A:latency=1")"
eq "rules listed" 2 "$(curl -q -s --noproxy '*' "$U/control/faults" | wc -l)"
ctl fault spec="$B:gzipbomb-nosize=$((1 << 60)),times=3,artifact=section"
ctl fault spec="$B:short"
eq "new kinds listed" "$B:gzipbomb-nosize=$((1 << 60)),times=3,artifact=section|$B:short" \
	"$(curl -q -s --noproxy '*' "$U/control/faults" | grep "^$B:" | paste -sd'|')"
eq "bad fault refused" 400 "$(curl -q -s --noproxy '*' -o /dev/null -w '%{http_code}' \
	"$U/control/fault?kind=status&arg=99")"
ctl reset
eq "reset clears the rules" "" "$(curl -q -s --noproxy '*' "$U/control/faults")"

# short and pad: consistent liars, complete answers whose sizes agree
ctl fault bid=$A kind=short arg=1000
out=$(req /buildid/$A/debuginfo)
eq "short=1000: curl exit, code, bytes" "0 200 1000" "$? ${out% *}"
eq "short Content-Length" 1000 "$(header Content-Length)"
eq "short X-DEBUGINFOD-SIZE" 1000 "$(header X-DEBUGINFOD-SIZE)"
cmp -s -n 1000 "$srv/a" "$tmp/got" || bad "short=1000: not the file's first bytes"
ctl fault bid=$A kind=short
eq "short (half)" "200 $((size_a / 2))" "$(req /buildid/$A/debuginfo | cut -d' ' -f1-2)"
cmp -s -n $((size_a / 2)) "$srv/a" "$tmp/got" || bad "short: not the file's first half"
ctl fault bid=$A kind=pad arg=5000
out=$(req /buildid/$A/debuginfo)
eq "pad=5000: curl exit, code, bytes" "0 200 $((size_a + 5000))" "$? ${out% *}"
eq "pad Content-Length" $((size_a + 5000)) "$(header Content-Length)"
eq "pad X-DEBUGINFOD-SIZE" $((size_a + 5000)) "$(header X-DEBUGINFOD-SIZE)"
cmp -s -n $size_a "$srv/a" "$tmp/got" || bad "pad: the file does not come first"
eq "pad: zero bytes after the file" 0 "$(tail -c 5000 "$tmp/got" | tr -d '\0' | wc -c)"
# 1 GiB of padding is streamed, not allocated
ctl fault bid=$A kind=pad arg=$((1 << 30))
out=$(REQ_OUT=/dev/null req /buildid/$A/executable)
eq "pad=1GiB: curl exit, code, bytes" "0 200 $((size_a + (1 << 30)))" "$? ${out% *}"
eq "pad=1GiB X-DEBUGINFOD-SIZE" $((size_a + (1 << 30))) "$(header X-DEBUGINFOD-SIZE)"
hwm=$(awk '/^VmHWM:/ { print $2 }' /proc/$pid/status)
[ "$hwm" -lt 65536 ] || bad "pad=1GiB: server's peak RSS $hwm kB"
ctl idle
eq "short, pad: logged as whole answers" \
	"short=1000 ok|short ok|pad=5000 ok|pad=1073741824 ok" \
	"$(awk '$6 ~ /^(short|pad)/ { print $6, $7 }' "$tmp/log" | paste -sd'|')"
ctl reset

# gzipbomb, deflatebomb: compressed whatever the client accepts; decoded,
# the file and zero bytes up to N (here two pieces of zeros and a rest)
n=$(((8 << 20) + 12345))
ctl fault bid=$A kind=gzipbomb arg=$n artifact=debuginfo
ctl fault bid=$A kind=deflatebomb arg=$n artifact=executable
for case in debuginfo:gzip:1f8b executable:deflate:789c; do
	IFS=: read -r art enc magic <<<"$case"
	eq "$enc bomb, identity asked for" 200 "$(code /buildid/$A/$art -H 'Accept-Encoding: identity')"
	eq "$enc bomb Content-Encoding" $enc "$(header Content-Encoding)"
	eq "$enc bomb X-DEBUGINFOD-SIZE" $size_a "$(header X-DEBUGINFOD-SIZE)"
	eq "$enc bomb Content-Length" "$(stat -c %s "$tmp/got")" "$(header Content-Length)"
	eq "$enc bomb format" $magic "$(head -c2 "$tmp/got" | od -An -tx1 | tr -d ' \n')"
	[ "$(header Content-Length)" -lt $((size_a + n / 100)) ] ||
		bad "$enc bomb: $(header Content-Length) bytes for $n"
	# curl decodes it, checking the CRC-32 or Adler-32 and the length
	req /buildid/$A/$art --compressed >/dev/null
	eq "$enc bomb decoded: curl exit" 0 $?
	eq "$enc bomb decoded size" $n "$(stat -c %s "$tmp/got")"
	cmp -s -n $size_a "$srv/a" "$tmp/got" || bad "$enc bomb: the file does not come first"
	eq "$enc bomb: zero bytes after the file" 0 \
		"$(tail -c +$((size_a + 1)) "$tmp/got" | tr -d '\0' | wc -c)"
done
ctl reset
ctl fault bid=$A kind=gzipbomb-nosize arg=10
eq "gzipbomb-nosize, N < file size" 200 "$(code /buildid/$A/debuginfo --compressed)"
same "gzipbomb, N < file size: the file" "$srv/a" "$tmp/got"
eq "gzipbomb-nosize: no X-DEBUGINFOD-SIZE" "" "$(header X-DEBUGINFOD-SIZE)"
# 1 GiB of zeros: about 1 MB compressed, and the gzip trailer's ISIZE says
# 2^30 (decoding it all is left to the clients' tests)
ctl fault bid=$A kind=gzipbomb arg=$((1 << 30))
eq "gzipbomb=1GiB" 200 "$(code /buildid/$A/debuginfo)"
len=$(header Content-Length)
[ "$len" -gt 1000000 ] && [ "$len" -lt 1200000 ] || bad "gzipbomb=1GiB: $len bytes"
eq "gzipbomb=1GiB: ISIZE" "00000040" "$(tail -c4 "$tmp/got" | od -An -tx1 | tr -d ' \n')"
ctl reset

# bigheaders: N bytes of X-Pad lines before the usual headers, written on
# the socket by dsserver itself.  A small N, curl takes it:
ctl fault bid=$A kind=bigheaders arg=100000
out=$(req /buildid/$A/debuginfo)
eq "bigheaders=100000: curl exit, code, bytes" "0 200 $size_a" "$? ${out% *}"
same "bigheaders: body" "$srv/a" "$tmp/got"
eq "bigheaders: X-DEBUGINFOD-SIZE" $size_a "$(header X-DEBUGINFOD-SIZE)"
eq "bigheaders: X-Pad bytes" 100000 "$(grep -a '^X-Pad-' "$tmp/hdr" | wc -c)"
# 20 MB (more than curl takes), read raw: a status line, header lines,
# 20 MB of them X-Pad, an empty line, the file
raw_get() { # path: writes the whole answer, as sent, to stdout
	echo "$1" >>"$tmp/sent"
	exec 3<>/dev/tcp/127.0.0.1/$port
	printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' "$1" >&3
	cat <&3
	exec 3<&-
}
ctl fault bid=$A kind=bigheaders arg=20000000
raw_get /buildid/$A/executable >"$tmp/raw"
eq "bigheaders=20MB: status line" "HTTP/1.1 200 OK" "$(head -1 "$tmp/raw" | tr -d '\r')"
read -r hdr_len pad bad < <(LC_ALL=C awk '
	NR == 1 { n = length($0) + 1; next }
	$0 == "\r" { print n + 2, pad + 0, bad + 0; exit }
	{ n += length($0) + 1 }
	/^X-Pad-/ { pad += length($0) + 1 }
	!/^[A-Za-z0-9-]+: [^\r]*\r$/ { bad++ }' "$tmp/raw")
eq "bigheaders=20MB: X-Pad bytes, malformed header lines" "20000000 0" "$pad $bad"
eq "bigheaders=20MB: Content-Length" "Content-Length: $size_a" \
	"$(head -c "$hdr_len" "$tmp/raw" | grep -a '^Content-Length:' | tr -d '\r')"
tail -c +$((hdr_len + 1)) "$tmp/raw" | cmp -s - "$srv/a" || bad "bigheaders=20MB: body"
rm -f "$tmp/raw"
# a client that gives up in the middle ends the request at once
echo /buildid/$A/executable >>"$tmp/sent"
exec 3<>/dev/tcp/127.0.0.1/$port
printf 'GET /buildid/%s/executable HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' $A >&3
head -c 100000 <&3 >/dev/null
exec 3<&-
ctl idle
eq "bigheaders: logged" \
	"200 $size_a bigheaders=100000 ok|200 $size_a bigheaders=20000000 ok|200 0 bigheaders=20000000 aborted" \
	"$(awk '$6 ~ /^bigheaders/ { print $4, $5, $6, $7 }' "$tmp/log" | paste -sd'|')"
ctl reset

# echo: the path exactly as sent (before unescaping), for any artifact and
# any build ID, in the body, in X-DSSERVER-PATH and in the log
ctl fault spec='*:echo'
for path in "/buildid/$A/source/tmp/a%20b/..%2F%25c.c" "/buildid/0011/section/.debug%5finfo"; do
	eq "echo $path" "200 ${#path}" "$(req "$path" | cut -d' ' -f1-2)"
	printf '%s' "$path" | cmp -s - "$tmp/got" || bad "echo $path: body '$(cat "$tmp/got")'"
	eq "echo X-DSSERVER-PATH" "$path" "$(header X-DSSERVER-PATH)"
	eq "echo Content-Type" text/plain "$(header Content-Type)"
	ctl idle
	eq "echo: the log shows the raw path" "GET $path 200 ${#path} echo ok" \
		"$(grep -F " $path " "$tmp/log" | cut -d' ' -f2-)"
done
ctl reset

# ---- counters and log
ctl idle
stats=$(curl -q -s --noproxy '*' "$U/control/stats")
nreq=$(wc -l <"$tmp/sent")
eq "requests counted" $nreq "$(awk '$1 == "requests" { print $2 }' <<<"$stats")"
eq "log lines" $nreq "$(wc -l <"$tmp/log")"
for path in /buildid/$A/debuginfo /buildid/$A/executable /buildid/$B/debuginfo; do
	eq "count of $path" "$(grep -c -x -F "$path" "$tmp/sent")" \
		"$(curl -q -s --noproxy '*' -G --data-urlencode "url=$path" "$U/control/stats")"
done
eq "count by prefix" "$(grep -c -x -F "/buildid/$A/executable" "$tmp/sent")" \
	"$(curl -q -s --noproxy '*' "$U/control/stats?prefix=/buildid/$A/e")"
eq "log line of the hang" "GET /buildid/$A/debuginfo 0 0 hang aborted" \
	"$(awk '$6 == "hang" { print $2, $3, $4, $5, $6, $7 }' "$tmp/log")"
eq "log fields" 7 "$(awk '{ print NF }' "$tmp/log" | sort -u)"

# ---- the real elfutils client
if command -v debuginfod-find >/dev/null; then
	export DEBUGINFOD_URLS=$U DEBUGINFOD_CACHE_PATH=$tmp/cache DEBUGINFOD_TIMEOUT=10
	p=$(debuginfod-find debuginfo "$B") || bad "debuginfod-find debuginfo"
	same "debuginfod-find debuginfo" "$srv/b.debug" "$p"
	p=$(debuginfod-find executable "$A") || bad "debuginfod-find executable"
	same "debuginfod-find executable" "$srv/a" "$p"
	p=$(debuginfod-find source "$B" "$(realpath "$srv/b.c")") || bad "debuginfod-find source"
	same "debuginfod-find source" "$srv/b.c" "$p"
	unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_TIMEOUT
else
	echo "note: debuginfod-find not installed, interop not checked" >&2
fi

# ---- stopping: SIGTERM ends it promptly even with a request hanging
ctl fault bid='*' kind=hang
curl -q -s --noproxy '*' -m 20 "$U/buildid/$A/debuginfo" >/dev/null &
hung=$!
sleep 0.3
kill -TERM $pid
stopped_within 5 "SIGTERM with a request hanging"
wait $hung
curl -q -s --noproxy '*' -m 2 "$U/metrics" >/dev/null && bad "server still answers after SIGTERM"

# ---- --port-file and --max-runtime
"$DSSERVER" --port-file "$tmp/port" --max-runtime 1 "$srv" 2>"$tmp/err2" &
pid=$!
for _ in $(seq 50); do
	[ -s "$tmp/port" ] && break
	sleep 0.1
done
eq "port file" 200 "$(curl -q -s --noproxy '*' -o /dev/null -w '%{http_code}' \
	"http://127.0.0.1:$(cat "$tmp/port")/metrics")"
stopped_within 4 "--max-runtime 1"

# ---- --blackhole: connect() times out
rm -f "$tmp/port"
"$DSSERVER" --blackhole --port-file "$tmp/port" --max-runtime 30 2>"$tmp/err3" &
pid=$!
for _ in $(seq 50); do
	[ -s "$tmp/port" ] && break
	sleep 0.1
done
out=$(curl -q -s --noproxy '*' -o /dev/null -w '%{http_code} %{time_connect} %{time_total}' \
	--connect-timeout 0.5 -m 5 "http://127.0.0.1:$(cat "$tmp/port")/metrics")
eq "blackhole: curl timeout" 28 $?
eq "blackhole: never connected" "000 0.000000" "$(cut -d' ' -f1-2 <<<"$out")"
at_least "blackhole: connect timeout" 0.45 "$(cut -d' ' -f3 <<<"$out")"
kill -TERM $pid
stopped_within 3 "--blackhole, SIGTERM"

# ---- bad command lines
"$DSSERVER" --fault 'nocolon' "$srv" 2>/dev/null
eq "--fault without a colon" 2 $?
"$DSSERVER" --fault '*:bogus' "$srv" 2>/dev/null
eq "--fault with an unknown kind" 2 $?
"$DSSERVER" --fault 'ABCD:hang' "$srv" 2>/dev/null
eq "--fault with an uppercase key" 2 $?
for spec in '*:pad' '*:echo=1' '*:gzipbomb' "*:deflatebomb-nosize=$(((1 << 60) + 1))" \
	'*:bigheaders=-1'; do
	"$DSSERVER" --fault "$spec" "$srv" 2>/dev/null
	eq "--fault $spec refused" 2 $?
done
"$DSSERVER" --max-runtime 1 "$tmp/nosuchdir" 2>/dev/null
eq "missing directory" 1 $?

if [ $fail -ne 0 ]; then
	echo "--- dsserver's stderr:" >&2
	cat "$tmp/err" >&2
	echo "server_selftest: $fail failure(s)" >&2
	exit 1
fi
echo "server_selftest: ok"
