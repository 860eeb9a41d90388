#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Metadata queries (GET /metadata?key=file|glob&value=...) against the real
# elfutils 0.192: its debuginfod indexes a directory (-F) and is the oracle.
#   client: `dsostore metadata file|glob V` finds the same (type, build ID,
#     file, archive) set as `debuginfod-find-0.192 metadata` from the same
#     server; a name that needs escaping; an unknown key is an error.
#   merged: two servers at once (their union, a result both give once;
#     a dead server makes "complete" false, the live one's results stay).
#   serve: `dsostore serve -F` over the same directory answers /metadata
#     with the same set as debuginfod 0.192 does; federated, its own
#     files plus its upstream's, only its own (incomplete) past the
#     X-Forwarded-For hop limit; bad requests are 400s.
# Build IDs are also checked from first principles (eu-readelf of each
# file).  debuginfod listens on every address: the script re-runs itself
# in a network namespace (tl_netns_reexec), and skips without one.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
tl_sanitizer_exitcodes
export PATH=$PATH:/usr/sbin:/sbin

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
find=$(tl_peer debuginfod-find-0.192) || exit $?
server=$(tl_peer debuginfod-0.192) || exit $?
tl_need gcc objcopy eu-readelf curl jq unshare ip
tl_netns_reexec --skip "no network namespace for debuginfod 0.192 (it listens on every address)" \
	"$0" "$@"
tl_tmpdir dsmeta
tl_client_env 30
export TL_DEBUGINFOD=$server

# ---- the files: a program (its executable and its separate debuginfo),
# one with both in one file, another program in a subdirectory, a name
# that needs escaping in a URL, and a file that is not ELF.
mkdir -p "$tmp/srv/sub" "$tmp/srv2"
D=$(cd "$tmp/srv" && pwd -P)
D2=$(cd "$tmp/srv2" && pwd -P)
P=${D%/*} # both directories' parent
cat >"$tmp/a.c" <<'EOF'
int main(void) { return 0; }
EOF
cat >"$tmp/b.c" <<'EOF'
#include <stdio.h>
int main(void) { puts("b"); return 1; }
EOF
gcc -g -o "$D/p" "$tmp/a.c" && objcopy --only-keep-debug "$D/p" "$D/p.debug" &&
	objcopy --strip-debug "$D/p" && gcc -g -o "$D/full" "$tmp/b.c" &&
	gcc -g -O1 -o "$D/sub/q" "$tmp/b.c" && cp "$D/sub/q" "$D/sp ace&x=y" &&
	gcc -g -O2 -o "$D2/r" "$tmp/a.c" || {
	echo "FAIL: cannot build the programs" >&2
	exit 1
}
echo "not ELF" >"$D/notes.txt"
bid_p=$(tl_build_id "$D/p")
bid_full=$(tl_build_id "$D/full")
bid_q=$(tl_build_id "$D/sub/q")
bid_r=$(tl_build_id "$D2/r")
[ "$bid_p" = "$(tl_build_id "$D/p.debug")" ] || {
	echo "FAIL: objcopy --only-keep-debug changed the build ID" >&2
	exit 1
}

# norm FILE: the results as sorted "type buildid file archive" lines, then
# "complete BOOL": what two answers must share (fields' order, spacing and
# the results' order are each server's own).
norm() {
	jq -r '(.results | map([.type, .buildid, .file, (.archive // "-")] | join(" ")) | sort[]),
		"complete \(.complete)"' "$1"
}
ncache=0
# oracle OUT KEY VALUE URLS: debuginfod-find-0.192's answer (a fresh cache
# each time: it keeps answers for an hour, metadata_retention_s).
oracle() {
	ncache=$((ncache + 1))
	env DEBUGINFOD_URLS="$4" DEBUGINFOD_CACHE_PATH="$tmp/fcache$ncache" \
		"$find" metadata "$2" "$3" >"$1" 2>"$tmp/find.err" ||
		fail "debuginfod-find-0.192 metadata $2 $3: $(cat "$tmp/find.err")"
}
# ours OUT KEY VALUE URLS: dsostore's (status in $rc).
ours() {
	rc=0
	env DEBUGINFOD_URLS="$4" DEBUGINFOD_CACHE_PATH="$tmp/dcache" \
		"$DSOSTORE" metadata "$2" "$3" >"$1" 2>"$tmp/ours.err" || rc=$?
}
# same KEY VALUE URLS: both clients, the same set.
same() {
	oracle "$tmp/o.json" "$@"
	ours "$tmp/d.json" "$@"
	[ $rc = 0 ] || fail "dsostore metadata $1 $2: status $rc: $(cat "$tmp/ours.err")"
	norm "$tmp/o.json" >"$tmp/o.txt" && norm "$tmp/d.json" >"$tmp/d.txt" ||
		fail "metadata $1 $2: an answer is not JSON: $(head -c 300 "$tmp/d.json")"
	diff "$tmp/o.txt" "$tmp/d.txt" >"$tmp/diff" ||
		fail "metadata $1 $2: dsostore's results differ from debuginfod-find 0.192's: $(cat "$tmp/diff")"
}

A=http://127.0.0.1:8002
tl_start_debuginfod 8002 "$D" || exit 1

tl_case client_file
same file "$D/p" "$A"
# First principles: p is one executable, of its own build ID.
[ "$(cat "$tmp/d.txt")" = "executable $bid_p $D/p -
complete true" ] || fail "metadata file p: $(cat "$tmp/d.txt")"
same file "$D/p.debug" "$A"
grep -qx "debuginfo $bid_p $D/p.debug -" "$tmp/d.txt" || fail "metadata file p.debug: $(cat "$tmp/d.txt")"
same file "$D/full" "$A"
[ "$(grep -c " $bid_full $D/full " "$tmp/d.txt")" = 2 ] ||
	fail "metadata file full: not executable and debuginfo: $(cat "$tmp/d.txt")"
same file "$D/sp ace&x=y" "$A"
grep -qx "executable $bid_q $D/sp ace&x=y -" "$tmp/d.txt" ||
	fail "metadata file 'sp ace&x=y' (escaped): $(cat "$tmp/d.txt")"
same file "$D/none" "$A"
[ "$(cat "$tmp/d.txt")" = "complete true" ] || fail "metadata file none: $(cat "$tmp/d.txt")"
# The JSON is a server's shape, the table a terminal's.
jq -e '.results | type == "array"' "$tmp/d.json" >/dev/null || fail "no results array"
env DEBUGINFOD_URLS=$A "$DSOSTORE" metadata --table file "$D/p" >"$tmp/table" 2>&1 ||
	fail "metadata --table: $(cat "$tmp/table")"
grep -q "^executable  $bid_p  $D/p$" "$tmp/table" || fail "metadata --table: $(cat "$tmp/table")"
tl_case_end

tl_case client_glob
same glob "$D/*" "$A"
# "*" stops at "/": sub/q is not in it; the non-ELF file neither.
grep -q "sub/q" "$tmp/d.txt" && fail "glob $D/* matched $D/sub/q"
grep -q "notes.txt" "$tmp/d.txt" && fail "glob matched a file that is not ELF"
[ "$(grep -c -v "^complete" "$tmp/d.txt")" = 6 ] || fail "glob $D/*: $(cat "$tmp/d.txt")"
same glob "$D/*/q" "$A"
grep -qx "executable $bid_q $D/sub/q -" "$tmp/d.txt" || fail "glob */q: $(cat "$tmp/d.txt")"
same glob "$D/[fp]?*" "$A"
same glob "$D/p.[!x]ebug" "$A"
same glob "$D/*&*" "$A"
tl_case_end

tl_case client_errors
oracle "$tmp/o.json" buildid "$bid_p" "$A"
[ "$(norm "$tmp/o.json")" = "complete false" ] ||
	fail "debuginfod-find 0.192 with an unknown key: $(cat "$tmp/o.json")"
ours "$tmp/d.json" buildid "$bid_p" "$A"
[ $rc = 1 ] || fail "dsostore metadata with an unknown key: status $rc"
grep -q "refused" "$tmp/ours.err" || fail "unknown key: $(cat "$tmp/ours.err")"
ours "$tmp/d.json" file "$D/p" ""
[ $rc = 1 ] && grep -q "no servers" "$tmp/ours.err" || fail "no servers: $rc $(cat "$tmp/ours.err")"
tl_case_end

tl_case merged
B=http://127.0.0.1:8003
C=http://127.0.0.1:8004
tl_start_debuginfod 8003 "$D2" || exit 1
tl_start_debuginfod 8004 "$D" || exit 1
# Two servers, two directories: the union.
same glob "$P/*/r" "$A $B"
oracle "$tmp/o.json" glob "$D2/*" "$A $B"
ours "$tmp/d.json" glob "$D2/*" "$A $B"
norm "$tmp/d.json" >"$tmp/d.txt"
[ "$(cat "$tmp/d.txt")" = "debuginfo $bid_r $D2/r -
executable $bid_r $D2/r -
complete true" ] || fail "merged glob: $(cat "$tmp/d.txt")"
ours "$tmp/d.json" glob "$D/*" "$A $B"
ours "$tmp/d2.json" glob "$D/*" "$A"
[ "$(norm "$tmp/d.json")" = "$(norm "$tmp/d2.json")" ] || fail "B added results under $D"
# Two servers of the same directory: each result once (debuginfod-find
# gives it twice: the same set, its duplicates aside).
oracle "$tmp/o.json" glob "$D/*" "$A $C"
ours "$tmp/d.json" glob "$D/*" "$A $C"
[ "$(jq ".results | length" "$tmp/o.json")" = 12 ] || fail "debuginfod-find 0.192 did not give duplicates"
[ "$(norm "$tmp/d.json")" = "$(norm "$tmp/o.json" | awk '!seen[$0]++')" ] ||
	fail "duplicates: $(norm "$tmp/d.json")"
# A server that cannot be reached: incomplete, the other's results kept,
# as debuginfod-find 0.192 says it.
same file "$D/p" "$A http://127.0.0.1:9"
grep -qx "complete false" "$tmp/d.txt" || fail "dead server: $(cat "$tmp/d.txt")"
grep -q "incomplete" "$tmp/ours.err" || fail "dead server: no warning: $(cat "$tmp/ours.err")"
tl_case_end

tl_case serve
tl_start_serve sport node 0 -F "$tmp/srv" --upstream "" || exit 1
S=http://127.0.0.1:$sport
for q in "file $D/p" "file $D/p.debug" "file $D/full" "file $D/sp ace&x=y" "glob $D/*" \
	"glob $D/*/q" "glob $D/[fp]?*" "glob $P/*/*" "file $D/none"; do
	oracle "$tmp/o.json" ${q%% *} "${q#* }" "$A"
	oracle "$tmp/s.json" ${q%% *} "${q#* }" "$S"
	diff <(norm "$tmp/o.json") <(norm "$tmp/s.json") >"$tmp/diff" ||
		fail "serve /metadata $q: not debuginfod 0.192's set: $(cat "$tmp/diff")"
done
curl -s -o "$tmp/body" -w '%{http_code} %{content_type}' "$S/metadata?key=glob&value=%2F*" >"$tmp/code"
[ "$(cat "$tmp/code")" = "200 application/json" ] || fail "serve /metadata: $(cat "$tmp/code")"
for bad in "key=buildid&value=x" "key=file" "value=x" "key=file&value="; do
	code=$(curl -s -o /dev/null -w '%{http_code}' "$S/metadata?$bad")
	[ "$code" = 400 ] || fail "serve /metadata?$bad: $code, not 400"
done
long=$(head -c 5000 /dev/zero | tr '\0' a)
code=$(curl -s -o /dev/null -w '%{http_code}' "$S/metadata?key=glob&value=$long")
[ "$code" = 400 ] || fail "serve /metadata with a 5000-byte value: $code"
# Forty stars (a backtracking matcher's worst case): answered.
code=$(curl -s -o /dev/null -w '%{http_code}' "$S/metadata?key=glob&value=$(printf '*a%.0s' {1..40})b")
[ "$code" = 200 ] || fail "serve /metadata with many stars: $code"
tl_case_end

tl_case serve_federated
tl_start_serve fport fed 0 -F "$tmp/srv2" --upstream "$A" || exit 1
F=http://127.0.0.1:$fport
oracle "$tmp/o.json" glob "$P/*/*" "$A $B"
oracle "$tmp/s.json" glob "$P/*/*" "$F"
diff <(norm "$tmp/o.json") <(norm "$tmp/s.json") >"$tmp/diff" ||
	fail "federated serve: not its own files plus its upstream's: $(cat "$tmp/diff")"
# The node asked its upstream with the client's User-Agent and its
# address as X-Forwarded-For (debuginfod's own log line says: UA:, XFF:;
# written after the answer, so polled for).
for ((i = 0; i < 50; i++)); do
	grep -q "UA:elfutils/0.192[^ ]* XFF:127.0.0.1 GET /metadata?key=glob" "$tmp/server-8002.log" && break
	sleep 0.1
done
grep -q "UA:elfutils/0.192[^ ]* XFF:127.0.0.1 GET /metadata?key=glob" "$tmp/server-8002.log" ||
	fail "the upstream's log has no /metadata from the node with UA and XFF: $(grep metadata "$tmp/server-8002.log" | tail -3)"
# A request that has come through --forwarded-ttl-limit (8) servers is
# not sent upstream: the node's own results, incomplete.
curl -s -H "X-Forwarded-For: 10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4, 10.0.0.5, 10.0.0.6, 10.0.0.7, 10.0.0.8" \
	-o "$tmp/s.json" "$F/metadata?key=glob&value=$P/*/*"
norm "$tmp/s.json" >"$tmp/s.txt"
[ "$(cat "$tmp/s.txt")" = "debuginfo $bid_r $D2/r -
executable $bid_r $D2/r -
complete false" ] || fail "federated serve past the hop limit: $(cat "$tmp/s.txt")"
tl_case_end

tl_finish metadata
