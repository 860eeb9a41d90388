#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dsostore serve` in a federation: (1) over a real elfutils debuginfod,
# (2) under one (the debuginfod's upstream is the node), (3) in a loop of
# two nodes (Via or the X-Forwarded-For hop limit ends it), (4) over poisoned
# upstreams (dsserver's wrongfile, short, pad: never relayed nor cached),
# (5) 1,000 concurrent requests for 100 build IDs (one download each),
# (6) a client gone mid-wait (the download goes on for the others).
# Expected bytes are the served files; request counts are the upstreams'
# own (debuginfod's /metrics, dsserver's /control/stats); nothing checks
# how long anything took, and every wait polls with a deadline.
#
# Debian's debuginfod 0.188 listens on every address and refuses -p 0, and
# the loop's two nodes must know each other's port before either starts,
# so this script re-runs itself in a network namespace with only loopback
# up, where fixed ports are free; without one, (1)-(3) are skipped.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
tl_sanitizer_exitcodes
export PATH=$PATH:/usr/sbin:/sbin

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc objcopy objdump eu-readelf curl cmp dd sha256sum
tl_need_dsserver
in_ns=0
tl_netns_reexec "$0" "$@" && in_ns=1
tl_tmpdir dsfed
tl_client_env 30

# ---- the files: one program, cloned under many build IDs (its 20 bytes
# patched in each copy, as tests/server/README.md's recipe says).
cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
__attribute__((noinline)) static int step(int x) { return 3 * x + 1; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", step(argc)); return 0; }
EOF
gcc -g -O1 -o "$tmp/base" "$tmp/prog.c" 2>"$tmp/gcc.err" || {
	echo "FAIL: cannot compile: $(cat "$tmp/gcc.err")" >&2
	exit 1
}
note_off=$(objdump -h "$tmp/base" | awk '$2 == ".note.gnu.build-id" {print $6}')
[ -n "$note_off" ] || {
	echo "FAIL: objdump finds no .note.gnu.build-id" >&2
	exit 1
}
# clone HEX FILE: the program with build ID HEX (the note's descriptor
# follows its 12-byte header and "GNU\0").
clone() {
	local k esc=

	for ((k = 0; k < ${#1}; k += 2)); do
		esc+="\\x${1:k:2}"
	done
	mkdir -p "${2%/*}"
	cp "$tmp/base" "$2"
	printf "$esc" | dd of="$2" bs=1 seek=$((0x$note_off + 16)) conv=notrunc status=none
}
id() { printf '%s%036x' "$1" "$2"; } # id PREFIX(4 hex) N: a build ID
# split_debug FILE: FILE keeps the code, FILE.debug the debuginfo.
split_debug() { tl_split_debuginfo "$1" || fail "cannot split $1"; }

F1=$(id f001 1) F2=$(id f002 2) # (1) and (2)
clone "$F1" "$tmp/up1/fed1"
[ "$(tl_build_id "$tmp/up1/fed1")" = "$F1" ] || fail "eu-readelf does not read $F1 in its clone"
split_debug "$tmp/up1/fed1"
clone "$F2" "$tmp/own/fed2"
split_debug "$tmp/own/fed2"
P_WRONG=$(id bad0 1) P_SHORT=$(id bad0 2) P_PAD=$(id bad0 3) G=$(id 600d 1) # (4)
for h in "$P_WRONG" "$P_SHORT" "$P_PAD" "$G"; do clone "$h" "$tmp/poison/$h"; done
many=() # (5)
for ((i = 0; i < 100; i++)); do
	many+=("$(id 3a11 "$i")")
	clone "${many[-1]}" "$tmp/many/${many[-1]}"
done
D=$(id d15c 1) # (6)
clone "$D" "$tmp/many/$D"
mkdir -p "$tmp/empty"
[ "$fails" -eq 0 ] || exit 1
UNKNOWN=$(id 0000 99)

# requests PORT TYPE: the http_requests_total of that type there.
requests() { tl_metric "$1" "http_requests_total{type=\"$2\"}"; }
# dsstat PORT QUERY: a dsserver's /control/stats?QUERY answer.
dsstat() { curl -s --max-time 10 "http://127.0.0.1:$1/control/stats?$2"; }
# get PORT HEX OUT: curl's status for the node's debuginfo of HEX into OUT.
get() { curl -s --max-time 120 -o "$3" -w '%{http_code}' "http://127.0.0.1:$1/buildid/$2/debuginfo"; }
# no_files WHAT DIR: DIR holds no file (a cache entry that must be empty).
no_files() {
	local left
	left=$(find "$2" -type f 2>/dev/null)
	[ -z "$left" ] || fail "$1: left in the node's cache: $left"
}
nodes=() # pid:name of every node, for the exit checks
node() { # VAR NAME PORT ARGS...: tl_start_serve, remembered in nodes
	tl_start_serve "$@" || exit 1
	nodes+=("${pids[-1]}:$2")
}

# ---- (1) the node over a real debuginfod: debuginfod-find through the
# node gets the file, which the node caches; asked again (another client
# cache), the node answers from its cache: debuginfod saw one request.
if [ $in_ns = 1 ] && command -v debuginfod >/dev/null && command -v debuginfod-find >/dev/null; then
	tl_case "over a real debuginfod"
	tl_start_debuginfod 8002 "$tmp/up1" || exit 1
	node n1 node1 0 --upstream http://127.0.0.1:8002 --cache "$tmp/n1-cache"
	for round in 1 2; do
		for art in debuginfo executable; do
			[ $art = debuginfo ] && want=$tmp/up1/fed1.debug || want=$tmp/up1/fed1
			if got=$(DEBUGINFOD_URLS=http://127.0.0.1:$n1 DEBUGINFOD_CACHE_PATH=$tmp/c1-$round \
				debuginfod-find $art "$F1" 2>"$tmp/eu.err"); then
				cmp -s "$want" "$got" || fail "round $round: $art $got is not $want"
			else
				fail "round $round: debuginfod-find $art: $(cat "$tmp/eu.err")"
			fi
			tl_cached "$want" "$tmp/n1-cache/$F1/$art" ||
				fail "round $round: the node has not cached the $art"
		done
	done
	for art in debuginfo executable; do
		n=$(requests 8002 $art)
		[ "$n" = 1 ] || fail "debuginfod got $n $art requests for two rounds, expected 1"
		# debuginfod logs each request's User-Agent and X-Forwarded-For:
		# debuginfod-find's, and the address of the node's client.
		grep -q -E " UA:elfutils/[^ ]+ XFF:127\.0\.0\.1 GET /buildid/$F1/$art 200 " \
			"$tmp/server-8002.log" ||
			fail "debuginfod's log has no $art request with debuginfod-find's User-Agent and" \
				"X-Forwarded-For: 127.0.0.1: $(grep -m1 "$F1/$art" "$tmp/server-8002.log")"
	done
	tl_case_end

	# ---- (2) a real debuginfod with no files of its own, whose upstream
	# is the node: debuginfod-find through it gets the node's file.
	tl_case "under a real debuginfod"
	node n2 node2 0 -F "$tmp/own" --upstream "" --cache "$tmp/n2-cache"
	tl_start_debuginfod 8003 "$tmp/empty" "http://127.0.0.1:$n2" || exit 1
	for art in debuginfo executable; do
		[ $art = debuginfo ] && want=$tmp/own/fed2.debug || want=$tmp/own/fed2
		if got=$(DEBUGINFOD_URLS=http://127.0.0.1:8003 DEBUGINFOD_CACHE_PATH=$tmp/c2 \
			debuginfod-find $art "$F2" 2>"$tmp/eu.err"); then
			cmp -s "$want" "$got" || fail "$art: $got is not $want"
		else
			fail "debuginfod-find $art through debuginfod: $(cat "$tmp/eu.err")"
		fi
		n=$(requests "$n2" $art)
		[ "$n" = 1 ] || fail "the node got $n $art requests from debuginfod, expected 1"
	done
	tl_case_end
else
	echo "skip over/under a real debuginfod (no network namespace, or no debuginfod)"
fi

# ---- (3) a loop: A's upstream is B, B's is A.  Each hop adds an entry to
# X-Forwarded-For; a request that arrives with forwarded-ttl-limit (8) of
# them is answered 404 and not forwarded, as debuginfod does.  A node also
# adds itself to Via, and a request whose Via names it is a loop: 404 at
# once (else the request coming back would join the download it waits
# for, and the loop would wait for a timeout).
if [ $in_ns = 1 ]; then
	node pa loopA 8004 --upstream http://127.0.0.1:8005 --cache "$tmp/ca"
	node pb loopB 8005 --upstream http://127.0.0.1:8004 --cache "$tmp/cb"
	# First the hop limit, with requests that say they have come a long
	# way: 8 hops, not sent on; 7, sent on to B, where they make 8.  (Build
	# IDs of their own: a miss is remembered.)
	tl_case "the hop limit"
	for hops in 8 7; do
		xff=$(printf '10.0.0.%d, ' $(seq "$hops"))
		na=$(requests 8004 debuginfo) nb=$(requests 8005 debuginfo)
		code=$(curl -s --max-time 120 -o "$tmp/body" -w '%{http_code}' -H "X-Forwarded-For: ${xff%, }" \
			"http://127.0.0.1:8004/buildid/$(id 0000 $hops)/debuginfo")
		[ "$code" = 404 ] || fail "$hops hops: $code, expected 404"
		na=$(($(requests 8004 debuginfo) - na)) nb=$(($(requests 8005 debuginfo) - nb))
		[ "$na" = 1 ] && [ "$nb" = $((8 - hops)) ] ||
			fail "$hops hops: A got $na requests and B $nb, expected 1 and $((8 - hops))"
	done
	tl_case_end

	# Then the loop: the client's request to A, A's to B, B's back to A,
	# which finds itself in Via.  (Without Via, the hop limit would end
	# it at 5 and 4.)
	tl_case "a loop ends"
	na=$(requests 8004 debuginfo) nb=$(requests 8005 debuginfo)
	code=$(get 8004 "$UNKNOWN" "$tmp/body")
	[ "$code" = 404 ] || fail "a miss in a loop: $code, expected 404 (000: no answer in 120 s)"
	na=$(($(requests 8004 debuginfo) - na)) nb=$(($(requests 8005 debuginfo) - nb))
	[ "$na" = 2 ] && [ "$nb" = 1 ] || fail "A got $na requests and B $nb, expected 2 and 1"
	grep -q "/buildid/$UNKNOWN/debuginfo: a loop (Via: " "$tmp/loopA.err" ||
		fail "A's log does not say it saw the loop"
	tl_case_end
else
	echo "skip the hop limit and a loop (no network namespace)"
fi

# ---- (4) poisoned upstream: another file, the file's first half, the
# file and 1 MiB of zeros (past the slack a download may have beyond its
# ELF).  A node over it alone answers 404 or 503, caches nothing, and
# counts a rejection; a node that also has a good upstream gets the file.
tl_case "poisoned upstream"
tl_start_dsserver bad bad -f "$P_WRONG:wrongfile=$G" -f "$P_SHORT:short" -f "$P_PAD:pad=1048576" \
	"$tmp/poison" || exit 1
tl_start_dsserver good good "$tmp/poison" || exit 1
node nb poisoned 0 --upstream "http://127.0.0.1:$bad" --cache "$tmp/nb-cache"
node ng mixed 0 --upstream "http://127.0.0.1:$bad http://127.0.0.1:$good" --cache "$tmp/ng-cache"
declare -A fault=([$P_WRONG]=wrongfile [$P_SHORT]=short [$P_PAD]=pad)
for h in "$P_WRONG" "$P_SHORT" "$P_PAD"; do
	what=${fault[$h]}
	rej=$(tl_metric "$nb" dsostore_upstream_rejected_total)
	asked=$(dsstat "$bad" "url=/buildid/$h/debuginfo")
	code=$(get "$nb" "$h" "$tmp/body")
	case $code in
	404 | 503) ;;
	*) fail "$what: the node answered $code, expected 404 or 503" ;;
	esac
	! cmp -s "$tmp/body" "$tmp/poison/$h" || fail "$what: the node relayed the file"
	[ "$(dsstat "$bad" "url=/buildid/$h/debuginfo")" -gt "$asked" ] ||
		fail "$what: the node did not ask the upstream"
	[ "$(tl_metric "$nb" dsostore_upstream_rejected_total)" -gt "$rej" ] ||
		fail "$what: dsostore_upstream_rejected_total did not move"
	no_files "$what" "$tmp/nb-cache/$h"
	code=$(get "$ng" "$h" "$tmp/body")
	[ "$code" = 200 ] && cmp -s "$tmp/body" "$tmp/poison/$h" ||
		fail "$what, with a good upstream too: $code, or not the file"
	tl_cached "$tmp/poison/$h" "$tmp/ng-cache/$h/debuginfo" ||
		fail "$what, with a good upstream too: the node has not cached the good file"
done
tl_case_end

# ---- (5) 1,000 concurrent requests (200 at a time) for 100 build IDs
# nobody has yet, the upstream answering each after 50 ms: one upstream
# request per build ID, every client the right bytes.
tl_case "1000 concurrent requests"
tl_start_dsserver up many -f '*:latency=50' -f "$D:latency=10000" "$tmp/many" || exit 1
node nm node-many 0 --upstream "http://127.0.0.1:$up" --cache "$tmp/nm-cache"
mkdir -p "$tmp/out5"
for ((i = 0; i < 1000; i++)); do
	printf 'url = "http://127.0.0.1:%s/buildid/%s/debuginfo"\noutput = "%s/out5/%d"\n' \
		"$nm" "${many[i % 100]}" "$tmp" $i
done >"$tmp/many.curl"
curl -s --parallel --parallel-immediate --parallel-max 200 --max-time 120 -K "$tmp/many.curl" \
	-w '%{http_code}\n' >"$tmp/many.codes" 2>"$tmp/many.err"
n=$(grep -c '^200$' "$tmp/many.codes")
[ "$n" = 1000 ] || fail "$n of 1000 requests answered 200: $(sort "$tmp/many.codes" | uniq -c | tr '\n' ' ')"
# The bytes of answer i are those of file i % 100: by their SHA-256 (two
# processes, where 1,000 cmp would take long on a loaded machine).
(cd "$tmp/many" && sha256sum "${many[@]}") >"$tmp/want.sums"
(cd "$tmp/out5" && sha256sum -- *) >"$tmp/got.sums"
n=$(awk 'NR == FNR {want[NR - 1] = $1; next} $1 == want[$2 % 100] {ok++} END {print ok + 0}' \
	"$tmp/want.sums" "$tmp/got.sums")
[ "$n" = 1000 ] || fail "$n of 1000 answers are the file asked for"
n=$(dsstat "$up" "prefix=/buildid/")
[ "$n" = 100 ] || fail "the upstream got $n requests for 100 build IDs"
dsstat "$up" "" | awk '$1 == "url" && $2 != 1 {print "  " $0}' >"$tmp/dups"
[ ! -s "$tmp/dups" ] || fail "build IDs asked of the upstream more than once: $(head -3 "$tmp/dups")"
# (verified_total counts files in the cache: a small one is answered from
# memory before its commit, so the last few may land after the answers)
for m in dsostore_upstream_requests_total dsostore_upstream_verified_total; do
	for ((i = 0; i < 100; i++)); do
		n=$(tl_metric "$nm" $m)
		[ "$n" != 100 ] || break
		sleep 0.1
	done
	[ "$n" = 100 ] || fail "the node's $m is $n, expected 100"
done
tl_case_end

# ---- (6) a client gone while the node waits for the upstream (10 s for
# this build ID): killed once the upstream has the request, so that it
# surely left mid-wait.  Five clients after it get the file, the upstream
# was asked once, and no request is left in flight.
tl_case "a client gone mid-wait"
curl -s -o /dev/null "http://127.0.0.1:$nm/buildid/$D/debuginfo" &
gone=$!
for ((i = 0; i < 300; i++)); do
	[ "$(dsstat "$up" "url=/buildid/$D/debuginfo")" = 0 ] || break
	sleep 0.1
done
[ "$(dsstat "$up" "url=/buildid/$D/debuginfo")" = 1 ] || fail "the upstream never got the request"
kill "$gone" 2>/dev/null || fail "curl ended before the upstream answered"
wait "$gone" 2>/dev/null
for ((i = 0; i < 5; i++)); do
	printf 'url = "http://127.0.0.1:%s/buildid/%s/debuginfo"\noutput = "%s/out6.%d"\n' "$nm" "$D" "$tmp" $i
done >"$tmp/after.curl"
curl -s --parallel --parallel-immediate --max-time 120 -K "$tmp/after.curl" -w '%{http_code}\n' \
	>"$tmp/after.codes" 2>"$tmp/after.err"
[ "$(grep -c '^200$' "$tmp/after.codes")" = 5 ] || fail "after the client left: $(tr '\n' ' ' <"$tmp/after.codes")"
for ((i = 0; i < 5; i++)); do
	cmp -s "$tmp/out6.$i" "$tmp/many/$D" || fail "after the client left: answer $i is not the file"
done
n=$(dsstat "$up" "url=/buildid/$D/debuginfo")
[ "$n" = 1 ] || fail "the upstream was asked $n times"
for ((i = 0; i < 300; i++)); do
	n=$(tl_metric "$nm" dsostore_inflight_requests)
	[ "$n" != 0 ] || break
	sleep 0.1
done
[ "$n" = 0 ] || fail "dsostore_inflight_requests stays $n"
tl_case_end

# ---- every node exits 0 on SIGTERM, with nothing for a sanitizer to say.
tl_case "nodes exit"
for n in "${nodes[@]}"; do
	rc=0
	tl_stop "${n%%:*}" 60 || rc=$?
	[ "$rc" = 0 ] || fail "node ${n#*:} exited $rc on SIGTERM"
	if grep -q -E 'Sanitizer|runtime error' "$tmp/${n#*:}.err"; then
		fail "node ${n#*:}: $(grep -m3 -E 'Sanitizer|runtime error' "$tmp/${n#*:}.err")"
	fi
done
tl_case_end

tl_finish serve_federation.sh "all checks passed"
