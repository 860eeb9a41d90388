#!/bin/bash
# Several processes, one cache: 4 concurrent `dsostore fetch` of the same 30
# build IDs with one DEBUGINFOD_CACHE_PATH, against dsserver with 100 ms of
# latency per request.  Each file must be downloaded once in all (the
# server's count per URL is 1), every process must print all 30 valid
# paths, and no temporary file may be left in the cache.  (elfutils 0.188
# has no lock: 8 processes asking for one build ID made 4 downloads.)
#
# Expected values come from first principles and binutils: the build IDs
# are the ones we write into the fixtures, confirmed by eu-readelf on what
# we serve and by readelf on the files the processes name.  Few forks: the
# machine running the suite may be loaded.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
unset DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc readelf eu-readelf curl python3
tl_need_dsserver

NPROCS=4
NIDS=30
tl_tmpdir dsprocs
T=$tmp

# --------------------------------------------------------------- fixtures
# Linked once with a template build ID; each copy has its own 20 bytes
# written over the template's (which occur once in the file).
mkdir -p "$T/served" "$T/cache"
cat >"$T/prog.c" <<'EOF'
#include <stdio.h>
static int cube(int x) { return x * x * x; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", cube(argc)); return 0; }
EOF
TEMPLATE=f7a0ffff5eed0123456789abcdef0123456789ab
gcc -g -O1 -Wl,--build-id=0x$TEMPLATE -o "$T/prog" "$T/prog.c" ||
	{ fail "compiling the fixture"; exit 1; }
IDS=()
for i in $(seq 0 $((NIDS - 1))); do
	printf -v hex 'f7a0%04x5eed0123456789abcdef0123456789ab' "$i"
	IDS+=("$hex")
done
tl_buildid_copies "$T/prog" "$TEMPLATE" "$T/served" "${IDS[@]}" || { fail "fixtures"; exit 1; }
# What we serve has the build ID we chose (eu-readelf's word).
(cd "$T/served" && eu-readelf -n "${IDS[@]}" 2>/dev/null) | awk '
	/^f7a0[0-9a-f]*:$/ { file = substr($0, 1, length($0) - 1) }
	/Build ID:/ { print file, $3 }' | sort >"$T/served.txt"
for hex in "${IDS[@]}"; do
	echo "$hex $hex"
done | sort >"$T/want-served.txt"
cmp -s "$T/served.txt" "$T/want-served.txt" ||
	{ fail "fixtures: eu-readelf does not confirm the build IDs"; exit 1; }

# ----------------------------------------------------------------- server
tl_start_dsserver port server --max-runtime 120 --fault '*:latency=100' "$T/served" || exit 1
URL=http://127.0.0.1:$port

# ------------------------------------------------------ four processes
# Each waits for the same go file, so that they start together.
export DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$T/cache
procs=()
for p in $(seq 1 $NPROCS); do
	(
		while [ ! -e "$T/go" ]; do sleep 0.005; done
		echo "${EPOCHREALTIME/./}" >"$T/start.$p"
		"$DSOSTORE" fetch --no-progress "${IDS[@]}" >"$T/out.$p" 2>"$T/err.$p"
		echo $? >"$T/rc.$p"
		echo "${EPOCHREALTIME/./}" >"$T/end.$p"
	) &
	procs+=($!)
done
touch "$T/go"
wait "${procs[@]}"

# The processes really overlapped (else one download each is no feat).
starts=$(sort -n "$T"/start.*)
ends=$(sort -n "$T"/end.*)
last_start=${starts##*$'\n'}
first_end=${ends%%$'\n'*}
last_end=${ends##*$'\n'}
[ "$last_start" -lt "$first_end" ] ||
	fail "the processes did not run at the same time: the counts prove nothing"
echo "processes: $(((first_end - last_start) / 1000)) ms of overlap," \
	"the last done $(((last_end - last_start) / 1000)) ms after the last start"

# --------------------------------------------------------------- checks
# Every process: exit 0, nothing on stderr, exactly the 30 lines
# "<hex> <cache>/<hex>/debuginfo".
for hex in "${IDS[@]}"; do
	echo "$hex $T/cache/$hex/debuginfo"
done | sort >"$T/want-out.txt"
for p in $(seq 1 $NPROCS); do
	rc=$(<"$T/rc.$p")
	[ "$rc" = 0 ] || fail "process $p exited $rc: $(head -5 "$T/err.$p")"
	[ -s "$T/err.$p" ] && fail "process $p wrote on stderr: $(head -5 "$T/err.$p")"
	sort "$T/out.$p" | cmp -s - "$T/want-out.txt" ||
		fail "process $p did not print the 30 expected lines: $(sort "$T/out.$p" |
			diff "$T/want-out.txt" - | head -5)"
done

# The files they named: readelf says each has its build ID.
files=()
for hex in "${IDS[@]}"; do
	files+=("$T/cache/$hex/debuginfo")
done
LC_ALL=C readelf -n "${files[@]}" 2>&1 | awk '
	/^File: / { file = $2 }
	/Build ID:/ { print $3, file }' | sort | cmp -s - "$T/want-out.txt" ||
	fail "the cached files do not all carry their build IDs (readelf -n)"

# One download per file: the server saw each URL once, and nothing else.
curl -sf --noproxy '*' "$URL/control/stats" >"$T/stats.txt" || fail "no /control/stats"
for hex in "${IDS[@]}"; do
	echo "url 1 /buildid/$hex/debuginfo"
done | sort >"$T/want-urls.txt"
grep '^url ' "$T/stats.txt" | sort | cmp -s - "$T/want-urls.txt" ||
	fail "requests per URL are not all 1: $(grep '^url ' "$T/stats.txt" | grep -v '^url 1 ' | head -5)"
grep -qx "requests $NIDS" "$T/stats.txt" ||
	fail "the server saw $(grep '^requests' "$T/stats.txt"), expected $NIDS"

# No temporary file left: only the control files at the top, and one
# "debuginfo" per build-ID directory, with its "hdr-debuginfo" (the
# download's X-DEBUGINFOD-* headers, elfutils 0.193's header cache).
leftover=$(cd "$T/cache" && find . -mindepth 1 \
	! -path './cache_clean_interval_s' ! -path './max_unused_age_s' ! -path './cache_miss_s' \
	! -regex '\./f7a0[0-9a-f]*' ! -regex '\./f7a0[0-9a-f]*/debuginfo' \
	! -regex '\./f7a0[0-9a-f]*/hdr-debuginfo')
[ -z "$leftover" ] || fail "left in the cache: $(echo "$leftover" | head -5)"

if [ "$fails" -ne 0 ]; then
	echo "fetch_procs: $fails check(s) failed" >&2
	exit 1
fi
echo "fetch_procs: all checks passed"
