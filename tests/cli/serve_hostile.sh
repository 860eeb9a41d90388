#!/bin/bash
# SPDX-License-Identifier: MIT
# `dsostore serve` against hostile clients: paths that try to leave what
# the node serves (curl --path-as-is, and raw bytes over a socket where
# curl would normalize them), malformed build IDs and artifacts, foreign
# methods, a request line of 100 KB, bodies over --max-body, slowloris
# clients, SIGTERM while an upstream download is in flight, and kill -9 in
# the middle of one.  After all of it the node still answers and has not
# crashed.
#
# Expected values: the spec of `dsostore serve` (docs/serve.md): 400 for
# a malformed request, 404 for what is not served (a source file is
# served only when its build ID's DWARF names it: readelf --debug-dump=line
# confirms what ours names), 405 for a method, 413 over --max-body; the
# bytes of the files we compiled; dsserver's arrival counts.  Only
# 127.0.0.1 is used.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
unset DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc readelf curl cmp python3 flock
tl_need_dsserver
tl_sanitizer_exitcodes

tl_tmpdir dsservehostile
T=$tmp
cd "$T" || exit 2
export HOME=$T/home DEBUGINFOD_TIMEOUT=30
mkdir -p "$HOME" served src far

# ------------------------------------------------------------- fixtures
# prog: served by -F, its DWARF names src/prog.c; src/secret.txt is
# readable and named by nothing.  far: only upstream (dsserver), for the
# downloads in flight.
cat >src/prog.c <<'EOF'
#include <stdio.h>
static int square(int x) { return x * x; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", square(argc)); return 0; }
EOF
echo 'not named by any DWARF' >src/secret.txt
cat >far/far.c <<'EOF'
#include <stdio.h>
static const char pad[64 * 1024] = {1};
int main(int argc, char **argv) { return puts(argv[0]) + pad[argc]; }
EOF
gcc -g -O1 -o served/prog "$T/src/prog.c" 2>gcc.err &&
	gcc -g -O0 -o far/far "$T/far/far.c" 2>>gcc.err ||
	{ fail "compiling: $(head -3 gcc.err)"; exit 1; }
ID=$(tl_build_id served/prog)
FAR=$(tl_build_id far/far)
[ -n "$ID" ] && [ -n "$FAR" ] || { fail "no build IDs"; exit 1; }
# The DWARF names src/prog.c by its absolute path, and not secret.txt.
readelf --debug-dump=line served/prog >lines.txt 2>&1
grep -q 'prog\.c' lines.txt && grep -qF "$T/src" lines.txt ||
	{ fail "readelf: the line table does not name $T/src/prog.c"; exit 1; }
! grep -q secret lines.txt || { fail "readelf: the line table names secret.txt"; exit 1; }

# ------------------------------------------------------------- servers
tl_start_dsserver UP up --max-runtime 280 far || exit 1
UPURL=http://127.0.0.1:$UP
tl_start_serve PORT node 0 --listen 127.0.0.1 -F "$T/served" --upstream "$UPURL" \
	--cache "$T/cache" --connections 30 --idle-timeout 3 --max-body 4096 -v || exit 1
NODE=${pids[-1]}
others=()
URL=http://127.0.0.1:$PORT

# get NAME PATH [CURL-ARGS...]: GET PATH as given (--path-as-is, no
# globbing), the body in NAME.body, the status in $code.
get() {
	local name=$1 path=$2

	shift 2
	code=$(curl -s --path-as-is -g --max-time 20 -o "$name.body" -w '%{http_code}' "$@" \
		"$URL$path") || code="curl exit $?"
}

# expect NAME WANT PATH [CURL-ARGS...]: GET PATH answers WANT (a status,
# or several as "400|404"); and never a byte of /etc/passwd or secret.txt.
expect() {
	local name=$1 want=$2 path=$3

	shift 3
	get "$name" "$path" "$@"
	case "|$want|" in
	*"|$code|"*) ;;
	*) fail "$name: GET $path: HTTP $code, want $want: $(head -c 200 "$name.body")" ;;
	esac
	! grep -q -e 'root:' -e 'not named by any DWARF' "$name.body" ||
		fail "$name: GET $path served a file it must not"
}

# raw NAME: NAME.req sent as it is over a socket (a thread reads while
# another writes: the node may answer before the request is all sent);
# the status line's code in $code, "closed" if the connection ended
# without one, "reset" if it was reset first, "timeout" if nothing came
# in 20 s.
cat >raw.py <<'EOF'
import socket, sys, threading
port, req = int(sys.argv[1]), open(sys.argv[2], "rb").read()
s = socket.create_connection(("127.0.0.1", port), timeout=20)
got, err = bytearray(), []
def reader():
    try:
        while b"\r\n" not in got:
            b = s.recv(65536)
            if not b:
                return
            got.extend(b)
    except OSError as e:
        err.append(e)
t = threading.Thread(target=reader)
t.start()
try:
    s.sendall(req)
except OSError:
    pass
t.join(25)
line = bytes(got).split(b"\r\n", 1)[0].split()
if len(line) >= 2 and line[0].startswith(b"HTTP/"):
    print(line[1].decode())
elif err and isinstance(err[0], socket.timeout):
    print("timeout")
else:
    print("reset" if err else "closed")
EOF
raw() {
	code=$(python3 raw.py "$PORT" "$1.req" 2>"$1.err") || code="python: $(head -3 "$1.err")"
}

# ---------------------------------------------------------- what is served
tl_case served
expect debuginfo 200 "/buildid/$ID/debuginfo"
cmp -s debuginfo.body served/prog || fail "/debuginfo is not the file"
expect source 200 "/buildid/$ID/source$T/src/prog.c"
cmp -s source.body src/prog.c || fail "/source is not src/prog.c"
# Compared as debuginfod compares them: "." and ".." taken out.
expect source-dots 200 "/buildid/$ID/source$T/src/./x/../prog.c"
cmp -s source-dots.body src/prog.c || fail "/source with dots is not src/prog.c"
tl_case_end

# ---------------------------------------------------------- path escapes
tl_case escapes
expect up-dots '400|404' "/buildid/../../etc/passwd"
expect up-dots-enc '400|404' "/buildid/%2e%2e/%2e%2e/etc/passwd"
expect up-dots-enc2 '400|404' "/buildid/$ID/%2e%2e/%2e%2e/%2e%2e/etc/passwd"
expect double-slash 404 "//buildid/$ID/debuginfo"
expect src-passwd 404 "/buildid/$ID/source/etc/passwd"
expect src-shadow 404 "/buildid/$ID/source/etc/shadow"
expect src-up 404 "/buildid/$ID/source$T/src/../../../../../../../../etc/passwd"
expect src-up-enc 404 "/buildid/$ID/source/%2e%2e/%2e%2e/etc/passwd"
expect src-slashes 404 "/buildid/$ID/source//etc//passwd"
# In the directory of a named file, readable, and still not named.
expect src-secret 404 "/buildid/$ID/source$T/src/secret.txt"
expect src-secret-dots 404 "/buildid/$ID/source$T/src/../src/secret.txt"
expect src-relative 404 "/buildid/$ID/source/relative/path"
tl_case_end

# ---------------------------------------------------- malformed requests
tl_case malformed
long=$(printf '%0200d' 0 | tr 0 a)
expect bid-long 400 "/buildid/$long/debuginfo"
expect bid-odd 400 "/buildid/${ID:1}/debuginfo"
expect bid-upper 400 "/buildid/${ID^^}/debuginfo"
expect bid-short 400 "/buildid/a/debuginfo"
expect bid-empty 400 "/buildid//debuginfo"
expect bid-nonhex 400 "/buildid/zz${ID:2}/debuginfo"
expect bid-nul 400 "/buildid/${ID}%00/debuginfo"
# %00 must not cut a path short into one the DWARF names: the node keeps
# it as the three characters (no file is named so: 404), or refuses it.
expect src-nul '400|404' "/buildid/$ID/source$T/src/prog.c%00.txt"
! cmp -s src-nul.body src/prog.c || fail "src-nul: %00 cut the path short: prog.c served"
expect artifact 400 "/buildid/$ID/debugdata"
expect artifact-empty 400 "/buildid/$ID/"
for m in DELETE PUT PATCH; do
	expect "method-$m" '400|405' "/buildid/$ID/debuginfo" -X "$m"
done
expect method-post 405 "/buildid/$ID/debuginfo" -X POST -d x
# A request line of 100 KB, headers of 100 KB: refused, not a crash.
{ printf 'GET /buildid/%s/debuginfo HTTP/1.1\r\nHost: x\r\n\r\n' "$(printf '%0102400d' 0)"; } >line.req
raw line
case $code in 400 | 414 | 431 | reset | closed) ;; *) fail "100 KB request line: $code" ;; esac
echo "  100 KB request line: $code"
{
	printf 'GET /buildid/%s/debuginfo HTTP/1.1\r\nHost: x\r\n' "$ID"
	for i in $(seq 100); do printf 'X-Pad-%d: %01000d\r\n' "$i" 0; done
	printf '\r\n'
} >headers.req
raw headers
case $code in 400 | 413 | 431 | reset | closed) ;; *) fail "100 KB of headers: $code" ;; esac
echo "  100 KB of headers: $code"
tl_case_end

# -------------------------------------------------------------- bodies
tl_case max-body
head -c 10000 /dev/zero | tr '\0' '\n' >big.body
expect body-over 413 /symbolize -X POST -H 'Content-Type: text/plain' --data-binary @big.body
# A Content-Length far over the bound, and no body: refused at once.
printf 'POST /symbolize HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\n' >cl.req
raw cl
[ "$code" = 413 ] || fail "Content-Length 10^12: $code, want 413"
# Chunked, over the bound: nothing says its size until it is read.
{
	printf 'POST /symbolize HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n'
	for i in 1 2 3; do printf '800\r\n%02048d\r\n' 0; done
	printf '0\r\n\r\n'
} >chunked.req
raw chunked
case $code in 413 | reset | closed) ;; *) fail "chunked body over --max-body: $code" ;; esac
tl_case_end

# ----------------------------------------------------------- slowloris
# slow.py PORT N MODE: N connections that each send "GET / HTTP/1.1\r\n"
# and then, in MODE trickle, a header byte every quarter of a second (a
# slowloris: twelve times as often as an idle timeout of 3 s needs); in MODE
# idle, nothing more.  "ready" in slow.MODE.ready once all are connected
# and have sent their first bytes; then until slow.MODE.stop exists (at
# most 30 s), watches for the node closing them.  Prints "open N closed M".
cat >slow.py <<'EOF'
import os, select, socket, sys, time
port, n, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
socks = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(n)]
for s in socks:
    s.sendall(b"GET / HTTP/1.1\r\nX-Slow: ")
    s.setblocking(False)
open("slow.%s.ready" % mode, "w").write("ready\n")
closed = set()
end = time.monotonic() + 30
while time.monotonic() < end and not os.path.exists("slow.%s.stop" % mode):
    live = [s for s in socks if s not in closed]
    r, _, _ = select.select(live, [], [], 0.25)
    for s in r:
        try:
            if not s.recv(4096):
                closed.add(s)
        except OSError:
            closed.add(s)
    if mode == "trickle":
        for s in socks:
            if s not in closed:
                try:
                    s.send(b"x")
                except OSError:
                    closed.add(s)
    if len(closed) == n:
        break
print("open %d closed %d" % (n - len(closed), len(closed)))
EOF
# slow MODE N: slow.py with N connections in the background, ready.
slow() {
	rm -f "slow.$1.ready" "slow.$1.stop"
	python3 slow.py "$PORT" "$2" "$1" >"slow.$1.out" 2>"slow.$1.err" &
	slowpid=$!
	for ((i = 0; i < 200; i++)); do
		[ ! -e "slow.$1.ready" ] || return 0
		kill -0 $slowpid 2>/dev/null || break
		sleep 0.05
	done
	fail "slow.py $1 did not get ready: $(head -3 "slow.$1.err")"
	return 1
}
tl_case slowloris
if slow trickle 20; then
	# 20 of --connections 30 held by clients a byte at a time: a normal
	# request is still answered meanwhile, and they are all closed once
	# they have sent no whole request for --idle-timeout (3 s), though
	# they were never silent.  slow.py watches for 30 s at most.
	expect during-trickle 200 "/buildid/$ID/debuginfo"
	wait $slowpid
	[ "$(cat slow.trickle.out)" = "open 0 closed 20" ] ||
		fail "the trickling clients were not all dropped: $(cat slow.trickle.out) $(head -3 slow.trickle.err)"
fi
if slow idle 30; then
	# 30 that went quiet fill --connections 30: a new connection waits
	# (in the kernel's queue) until they are dropped after --idle-timeout
	# (3 s), and is answered then.  slow.py watches for 30 s at most.
	expect during-idle 200 "/buildid/$ID/debuginfo"
	wait $slowpid
	[ "$(cat slow.idle.out)" = "open 0 closed 30" ] ||
		fail "the idle clients were not all dropped: $(cat slow.idle.out) $(head -3 slow.idle.err)"
fi
tl_case_end

# term_when_asked PID PATH: SIGTERM to PID once the upstream has had a
# request for PATH (at most 20 s).
term_when_asked() {
	local i n

	for ((i = 0; i < 400; i++)); do
		n=$(curl -sf "$UPURL/control/stats?url=$2")
		[ "${n:-0}" -lt 1 ] || break
		sleep 0.05
	done
	[ "${n:-0}" -ge 1 ] || fail "the upstream never saw the node's request for $2"
	kill -TERM "$1"
}

# ------------------------------------------------ SIGTERM mid-download
# A second node, whose upstream download takes 1.5 s: SIGTERM arrives once
# the upstream has the request; the request still completes (200, the
# file), and the node exits 0 afterwards.
tl_case sigterm
curl -sf "$UPURL/control/fault?spec=$FAR:latency=1500,times=1" >/dev/null || fail "fault"
tl_start_serve TPORT term 0 --listen 127.0.0.1 --upstream "$UPURL" --cache "$T/cache-term" ||
	exit 1
term=${pids[-1]}
curl -s --max-time 60 -o term.body -w '%{http_code}' \
	"http://127.0.0.1:$TPORT/buildid/$FAR/debuginfo" >term.code 2>term.curl &
client=$!
term_when_asked "$term" "/buildid/$FAR/debuginfo"
wait $client
[ "$(cat term.code)" = 200 ] || fail "the request in flight at SIGTERM: HTTP $(cat term.code)"
cmp -s term.body far/far || fail "the request in flight at SIGTERM: not the file"
rc=0
wait "$term" || rc=$?
[ "$rc" = 0 ] || fail "the node exited $rc after SIGTERM: $(tail -3 term.err)"
tl_case_end

# ---------------------------------------- SIGTERM past --drain-timeout
# A request a worker answers (a section, which the upstream holds without
# a byte) outlives the node's 1 s drain.  libmicrohttpd aborts when
# stopped with a connection suspended (exit 134, as this node did before):
# the node logs the request left and exits 0 at once, and the client sees
# its connection close.
tl_case sigterm-past-drain
curl -sf "$UPURL/control/fault?spec=$FAR:hang,times=1,artifact=section" >/dev/null || fail "fault"
tl_start_serve DPORT drain 0 --listen 127.0.0.1 --upstream "$UPURL" --cache "$T/cache-drain" \
	--drain-timeout 1 || exit 1
drainer=${pids[-1]}
curl -s --max-time 60 -o /dev/null -w '%{http_code}' \
	"http://127.0.0.1:$DPORT/buildid/$FAR/section/.text" >drain.code 2>drain.curl &
client=$!
term_when_asked "$drainer" "/buildid/$FAR/section/.text"
wait $client
[ "$(cat drain.code)" != 200 ] || fail "the section held upstream was answered 200"
rc=0
wait "$drainer" || rc=$?
[ "$rc" = 0 ] || fail "the node exited $rc after SIGTERM past its drain: $(tail -5 drain.err)"
grep -q 'stopping with 1 requests unfinished' drain.err ||
	fail "the node did not stop past its drain: $(tail -3 drain.err)"
tl_case_end

# ------------------------------------------------- kill -9 mid-download
# A third node, whose upstream stops sending a little past the first 64
# KiB (held in memory until then: transfer.h), is killed with SIGKILL
# once the download's temporary file is in the cache.  Nothing is
# at the entry's name; the temporary file is nobody's (its flock went with
# the node); a node started again over that cache serves the whole file,
# and a clean removes the leftover once it is old enough.
tl_case kill-9
curl -sf "$UPURL/control/fault?spec=$FAR:stall=66000" >/dev/null || fail "fault"
tl_start_serve KPORT kill 0 --listen 127.0.0.1 --upstream "$UPURL" --cache "$T/cache-kill" || exit 1
victim=${pids[-1]}
curl -s --max-time 60 -o /dev/null "http://127.0.0.1:$KPORT/buildid/$FAR/debuginfo" 2>/dev/null &
client=$!
tmpf=
for ((i = 0; i < 400; i++)); do
	tmpf=$(find "$T/cache-kill/$FAR" -name 'debuginfo.??????' 2>/dev/null | head -1)
	[ -z "$tmpf" ] || break
	sleep 0.05
done
if [ -z "$tmpf" ]; then
	fail "no temporary file appeared in the cache"
else
	kill -KILL "$victim"
	wait "$victim" 2>/dev/null
	wait $client
	[ ! -e "$T/cache-kill/$FAR/debuginfo" ] || fail "a file at the entry's name after kill -9"
	flock -n "$tmpf" true || fail "the killed node's temporary file is still locked"
	curl -sf "$UPURL/control/fault?bid=$FAR&kind=clear" >/dev/null || fail "fault"
	tl_start_serve KPORT kill2 0 --listen 127.0.0.1 --upstream "$UPURL" --cache "$T/cache-kill" ||
		exit 1
	others+=("${pids[-1]}")
	URL=http://127.0.0.1:$KPORT get again "/buildid/$FAR/debuginfo"
	[ "$code" = 200 ] && cmp -s again.body far/far ||
		fail "the node started again: HTTP $code, or not the file"
	cmp -s "$T/cache-kill/$FAR/debuginfo" far/far || fail "the cached file is not whole"
	touch -d '-5 minutes' "$tmpf"
	DEBUGINFOD_CACHE_PATH=$T/cache-kill "$DSOSTORE" cache clean >clean.out 2>&1 ||
		fail "cache clean: $(head -3 clean.out)"
	[ ! -e "$tmpf" ] || fail "a clean left the killed download's temporary file"
fi
tl_case_end

# ------------------------------------------------------ bodies held
# POST bodies are held outside --mem-budget: at most 4 x --max-body of
# them at once.  Four clients each holding a body of --max-body 1K (ten
# bytes sent of 1,000) fill it; a fifth body is answered 503 (with
# Retry-After) before it is read, and once they are gone a body is taken.
tl_case bodies-held
tl_start_serve BPORT bodies 0 --listen 127.0.0.1 --max-body 1K --upstream '' || exit 1
bodies=${pids[-1]}
python3 - "$BPORT" >held.out 2>held.err <<'EOF'
import socket, sys, time
port = int(sys.argv[1])
def post(cl, body):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(b"POST /symbolize HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % cl + body)
    return s
held = [post(1000, b"x" * 10) for _ in range(4)]
# The node holds a body's buffer once its first bytes are in: asked
# again until a fifth is refused, for 10 s at most (no sleep decides).
end = time.monotonic() + 10
while True:
    s = post(1000, b"")
    s.settimeout(1)  # (not refused yet: the node waits for the body)
    try:
        r = s.recv(4096).decode(errors="replace")
    except socket.timeout:
        r = ""
    s.close()
    if " 503 " in r.split("\r\n")[0] or time.monotonic() > end:
        break
    time.sleep(0.1)
print(r.split("\r\n")[0], "retry-after" if "\r\nRetry-After: 1" in r else "no retry-after")
for h in held:
    h.close()
end = time.monotonic() + 10
while True:
    s = post(3, b"abc")
    line = s.recv(4096).decode(errors="replace").split("\r\n")[0]
    s.close()
    if " 200 " in line or time.monotonic() > end:
        break
    time.sleep(0.1)
print(line)
EOF
[ "$(sed -n 1p held.out)" = "HTTP/1.1 503 Service Unavailable retry-after" ] ||
	fail "a fifth body while four are held: $(cat held.out held.err | head -3)"
[ "$(sed -n 2p held.out)" = "HTTP/1.1 200 OK" ] ||
	fail "a body after the held ones closed: $(sed -n 2p held.out)"
rc=0
tl_stop "$bodies" 30 || rc=$?
[ "$rc" = 0 ] || fail "the bodies node exited $rc after SIGTERM"
tl_case_end

# ------------------------------------------------------------ still up
tl_case still-up
expect after 200 "/buildid/$ID/debuginfo"
cmp -s after.body served/prog || fail "the last answer is not the file"
kill -0 "$NODE" 2>/dev/null || fail "the node died: $(tail -5 node.err)"
# It, and the node started again over the killed one's cache, stop on
# SIGTERM with status 0 (a sanitizer's leak report would say otherwise).
for p in "$NODE" "${others[@]}"; do
	kill -TERM "$p"
	rc=0
	wait "$p" || rc=$?
	[ "$rc" = 0 ] || fail "node $p exited $rc after SIGTERM: $(tail -3 node.err kill2.err)"
done
for n in node term kill kill2; do
	[ -e "$n.err" ] || continue
	! grep -q -E 'Sanitizer|runtime error' "$n.err" ||
		fail "$n: $(grep -m1 -E 'Sanitizer|runtime error' "$n.err")"
done
tl_case_end

tl_finish serve_hostile
