#!/bin/bash
# SPDX-License-Identifier: MIT
# Replicas of `dsostore serve` behind nginx, as docs/serve.md ("Serving a
# fleet") sets them up: three nodes sharing ONE cache directory, over one
# upstream (dsserver, 50 ms of latency per request), behind an nginx of
# the test's own (its upstream block names the three, proxy_next_upstream
# error timeout http_502 http_503; everything on 127.0.0.1).
#   (a) 300 concurrent requests (curl --parallel) over 50 build IDs: every
#       answer is the served file, byte for byte; nginx spread them (each
#       node's /metrics counts requests); each build ID was downloaded
#       from the upstream once in all (dsserver's log): the client's
#       per-entry flock holds across processes; nothing but whole files
#       in the cache
#   (b) 300 more over 50 other build IDs while one node is killed with
#       SIGKILL: it dies holding a download the upstream never answers
#       (dsserver's hang), with clients waiting on it; nginx moves them
#       to the other nodes (its error log names the dead one), curl
#       --retry backs that up, and every answer is still right; the cache
#       has no partial file: at each entry's name a whole file, and what
#       the killed download left is a temporary file nobody holds, which
#       `dsostore cache clean` removes once it is old enough
#   (c) three nodes with a cache each: the same answers; each build ID
#       downloaded at most once per node
#   (d) one of those sent SIGTERM (a rolling restart) while a request is
#       in flight there: it is answered, and so is a load nginx sends
#       meanwhile; the node exits 0
# Then every other node stops on SIGTERM with status 0.
#
# Expected values: the served files themselves (byte for byte), the build
# IDs we wrote (confirmed by eu-readelf), dsserver's request log, nginx's
# logs.  No step waits on the clock for its verdict: the killed node is
# found and killed while its download is stuck by a fault, not by luck.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
unset DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc eu-readelf curl python3 nginx flock
tl_need_dsserver
tl_sanitizer_exitcodes

NIDS=50
NREQ=300
tl_tmpdir dsreplicas
T=$tmp
cd "$T" || exit 2
export HOME=$T/home DEBUGINFOD_TIMEOUT=60
mkdir -p "$HOME" "$T/served"

# --------------------------------------------------------------- fixtures
# One program linked with a template build ID; each copy has its own 20
# bytes written over the template's (which occur once in the file).  Three
# sets of build IDs: a, b, c (one per part).
cat >prog.c <<'EOF'
#include <stdio.h>
static int cube(int x) { return x * x * x; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", cube(argc)); return 0; }
EOF
TEMPLATE=e71dffff5eed0123456789abcdef0123456789ab
gcc -g -O1 -Wl,--build-id=0x$TEMPLATE -o prog prog.c 2>gcc.err ||
	{ fail "compiling the fixture: $(head -3 gcc.err)"; exit 1; }
declare -A SET
for set in a b c; do
	SET[$set]=
	for i in $(seq 0 $((NIDS - 1))); do
		printf -v hex 'e71d%s%02x5eed0123456789abcdef0123456789ab' "$(printf %x "'$set")" "$i"
		SET[$set]+="$hex "
	done
done
# shellcheck disable=SC2086
tl_buildid_copies prog "$TEMPLATE" "$T/served" ${SET[a]} ${SET[b]} ${SET[c]} ||
	{ fail "fixtures"; exit 1; }
# What we serve has the build IDs we chose (eu-readelf's word).
(cd served && eu-readelf -n -- * 2>/dev/null) | awk '
	/^e71d[0-9a-f]*:$/ { file = substr($0, 1, length($0) - 1) }
	/Build ID:/ && file == $3 { n++ }
	END { print n + 0 }' >served.n
[ "$(cat served.n)" = $((3 * NIDS)) ] ||
	{ fail "fixtures: eu-readelf confirms $(cat served.n) of $((3 * NIDS)) build IDs"; exit 1; }

# ------------------------------------------------------------- upstreams
# up: the shared-cache nodes' (parts a, b); up2: the own-cache nodes' (c),
# so that each part's downloads are counted in a log of its own.
tl_start_dsserver UP up --max-runtime 280 --fault '*:latency=50' "$T/served" || exit 1
tl_start_dsserver UP2 up2 --max-runtime 280 --fault '*:latency=50' "$T/served" || exit 1

# ------------------------------------------------------------------ nodes
# r1..r3 share cache/; o1..o3 have one each.
declare -A PORT PID
for n in r1 r2 r3 o1 o2 o3; do
	case $n in
	r*) cache=$T/cache up=$UP ;;
	*) cache=$T/cache-$n up=$UP2 ;;
	esac
	tl_start_serve "PORT[$n]" "$n" 0 --listen 127.0.0.1 --upstream "http://127.0.0.1:$up" \
		--cache "$cache" --threads 4 || exit 1
	PID[$n]=${pids[-1]}
done

# ------------------------------------------------------------------ nginx
# Our own: -p, -c and every log and temporary path in $T, daemon off (so
# it is our child, stopped by tl_cleanup), listening on 127.0.0.1 only.
# Its ports: a free one as the kernel names it; should another process
# take it before nginx binds it, nginx says so and we try another.
mkdir -p ngx/tmp
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
ngx_conf() { # SHARED-PORT OWN-PORT
	local n

	[ "$(id -u)" != 0 ] || echo "user root;" # workers that can write $T
	cat <<EOF
worker_processes 1;
daemon off;
pid $T/ngx/nginx.pid;
error_log $T/ngx/error.log info;
events { worker_connections 1024; }
http {
	log_format timed '\$request \$status \$request_time [\$upstream_addr] [\$upstream_status] [\$upstream_response_time]';
	access_log $T/ngx/access.log timed;
	client_body_temp_path $T/ngx/tmp/body;
	proxy_temp_path $T/ngx/tmp/proxy;
	fastcgi_temp_path $T/ngx/tmp/fastcgi;
	uwsgi_temp_path $T/ngx/tmp/uwsgi;
	scgi_temp_path $T/ngx/tmp/scgi;
	upstream shared {
		server 127.0.0.1:${PORT[r1]};
		server 127.0.0.1:${PORT[r2]};
		server 127.0.0.1:${PORT[r3]};
		keepalive 16;
	}
	upstream own {
		server 127.0.0.1:${PORT[o1]};
		server 127.0.0.1:${PORT[o2]};
		server 127.0.0.1:${PORT[o3]};
		keepalive 16;
	}
EOF
	for n in shared own; do
		cat <<EOF
	server {
		listen 127.0.0.1:$([ $n = shared ] && echo "$1" || echo "$2");
		location / {
			proxy_pass http://$n;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_next_upstream error timeout http_502 http_503;
		}
	}
EOF
	done
	echo "}"
}
NGX=
for try in 1 2 3 4 5; do
	np1=$(free_port) && np2=$(free_port) || { fail "no free port"; exit 1; }
	[ "$np1" != "$np2" ] || continue
	ngx_conf "$np1" "$np2" >ngx/nginx.conf
	: >ngx/error.log
	nginx -e "$T/ngx/error.log" -p "$T/ngx/" -c "$T/ngx/nginx.conf" >ngx/stdout 2>&1 &
	pids+=($!)
	for ((i = 0; i < 300; i++)); do
		if curl -sf --max-time 5 -o /dev/null "http://127.0.0.1:$np1/" &&
			curl -sf --max-time 5 -o /dev/null "http://127.0.0.1:$np2/"; then
			NGX=${pids[-1]}
			break 2
		fi
		kill -0 "${pids[-1]}" 2>/dev/null || break
		sleep 0.05
	done
	kill "${pids[-1]}" 2>/dev/null
	wait "${pids[-1]}" 2>/dev/null
	grep -q 'Address already in use' ngx/error.log || break
done
if [ -z "$NGX" ]; then
	fail "nginx did not start: $(tail -5 ngx/error.log ngx/stdout)"
	exit 1
fi
SHARED=http://127.0.0.1:$np1
OWN=http://127.0.0.1:$np2

# -------------------------------------------------------------- helpers
# load NAME BASE SET: NREQ requests, 50 at a time, for SET's build IDs in
# turn, each asked NREQ/NIDS times in a row (so that its askers are in
# flight together, at different nodes), debuginfo and executable
# alternately; answers in NAME/<i>, "CODE FILE
# URL" lines in NAME.codes, curl's stderr in NAME.curl.  Retries: any
# failure, thrice, after 1 s (a request nginx could not place anywhere).
load() {
	local name=$1 base=$2 i hex art
	local -a ids

	read -ra ids <<<"${SET[$3]}"
	mkdir -p "$name"
	for ((i = 0; i < NREQ; i++)); do
		hex=${ids[i * NIDS / NREQ]}
		art=debuginfo
		[ $((i % 2)) = 0 ] || art=executable
		echo "url = \"$base/buildid/$hex/$art\""
		echo "output = \"$name/$i.$hex\""
	done >"$name.cfg"
	# --parallel-immediate: else curl holds every transfer to a host until
	# the first one's answer says whether it can multiplex, and (b)'s
	# first request waits for the killed node.
	curl -sS --parallel --parallel-immediate --parallel-max 50 --fail --max-time 120 \
		--retry 3 --retry-all-errors --retry-delay 1 -K "$name.cfg" \
		-w '%{http_code} %{filename_effective} %{url_effective}\n' >"$name.codes" 2>"$name.curl"
}

# check.py answers DIR | cache DIR ID...: what is wrong, a line each.
# answers: every file DIR/<i>.<hex> is served/<hex>, byte for byte.
# cache: at each entry's name (<hex>/debuginfo, /executable, for the IDs
# given) the whole served file (and its hdr- file of headers), else only
# the control files; a temporary file (<entry>.XXXXXX, mode 0600) is "tmp
# PATH", not wrong.
# One process: the files are hundreds.
cat >check.py <<'EOF'
import os, re, stat, sys
served = {}
def want(hexid):
    if hexid not in served:
        served[hexid] = open("served/" + hexid, "rb").read()
    return served[hexid]
def read(path):
    with open(path, "rb") as f:
        return f.read()
mode, top, ids = sys.argv[1], sys.argv[2], set(sys.argv[3:])
if mode == "answers":
    for name in sorted(os.listdir(top)):
        if read(os.path.join(top, name)) != want(name.split(".")[1]):
            print("not the served file:", name)
    sys.exit(0)
control = {"cache_clean_interval_s", "max_unused_age_s", "cache_miss_s"}
for root, dirs, files in os.walk(top):
    for name in dirs + files:
        path = os.path.join(root, name)
        rel = os.path.relpath(path, top)
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode):
            if root != top or name not in ids:
                print("unexpected directory:", rel)
        elif not stat.S_ISREG(st.st_mode):
            print("neither file nor directory:", rel)
        elif root == top:
            if name not in control:
                print("unexpected at the top:", rel)
        elif name in ("debuginfo", "executable"):
            if read(path) != want(os.path.basename(root)):
                print("not the whole served file:", rel, st.st_size, "bytes")
        elif name in ("hdr-debuginfo", "hdr-executable"):
            # the download's headers (elfutils 0.193's layout): lines
            # "X-DEBUGINFOD-<name>: <value>", each ending in LF, then a NUL
            data = read(path)
            if not re.fullmatch(rb"(X-DEBUGINFOD-[A-Za-z-]+: [^\r\n]*\n)+\0", data, re.I):
                print("not a header block:", rel, data[:80])
        elif re.fullmatch(r"(hdr-)?(debuginfo|executable)\.[a-z0-9]{6}", name):
            if stat.S_IMODE(st.st_mode) != 0o600:
                print("temporary file of mode %o: %s" % (stat.S_IMODE(st.st_mode), rel))
            print("tmp", path)
        else:
            print("unexpected in an entry:", rel)
EOF

# check_answers NAME: every answer 200 and the served file.
check_answers() {
	local name=$1 n

	n=$(awk '$1 == 200' "$name.codes" | wc -l)
	[ "$n" = "$NREQ" ] ||
		fail "$name: $n answers of $NREQ were 200: $(awk '$1 != 200' "$name.codes" | head -3)" \
			"$(head -3 "$name.curl")"
	n=$(find "$name" -type f | wc -l)
	[ "$n" = "$NREQ" ] || fail "$name: $n answer files of $NREQ"
	python3 check.py answers "$name" >"$name.wrong" || fail "$name: check.py failed"
	[ ! -s "$name.wrong" ] || fail "$name: $(wc -l <"$name.wrong") answers wrong: $(head -3 "$name.wrong")"
}

# requests NODE: the requests a node counted (every http_requests_total).
requests() {
	tl_metrics "${PORT[$1]}" | awk '$1 ~ /^http_requests_total([{]|$)/ {n += $2} END {print n + 0}'
}

# in_flight NODE...: the node of those with a request in flight (its
# dsostore_inflight_requests gauge, which does not count /metrics),
# polled for 15 s at most; nothing if none.  Call quiet first.
in_flight() {
	local i n

	for ((i = 0; i < 300; i++)); do
		for n; do
			if [ "$(tl_metric "${PORT[$n]}" dsostore_inflight_requests)" -gt 0 ]; then
				echo "$n"
				return
			fi
		done
		sleep 0.05
	done
}

# quiet NODE...: waits (15 s at most) until none of the nodes has a
# request in flight: a request a client has had its answer to may still
# be finishing in the node a moment longer, and in_flight must not take
# it for the one it looks for.
quiet() {
	local i n busy

	for ((i = 0; i < 300; i++)); do
		busy=
		for n; do
			[ "$(tl_metric "${PORT[$n]}" dsostore_inflight_requests)" = 0 ] || busy=$n
		done
		[ -n "$busy" ] || return 0
		sleep 0.05
	done
	fail "node $busy still has requests in flight"
}

# hold NAME UPSTREAM SPEC URL NODE...: with the nodes quiet, adds the
# fault SPEC at the upstream on port UPSTREAM, GETs URL in the background
# (answer in NAME.out, status in NAME.code, curl's stderr in NAME.curl,
# pid in $held_pid), and sets $held to the node that has it in flight
# (failing, with $held empty, if none has).
hold() {
	local name=$1 up=$2 spec=$3 url=$4

	shift 4
	quiet "$@"
	curl -sf --max-time 10 "http://127.0.0.1:$up/control/fault?spec=$spec" >/dev/null ||
		fail "cannot add the fault $spec"
	curl -sS --fail --max-time 120 -o "$name.out" -w '%{http_code}\n' "$url" \
		>"$name.code" 2>"$name.curl" &
	held_pid=$!
	held=$(in_flight "$@")
	[ -n "$held" ] || fail "no node has the $name request in flight"
}

# answered NAME PID FILE: hold's request NAME (PID) ended with a 200 and
# FILE's bytes.
answered() {
	wait "$2" || fail "the $1 request failed: $(head -3 "$1.curl")"
	[ "$(cat "$1.code")" = 200 ] || fail "the $1 request: HTTP $(cat "$1.code")"
	cmp -s "$1.out" "$3" || fail "the $1 request's answer is not the served file"
}

# downloads LOG SET: "N URL" for each URL of SET's build IDs that the
# upstream answered whole (a 200, "ok"), N its count, after the upstream
# is idle (so that its log is complete).
downloads() {
	curl -sf --max-time 10 "http://127.0.0.1:$(cat "$1.port")/control/idle" >/dev/null ||
		fail "upstream $1 did not get idle"
	awk -v ids="${SET[$2]}" 'BEGIN { split(ids, a, " "); for (i in a) want[a[i]] = 1 }
		{ split($3, p, "/") }
		p[2] == "buildid" && (p[3] in want) && $4 == 200 && $7 == "ok" { n[$3]++ }
		END { for (u in n) print n[u], u }' "$1.log" | sort -k2
}

# cache_check NAME DIR SETS: check.py's cache check of DIR for the build
# IDs of SETS (e.g. "a b"); the temporary files it lists go to
# NAME.tmpfiles, a path a line.  A node answers a small download from
# memory before its commit (write, fsync, rename), so a client may be done
# while a node still writes: the check is taken once the temporary files
# are the same two looks in a row, none of them locked (a live node's),
# for at most 10 s.
cache_check() {
	local name=$1 dir=$2 set more ids=() prev=- i f busy

	for set in $3; do
		read -ra more <<<"${SET[$set]}"
		ids+=("${more[@]}")
	done
	for ((i = 0; i < 100; i++)); do
		python3 check.py cache "$dir" "${ids[@]}" >"$name.check" || fail "$name: check.py failed"
		sed -n 's/^tmp //p' "$name.check" >"$name.tmpfiles"
		busy=''
		while read -r f; do
			[ ! -e "$f" ] || flock -n "$f" true || busy=1
		done <"$name.tmpfiles"
		[ -n "$busy" ] || [ "$(cat "$name.tmpfiles")" != "$prev" ] || break
		prev=$(cat "$name.tmpfiles")
		sleep 0.1
	done
	if grep -qv '^tmp ' "$name.check"; then
		fail "$name: $(grep -v '^tmp ' "$name.check" | head -3)"
	fi
}

# ------------------------------------------------------- (a) shared cache
tl_case shared-cache
load a "$SHARED" a
check_answers a
for n in r1 r2 r3; do
	c=$(requests $n)
	[ "$c" -gt 0 ] || fail "node $n counted no request: nginx did not spread them"
	echo "  $n: $c requests"
done
downloads up a >a.downloads
for hex in ${SET[a]}; do
	for art in debuginfo executable; do
		echo "1 /buildid/$hex/$art"
	done
done | sort -k2 >a.want
cmp -s a.downloads a.want ||
	fail "not one download per file across the nodes: $(diff a.want a.downloads | grep '^[<>]' | head -5)"
cache_check a "$T/cache" a
[ ! -s a.tmpfiles ] || fail "temporary files left without any node killed: $(head -3 a.tmpfiles)"
tl_case_end

# ------------------------------------------------- (b) one node killed
# A request nobody else makes (b's first build ID's executable) goes
# through nginx to one node, whose download the upstream then never
# answers (hang, once); that node is the one in flight.  The load adds
# askers of that file: those nginx sends to the same node wait on its
# download, those it sends to the others on the entry's flock; none can
# finish before the node dies, so it dies mid-run.
tl_case kill-9
read -ra bids <<<"${SET[b]}"
STUCK=${bids[0]}
hold stuck "$UP" "$STUCK:hang,times=1,artifact=executable" "$SHARED/buildid/$STUCK/executable" \
	r1 r2 r3
victim=$held stuck=$held_pid
if [ -n "$victim" ]; then
	before=$(curl -sf "http://127.0.0.1:$UP/control/stats" | awk '$1 == "requests" {print $2}')
	load b "$SHARED" b &
	loader=$!
	# The load is under way: the upstream has seen 10 of its requests.
	for ((i = 0; i < 600; i++)); do
		now=$(curl -sf "http://127.0.0.1:$UP/control/stats" | awk '$1 == "requests" {print $2}')
		[ "${now:-0}" -lt $((before + 10)) ] || break
		sleep 0.05
	done
	kill -KILL "${PID[$victim]}"
	wait "${PID[$victim]}" 2>/dev/null
	echo "  killed $victim (port ${PORT[$victim]}) with $((now - before)) of the load's requests upstream"
	wait "$loader"
	answered stuck "$stuck" "served/$STUCK"
	check_answers b
	# nginx saw the dead node fail and went on to another.
	grep -q "upstream: \"http://127.0.0.1:${PORT[$victim]}/" ngx/error.log ||
		fail "nginx's error log names no failure of the killed node"
	retries=$(grep -c 'Will retry' b.curl)
	echo "  curl retried $retries request(s) that nginx could not place"
	# The stuck file: the hung download (aborted), then one that served it.
	downloads up b >b.downloads
	stuck_dl=$(awk -v u="/buildid/$STUCK/executable" '$3 == u {print $4, $7}' up.log | sort | uniq -c |
		awk '{print $1, $2, $3}' | paste -sd,)
	[ "$stuck_dl" = "1 0 aborted,1 200 ok" ] ||
		fail "the upstream's requests for the stuck file: $stuck_dl (want: one hung, one served)"
	cache_check b "$T/cache" "a b"
	# What the killed node was writing, if anything, is nobody's now (its
	# flock went with it), and a clean removes it once old enough.
	if [ -s b.tmpfiles ]; then
		echo "  the killed node left $(wc -l <b.tmpfiles) temporary file(s)"
		while read -r f; do
			flock -n "$f" true || fail "a temporary file is still locked: $f"
			touch -d '-5 minutes' "$f"
		done <b.tmpfiles
	fi
	DEBUGINFOD_CACHE_PATH=$T/cache "$DSOSTORE" cache clean >clean.out 2>&1 ||
		fail "cache clean: $(head -3 clean.out)"
	cache_check b-clean "$T/cache" "a b"
	[ ! -s b-clean.tmpfiles ] || fail "left after a clean: $(head -3 b-clean.tmpfiles)"
fi
tl_case_end

# ------------------------------------------------------ (c) own caches
tl_case own-caches
load c "$OWN" c
check_answers c
for n in o1 o2 o3; do
	[ "$(requests $n)" -gt 0 ] || fail "node $n counted no request: nginx did not spread them"
	cache_check "c-$n" "$T/cache-$n" c
	[ ! -s "c-$n.tmpfiles" ] || fail "temporary files left in $n's cache: $(head -3 "c-$n.tmpfiles")"
done
# Each node downloads a file once at most: 1 to 3 downloads of each.
downloads up2 c >c.downloads
n=$(awk '$1 >= 1 && $1 <= 3' c.downloads | wc -l)
[ "$n" = $((2 * NIDS)) ] ||
	fail "downloads per file not within 1..3 for all $((2 * NIDS)): $(awk '$1 > 3' c.downloads | head -3)"
tl_case_end

# ------------------------------------------------------ (d) one drained
# SIGTERM to the node with a request in flight (a download the upstream
# delays 2 s), as a rolling restart does: that request is still
# answered; the load nginx sends meanwhile is answered too, by the other
# two (a draining node refuses new connections, and nginx moves on); then
# the node exits 0.
tl_case drain
SLOW=${bids[1]}
hold slow "$UP2" "$SLOW:latency=2000,times=1" "$OWN/buildid/$SLOW/debuginfo" o1 o2 o3
drained=$held slow=$held_pid
if [ -n "$drained" ]; then
	kill -TERM "${PID[$drained]}"
	for ((i = 0; i < 200; i++)); do
		! grep -q 'SIGTERM: finishing' "$drained.err" || break
		sleep 0.05
	done
	load d "$OWN" c
	check_answers d
	answered slow "$slow" "served/$SLOW"
	rc=0
	wait "${PID[$drained]}" || rc=$?
	[ "$rc" = 0 ] || fail "the drained node $drained exited $rc: $(tail -3 "$drained.err")"
	echo "  drained $drained (port ${PORT[$drained]})"
fi
tl_case_end

# The nodes neither killed nor drained are alive, stop on SIGTERM with
# status 0, and wrote no sanitizer report (a leak is reported at exit).
for n in r1 r2 r3 o1 o2 o3; do
	[ "$n" = "$victim" ] || [ "$n" = "$drained" ] && continue
	kill -0 "${PID[$n]}" 2>/dev/null || fail "node $n died: $(tail -3 "$n.err")"
	kill -TERM "${PID[$n]}"
	rc=0
	wait "${PID[$n]}" || rc=$?
	[ "$rc" = 0 ] || fail "node $n exited $rc after SIGTERM: $(tail -3 "$n.err")"
	! grep -q -E 'Sanitizer|runtime error' "$n.err" ||
		fail "node $n: $(grep -m1 -E 'Sanitizer|runtime error' "$n.err")"
done

tl_finish serve_replicas
