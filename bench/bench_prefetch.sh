#!/usr/bin/env bash
# Prefetch benchmark: `dsostore prefetch` of a recording that maps
# 300 distinct DSOs, through dsserver with 50 ms added per request, beside
# the serial route perf has today (one `debuginfod-find` per build ID).
#
#   bench/bench_prefetch.sh [-q] [-n DSOS] [-l MS] [-r RUNS] [-R RUNS] [-k]
#     -q  smoke run: 48 DSOs, 1 run of each
#     -n  DSOs (300)     -l  latency added per request, ms (50)
#     -r  runs of prefetch, cold and warm, median (3)
#     -R  runs of the serial route, median (1: it takes N x ~60 ms)
#     -k  keep the work directory
#
# One `gcc -g -shared` library is built once and copied N times with the
# 20 build-ID bytes patched (tests/gen/perfgen.py --clone; checked with
# readelf -n).  tests/gen/perfgen.py writes a perf.data (build-ID table, as
# perf record writes it) mapping the copies at /opt/bench/<name>, paths
# that do not exist here, one sample in each.  Every cold run starts with
# an empty DEBUGINFOD_CACHE_PATH; HOME is the work directory, so neither
# ~/.debug nor ~/.debuginfod_client_cache comes in.  Checks: every run
# exits 0, leaves N debuginfo files whose build IDs are their directories'
# names, and makes exactly N requests (cold) or 0 (warm) at the server.
set -euo pipefail

src=${DS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/bench/benchlib.bash"
build=${DS_BUILD:-$src/build}
dsostore=${DSOSTORE:-$build/dsostore}
dsserver=${DSSERVER:-$build/dsserver}
gen=$src/tests/gen/perfgen.py
n=300 latency=50 runs=3 sruns=1 keep=''
conc=32 # the fetcher's default connections per server (max_per_server, lib/debuginfod/fetch.c)

while getopts qn:l:r:R:kh opt; do
	case $opt in
	q) n=48 runs=1 sruns=1 ;;
	n) n=$OPTARG ;;
	l) latency=$OPTARG ;;
	r) runs=$OPTARG ;;
	R) sruns=$OPTARG ;;
	k) keep=1 ;;
	*)
		bl_usage
		;;
	esac
done

bl_need gcc python3 readelf curl debuginfod-find
[ -x "$dsserver" ] || die "no $dsserver: run make first"
[ -x "$dsostore" ] || die "no $dsostore: run make first"
"$dsostore" prefetch --help >/dev/null 2>&1 || die "$dsostore has no prefetch command"
prefix=/opt/bench
[ -e "$prefix" ] && prefix=/nonexistent-dsostore-bench/opt/bench
[ -e "$prefix" ] && die "$prefix exists; the DSO paths must not"

base=${DS_BENCH_TMPDIR:-}
if [ -z "$base" ]; then
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then base=/dev/shm; else base=${TMPDIR:-/tmp}; fi
fi
work=$(mktemp -d "$base/ds-bench-prefetch.XXXXXX")
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	if [ -n "$keep" ] || [ -n "${DS_KEEP_TMP:-}" ]; then
		echo "bench_prefetch: keeping $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
load_at_start=$(cut -d' ' -f1 /proc/loadavg)
# Nothing of the user's: no other server, proxy, cache or ~/.debug.
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_TIMEOUT DEBUGINFOD_PROGRESS \
	DEBUGINFOD_VERBOSE DEBUGINFOD_RETRY_LIMIT DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME \
	DEBUGINFOD_HEADERS_FILE PERF_BUILDID_DIR http_proxy https_proxy HTTP_PROXY \
	HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
export HOME=$work

# ------------------------------------------------------------- the corpus

cat >"$work/libbench.c" <<'EOF'
int bench_mix(int x)
{
	for (int i = 0; i < 8; i++)
		x = x * 1103515245 + 12345;
	return x;
}

int bench_fold(const char *s)
{
	int h = 0;

	while (*s)
		h = h * 31 + *s++;
	return bench_mix(h);
}
EOF
gcc -g -O1 -shared -fPIC -Wl,--build-id=sha1 -o "$work/libbench.so" "$work/libbench.c"
# (grep -c, not -q: with pipefail, a grep that stops early fails the pipe)
[ "$(readelf -S "$work/libbench.so" | grep -c '\.debug_info')" -gt 0 ] || die "no .debug_info in libbench.so"
python3 "$gen" --clone "$work/libbench.so" "$n" "$work/corpus"
# The IDs as readelf reads them (one process for all): N distinct ones.
readelf -n "$work"/corpus/* | awk '/Build ID:/ { print $3 }' | sort >"$work/ids.readelf"
[ "$(sort -u "$work/ids.readelf" | wc -l)" = "$n" ] || die "readelf: not $n distinct build IDs"

python3 "$gen" --dsos-from "$work/corpus" --map-prefix "$prefix" --table --out "$work/perf.data"
if command -v perf >/dev/null; then
	perf buildid-list -i "$work/perf.data" 2>/dev/null | awk '{ print $1 }' | sort >"$work/ids.perf"
	cmp -s "$work/ids.readelf" "$work/ids.perf" ||
		die "perf buildid-list does not list the corpus's build IDs"
	grep -q " $prefix/" <(perf buildid-list -i "$work/perf.data" 2>/dev/null) ||
		die "perf buildid-list does not show the paths under $prefix"
fi

# ------------------------------------------------------------- the server

"$dsserver" --port-file "$work/port" --die-with-parent --max-runtime 1800 \
	--fault "*:latency=$latency" "$work/corpus" 2>"$work/server.err" &
server_pid=$!
for ((i = 0; i < 200; i++)); do
	[ -s "$work/port" ] && break
	kill -0 "$server_pid" 2>/dev/null || die "dsserver died: $(head -3 "$work/server.err")"
	sleep 0.05
done
[ -s "$work/port" ] || die "dsserver did not start"
url=http://127.0.0.1:$(cat "$work/port")
ctl() { curl -sf --noproxy '*' "$url/control/$1"; }
[ "$(ctl rescan)" = "files $n buildids $n" ] || die "dsserver does not index $n build IDs"
stat_of() { ctl stats | awk -v k="$1" '$1 == k { print $2 }'; }

# ------------------------------------------------------------- the runs

# Everything a run leaves is checked: N debuginfo files, each carrying the
# build ID of its directory (read by perfgen's note reader; three by
# readelf), and the server's request count.
check_cache() { # CACHE WANT_REQUESTS LABEL
	local got bad f
	got=$(find "$1" -mindepth 2 -maxdepth 2 -name debuginfo -type f -size +0 | wc -l)
	[ "$got" = "$n" ] || die "$3: $got debuginfo files in the cache, not $n"
	bad=$(python3 - "$1" "$gen" <<'EOF'
import glob, os, sys
sys.path.insert(0, os.path.dirname(sys.argv[2]))
import perfgen
bad = [f for f in glob.glob(sys.argv[1] + "/*/debuginfo")
       if (perfgen.elf_build_id(f) or (b"",))[0].hex() != os.path.basename(os.path.dirname(f))]
print(len(bad))
EOF
)
	[ "$bad" = 0 ] || die "$3: $bad cached files do not carry their directory's build ID"
	for f in $(find "$1" -mindepth 2 -maxdepth 2 -name debuginfo | head -3); do
		[ "$(readelf -n "$f" | grep -c "Build ID: $(basename "$(dirname "$f")")")" = 1 ] ||
			die "$3: readelf disagrees on $f"
	done
	echo "$got" >"$work/files.$3"
	req=$(stat_of requests)
	echo "$req $(stat_of connections)" >>"$work/server.$3"
	[ "$req" = "$2" ] || {
		echo "bench_prefetch: $3: $req requests at the server, not $2" >&2
		echo 1 >"$work/request_mismatch"
	}
}

# timed LABEL CMD...: wall ms (and user+sys ms with GNU time) appended to
# $work/t.LABEL; stdout and stderr to $work/LABEL.out.
timed() {
	local label=$1 t0 t1
	shift
	ctl reset-stats >/dev/null
	t0=$EPOCHREALTIME
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%U %S' -o "$work/rusage" "$@" >"$work/$label.out" 2>&1 ||
			die "$label failed: $(tail -5 "$work/$label.out")"
	else
		"$@" >"$work/$label.out" 2>&1 || die "$label failed: $(tail -5 "$work/$label.out")"
		echo "- -" >"$work/rusage"
	fi
	t1=$EPOCHREALTIME
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')" \
		"$(tail -1 "$work/rusage" | awk '{ if ($1 == "-") print "-"; else printf "%.0f", ($1 + $2) * 1000 }')" \
		>>"$work/t.$label"
}

serial() { # IDS_FILE: the route perf has, one debuginfod-find per build ID in turn
	local id fails=0
	while read -r id; do
		debuginfod-find debuginfo "$id" >/dev/null || fails=$((fails + 1))
	done <"$1"
	[ "$fails" = 0 ] || {
		echo "$fails of the build IDs not found" >&2
		return 1
	}
}

export DEBUGINFOD_URLS=$url
echo "bench_prefetch: $n DSOs, $latency ms per request; $runs prefetch run(s), $sruns serial" >&2
rounds=$((runs > sruns ? runs : sruns))
for ((r = 0; r < rounds; r++)); do
	if ((r < runs)); then
		cache=$work/cache-a.$r
		mkdir "$cache"
		export DEBUGINFOD_CACHE_PATH=$cache
		timed cold "$dsostore" prefetch --no-progress "$work/perf.data"
		check_cache "$cache" "$n" cold
		if [ "$r" = 0 ]; then cp "$work/cold.out" "$work/cold.first"; fi
		timed warm "$dsostore" prefetch --no-progress "$work/perf.data"
		check_cache "$cache" 0 warm
	fi
	if ((r < sruns)); then
		cache=$work/cache-b.$r
		mkdir "$cache"
		echo "bench_prefetch: serial route, round $((r + 1)): $n debuginfod-find runs" >&2
		export DEBUGINFOD_CACHE_PATH=$cache
		export -f serial
		timed serial bash -c 'serial "$1"' serial "$work/ids.readelf"
		check_cache "$cache" "$n" serial
	fi
done

# ------------------------------------------------------------- the table

range() { sort -n "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo, hi }'; }
floor=$(((n + conc - 1) / conc * latency))
sfloor=$((n * latency))
{
	for k in cold warm serial; do
		echo "meas $k $(median_of "$work/t.$k" 1) $(median_of "$work/t.$k" 2) $(wc -l <"$work/t.$k")" \
			"$(range "$work/t.$k") $(tail -1 "$work/server.$k") $(cat "$work/files.$k")"
	done
} | awk -v n="$n" -v lat="$latency" -v conc="$conc" -v floor="$floor" -v sfloor="$sfloor" \
	-v load="$load_at_start" -v cpus="$(nproc)" '
function ratio(x) { return x >= 100 ? sprintf("%.0fx", x) : x >= 10 ? sprintf("%.1fx", x) : sprintf("%.2fx", x) }
function row(key, name, v, unit, runs, vsa, fl, cpu, rq, cn, files, lo, hi) {
	printf "%-42s  %9s  %-4s  %4s  %7s  %6s  %8s  %7s  %8s  %5s  %5s\n", name, v, unit, runs,
		vsa, fl, fl == "-" ? "-" : ratio(v / fl), cpu, rq, cn, files
	bench[++nb] = sprintf("BENCH prefetch.%s value=%s unit=%s ratio=%s goal_max=- goal_min=- met=- min=%s max=%s",
		key, v, unit, vsa, lo, hi)
}
{ m[$2] = $3; cpu[$2] = $4; runs[$2] = $5; lo[$2] = $6; hi[$2] = $7; rq[$2] = $8; cn[$2] = $9; files[$2] = $10 }
END {
	a = m["cold"]
	printf "dsostore prefetch benchmark: %d DSOs (build-ID table), %d ms added per request, %d connections per server (default); %d CPUs, load average %s at start; median of the runs\n\n", n, lat, conc, cpus, load
	printf "%-42s  %9s  %-4s  %4s  %7s  %6s  %8s  %7s  %8s  %5s  %5s\n", "name", "value", "unit", "runs", "vs A", "floor", "vs floor", "cpu ms", "requests", "conns", "files"
	row("cold", "A  dsostore prefetch, cold cache", a, "ms", runs["cold"], "1.00x", floor, cpu["cold"], rq["cold"], cn["cold"], files["cold"], lo["cold"], hi["cold"])
	row("serial", "B  debuginfod-find x " n ", serial", m["serial"], "ms", runs["serial"], ratio(m["serial"] / a), sfloor, cpu["serial"], rq["serial"], cn["serial"], files["serial"], lo["serial"], hi["serial"])
	row("warm", "A\x27 dsostore prefetch, warm cache", m["warm"], "ms", runs["warm"], ratio(m["warm"] / a), "-", cpu["warm"], rq["warm"], cn["warm"], files["warm"], lo["warm"], hi["warm"])
	row("floor", "floor ceil(N/" conc ") x latency", floor, "ms", "-", ratio(floor / a), "-", "-", "-", "-", "-", "-", "-")
	row("floor.serial", "floor of a serial client, N x latency", sfloor, "ms", "-", ratio(sfloor / a), "-", "-", "-", "-", "-", "-", "-")
	row("speedup", "speed-up B / A", sprintf("%.1f", m["serial"] / a), "x", "-", "-", "-", "-", "-", "-", "-", "-", "-")
	row("floor_ratio", "A / floor", sprintf("%.2f", a / floor), "x", "-", "-", "-", "-", "-", "-", "-", "-", "-")
	print ""
	for (i = 1; i <= nb; i++)
		print bench[i]
}'
echo
echo "dsostore prefetch's summary (first cold run):"
sed 's/^/  /' "$work/cold.first"
[ -e "$work/request_mismatch" ] && exit 1
exit 0
