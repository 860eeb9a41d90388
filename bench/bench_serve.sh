#!/usr/bin/env bash
# Server benchmark: `dsostore serve` (the node) beside the real elfutils
# debuginfod serving the same files, in one run.
#
#   bench/bench_serve.sh [-q] [-c CONNS] [-d SECONDS] [-n FILES] [-N IDS]
#                        [-C CONNS] [-l MS] [-f FRAMES] [-M SIZE] [-r RUNS]
#                        [-s SEED] [-o PARTS] [-p] [-k]
#     -q  smoke run: 1 s of wrk, 1 run, 48 misses, 10,000 frames
#     -o  the parts to run, comma-separated (hits,misses,symbolize; the
#         memory figures are always taken)
#     -c  connections of the cached-hit runs, comma-separated (1,64,512)
#     -d  seconds of wrk per cached-hit measure (5)
#     -n  files in the served directory (200: half libc6-dbg's debug
#         files, half the system's /usr/lib/x86_64-linux-gnu/*.so*)
#     -N  build IDs per federated-miss run (200)
#     -C  connections of the miss runs, comma-separated (32)
#     -l  latency dsserver adds to every upstream request, ms (50)
#     -f  frames per /symbolize measure, comma-separated (100000,1000000)
#     -M  the node's --mem-budget (256M)
#     -r  runs per measure, median (3)   -s  address seed (4)
#     -p  profile the node under wrk at 64 connections (else the largest)
#         (perf record -g; perf report --no-children's top entries)
#     -k  keep the work directory
#   DS_DEBUGINFOD_192=PATH  a second debuginfod (bookworm-backports' 0.192,
#         say) measured beside Debian's 0.188; by default the one that
#         scripts/peers unpacks ($DS_PEERS, else $DS_CORPUS/peers, else
#         build-corpus/peers), skipped when there is none ("" skips it)
#
# (1) cached hits: wrk (bench/serve_wrk.lua rotates over the debuginfo URLs
#     of the served directory) at each connection count, against the node
#     and each debuginfod, all warmed first (every URL fetched and checked
#     against its file);  (2) federated misses: each server federates to
#     dsserver (tests/server) with --fault '*:latency=L'; N build IDs no
#     server has are asked with C connections (bench/serve_load.c, a
#     libcurl multi driver; DS_MISS_CLIENT=curl: curl -Z): wall time beside
#     ceil(N/C) x L, and the upstream requests from dsserver's log;
#     (3) POST /symbolize of libc addresses (libc6-dbg) warm and cold
#     (a new node, empty cache and saved indexes) beside `dsostore
#     symbolize` on the same lines and llvm-symbolizer;  (4) the node's
#     VmHWM at the end beside --mem-budget.
# The real debuginfod listens on every address: the whole bench runs in a
# network namespace of its own with only loopback up (unshare -n), where
# every server listens; without one, the debuginfod columns are skipped.
set -euo pipefail

src=${DS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/bench/benchlib.bash"
. "$src/tests/lib/testlib.bash"
build=${DS_BUILD:-$src/build}
dsostore=${DSOSTORE:-$build/dsostore}
serve_load=$build/bench/serve_load
# The misses' client: serve_load (a libcurl multi driver), or curl -Z with
# DS_MISS_CLIENT=curl (what earlier runs used: bench/serve_load.c says why
# it was replaced).
miss_client=${DS_MISS_CLIENT:-serve_load}
DSSERVER=${DSSERVER:-$build/dsserver} # testlib's tl_start_dsserver runs it
dsserver=$DSSERVER
gen=$src/bench/gen_symbolize_bench.py
perfgen=$src/tests/gen/perfgen.py
conns_opt=1,64,512 wrk_s=5 nfiles=200 nmiss=200 mconns_opt=32 latency=50
frames_opt=100000,1000000 budget=256M runs=3 seed=4 profile='' keep='' parts_opt=hits,misses,symbolize

while getopts qc:d:n:N:C:l:f:M:r:s:o:pkh opt; do
	case $opt in
	q) wrk_s=1 runs=1 nmiss=48 frames_opt=10000 ;;
	c) conns_opt=$OPTARG ;;
	d) wrk_s=$OPTARG ;;
	n) nfiles=$OPTARG ;;
	N) nmiss=$OPTARG ;;
	C) mconns_opt=$OPTARG ;;
	l) latency=$OPTARG ;;
	f) frames_opt=$OPTARG ;;
	M) budget=$OPTARG ;;
	r) runs=$OPTARG ;;
	s) seed=$OPTARG ;;
	o) parts_opt=$OPTARG ;;
	p) profile=1 ;;
	k) keep=1 ;;
	*) bl_usage ;;
	esac
done
IFS=, read -ra conns <<<"$conns_opt"
IFS=, read -ra mconns <<<"$mconns_opt"
IFS=, read -ra frames <<<"$frames_opt"
IFS=, read -ra parts <<<"$parts_opt"
for p in "${parts[@]}"; do
	case $p in hits | misses | symbolize) ;; *) die "no part $p (hits, misses, symbolize)" ;; esac
done
wanted() { [[ ",$parts_opt," == *",$1,"* ]]; }
for v in "${conns[@]}" "${mconns[@]}" "${frames[@]}" "$wrk_s" "$nfiles" "$nmiss" "$latency" "$runs"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "counts must be numbers above 0, not '$v'"
done
maxf=0
for n in "${frames[@]}"; do ((n > maxf)) && maxf=$n; done

bl_need gcc python3 readelf curl wrk llvm-symbolizer
[ -x "$dsserver" ] || die "no $dsserver: run make first"
[ -x "$dsostore" ] || die "no $dsostore: run make first"
[ "$miss_client" = curl ] || [ -x "$serve_load" ] || die "no $serve_load: run make first"
"$dsostore" serve --help >/dev/null 2>&1 || die "$dsostore has no serve command"

# Every server in a network namespace with only loopback (does not return
# outside one); a bench that cannot make one runs the node alone.
netns=1
tl_netns_reexec "$0" "$@" || netns=''
peers=() # debuginfod columns: name of the binary's version, binary
if [ -z "$netns" ]; then
	echo "bench_serve: no network namespace (unshare -n); the real debuginfod listens on" \
		"every address, so its columns are skipped" >&2
elif ! command -v debuginfod >/dev/null; then
	echo "bench_serve: debuginfod is not installed; its columns are skipped" \
		"(scripts/install-deps bench)" >&2
else
	peers+=("debuginfod $(debuginfod --version | awk 'NR == 1 { print $NF }')" debuginfod)
fi
# The second debuginfod: DS_DEBUGINFOD_192, else the 0.192 that
# scripts/peers unpacks (tests' tl_peer looks in the same place).
if [ -z "${DS_DEBUGINFOD_192+set}" ]; then
	DS_DEBUGINFOD_192=${DS_PEERS:-${DS_CORPUS:-$src/build-corpus}/peers}/bin/debuginfod-0.192
	[ -x "$DS_DEBUGINFOD_192" ] || DS_DEBUGINFOD_192=
fi
if [ -n "$netns" ] && [ -n "${DS_DEBUGINFOD_192:-}" ]; then
	if v=$("$DS_DEBUGINFOD_192" --version 2>/dev/null | awk 'NR == 1 { print $NF }') && [ -n "$v" ]; then
		peers+=("debuginfod $v" "$DS_DEBUGINFOD_192")
	else
		echo "bench_serve: DS_DEBUGINFOD_192=$DS_DEBUGINFOD_192 does not run; skipped" >&2
	fi
fi

base=${DS_BENCH_TMPDIR:-}
if [ -z "$base" ]; then
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then base=/dev/shm; else base=${TMPDIR:-/tmp}; fi
fi
work=$(mktemp -d "$base/ds-bench-serve.XXXXXX")
# testlib's servers go in $tmp and pids, which tl_cleanup stops at exit
# before it removes $tmp (unless DS_KEEP_TMP is set)
tmp=$work pids=() tl_also_rm=()
if [ -n "$keep" ] || [ -n "${DS_KEEP_TMP:-}" ]; then
	export DS_KEEP_TMP=1
	echo "bench_serve: keeping $work" >&2
fi
trap tl_cleanup EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg)
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_TIMEOUT DEBUGINFOD_PROGRESS \
	DEBUGINFOD_VERBOSE DEBUGINFOD_RETRY_LIMIT DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME \
	DEBUGINFOD_HEADERS_FILE PERF_BUILDID_DIR DSOSTORE_SYMINDEX DSOSTORE_SYMINDEX_PATH
tl_no_proxy
export HOME=$work
res=$work/results # one line per measure, read by the tables at the end
: >"$res"
hz=$(getconf CLK_TCK)

# ------------------------------------------------------------- the files

# The served directory: libc6-dbg's debug files (libc's own first), then
# the system's shared libraries, copied (the servers must not follow
# links: debuginfod ignores them).  The debuginfo URLs are those of the
# debug files, with the build IDs readelf reads.
corpus=$work/corpus
mkdir "$corpus"
libc_so=$(readlink -f "$(gcc -print-file-name=libc.so.6)")
[ -f "$libc_so" ] || libc_so=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
libc_id=$(readelf -n "$libc_so" | awk '/Build ID:/ { print $3 }')
libc_dbg=/usr/lib/debug/.build-id/${libc_id:0:2}/${libc_id:2}.debug
[ -r "$libc_dbg" ] || die "no $libc_dbg: libc6-dbg is not installed (scripts/install-deps bench)"
ndbg=$((nfiles / 2))
{
	echo "$libc_dbg"
	dpkg -L libc6-dbg | grep '^/usr/lib/debug/\.build-id/.*\.debug$' | sort | grep -vxF "$libc_dbg"
} | sed -n "1,${ndbg}p" | while read -r f; do
	cp "$f" "$corpus/dbg-$(basename "$(dirname "$f")")$(basename "$f")"
done
find /usr/lib/x86_64-linux-gnu -maxdepth 1 -name '*.so*' -type f | sort |
	sed -n "1,$((nfiles - $(find "$corpus" -type f | wc -l)))p" | while read -r f; do
	cp "$f" "$corpus/"
done
files_in=$(find "$corpus" -type f | wc -l)
corpus_mb=$(du -sm "$corpus" | cut -f1)
readelf -n "$corpus"/dbg-* 2>/dev/null | awk '/^File: / { f = $2 } /Build ID:/ { print $3, f }' |
	sort -u -k1,1 >"$work/hit.ids"
sed 's,^\([0-9a-f]*\) .*,/buildid/\1/debuginfo,' "$work/hit.ids" >"$work/hit.urls"
nurls=$(wc -l <"$work/hit.urls")
((nurls > 0)) || die "readelf reads no build ID in the debug files"

# The misses: one small library copied with the 20 build-ID bytes patched
# (tests/gen/perfgen.py --clone), a fresh slice of N build IDs per run and
# server, so that every run asks what no cache has seen.
nservers=$((1 + ${#peers[@]} / 2))
nclones=$(((nservers + 1) * runs * ${#mconns[@]} * nmiss)) # + the reference
cat >"$work/libmiss.c" <<'EOF'
int miss_mix(int x)
{
	for (int i = 0; i < 8; i++)
		x = x * 1103515245 + 12345;
	return x;
}
EOF
gcc -g -O1 -shared -fPIC -Wl,--build-id=sha1 -o "$work/libmiss.so" "$work/libmiss.c"
python3 "$perfgen" --clone "$work/libmiss.so" "$nclones" "$work/clones"
readelf -n "$work"/clones/* | awk '/Build ID:/ { print $3 }' >"$work/miss.ids"
[ "$(sort -u "$work/miss.ids" | wc -l)" = "$nclones" ] || die "readelf: not $nclones distinct build IDs in the clones"

# The modules /symbolize is asked about: libc, and python3.11 when its
# debuginfo is installed; their debug files in $work/symdir, which every
# node serves (the warm node beside its corpus, the cold one alone), so
# that warm and cold answer from the same files.
mods=("$libc_id $libc_so $libc_dbg")
py=$(readlink -f /usr/bin/python3.11 || true) # Debian's, whose debuginfo python3.11-dbg has
if [ -f "$py" ]; then
	py_id=$(readelf -n "$py" 2>/dev/null | awk '/Build ID:/ { print $3 }') || py_id=
	py_dbg=/usr/lib/debug/.build-id/${py_id:0:2}/${py_id:2}.debug
	if [ -n "$py_id" ] && [ -r "$py_dbg" ]; then
		mods+=("$py_id $py $py_dbg")
	else
		echo "bench_serve: no debuginfo for $py (python3.11-dbg): libc's frames only" >&2
	fi
fi
mkdir -p "$work/symdir"
for m in "${mods[@]}"; do
	read -r id so dbg <<<"$m"
	cp "$dbg" "$work/symdir/"
done

# ------------------------------------------------------------- the servers

up_port=
tl_start_dsserver up_port upstream --max-runtime 3600 --fault "*:latency=$latency" "$work/clones" ||
	die "dsserver did not start"
up=http://127.0.0.1:$up_port up_pid=${pids[-1]}
ctl() { curl -sf "$up/control/$1"; }
[ "$(ctl rescan)" = "files $nclones buildids $nclones" ] || die "dsserver does not index the clones"

# start_node NAME ARGS...: a node on a port of the kernel's choosing, its
# stderr in $work/NAME.err; sets node_port and node_pid once it is ready:
# its port file written, and with -F its first scan done (/metrics, as
# debuginfod's; without -F nothing is traversed).
start_node() {
	local name=$1
	shift
	rm -f "$work/$name.port"
	DSOSTORE_SYMINDEX_PATH=$work/$name.symindex \
		"$dsostore" serve -p 0 --port-file "$work/$name.port" --mem-budget "$budget" \
		--cache "$work/$name.cache" "$@" 2>"$work/$name.err" &
	node_pid=$!
	pids+=("$node_pid")
	node_port=
	if ! tl_wait_port_file node_port "$work/$name.port" ||
		{ [[ " $* " == *" -F "* ]] && ! tl_wait_ready "$node_port" "$node_pid"; }; then
		die "the node $name did not get ready: $(tail -3 "$work/$name.err")"
	fi
}
stop() { # PID: stopped, and no longer in pids (its number may be reused)
	local p rest=()
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	for p in "${pids[@]}"; do
		[ "$p" = "$1" ] || rest+=("$p")
	done
	pids=("${rest[@]}")
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hwm_kb() { awk '$1 == "VmHWM:" { print $2 }' "/proc/$1/status"; }

# Servers: S_NAME (as the tables say it), S_PORT, S_PID; 0 is the node.
S_NAME=("dsostore serve") S_PORT=() S_PID=()
start_node node -F "$corpus" -F "$work/symdir" --upstream "$up" --rescan 0
S_PORT+=("$node_port") S_PID+=("$node_pid")
for ((p = 0; p < ${#peers[@]}; p += 2)); do
	port=$((8002 + p)) # a namespace of our own: the ports are free
	TL_DEBUGINFOD=${peers[p + 1]} tl_start_debuginfod "$port" "$corpus" "$up" ||
		die "${peers[p]} did not start"
	S_NAME+=("${peers[p]}") S_PORT+=("$port") S_PID+=("${pids[-1]}")
done
echo "bench_serve: ${S_NAME[*]}; $files_in files ($corpus_mb MB), $nurls debuginfo URLs" >&2

# Every URL from every server, compared with its file: the servers are
# right, and warm.
for ((s = 0; s < nservers; s++)); do
	d=$work/check.$s
	mkdir "$d"
	while read -r id f; do
		printf 'url = "http://127.0.0.1:%s/buildid/%s/debuginfo"\noutput = "%s/%s"\n' \
			"${S_PORT[s]}" "$id" "$d" "$id"
	done <"$work/hit.ids" >"$work/check.$s.cfg"
	curl -s -K "$work/check.$s.cfg" -w '%{http_code}\n' >"$work/check.$s.codes" || true
	bad=$(grep -cvx 200 "$work/check.$s.codes" || true)
	[ "$bad" = 0 ] || die "${S_NAME[s]}: $bad of $nurls debuginfo URLs not 200"
	while read -r id f; do
		cmp -s "$f" "$d/$id" || die "${S_NAME[s]}: /buildid/$id/debuginfo is not $f"
	done <"$work/hit.ids"
	rm -rf "$d"
done

# ---------------------------------------------------------- (1) cached hits

# wrk_run SERVER CONNS SECONDS [LABEL]: one wrk run; with LABEL, a "hit"
# line in the results: requests/s, p50 and p99 (ms), non-2xx
# answers, socket errors (connect, read, write), requests wrk gave up on
# after its 2 s timeout, the server's CPU (% of one CPU) over the run, and
# MB/s received.
wrk_run() {
	local s=$1 c=$2 secs=$3 t=$(($2 < 2 ? 1 : 2)) c0 c1 t0 t1 out
	out=$work/wrk.out
	c0=$(cpu_ticks "${S_PID[s]}")
	t0=$EPOCHREALTIME
	wrk -t "$t" -c "$c" -d "${secs}s" --latency -s "$src/bench/serve_wrk.lua" \
		"http://127.0.0.1:${S_PORT[s]}" -- "$work/hit.urls" "$t" >"$out" 2>&1 ||
		die "wrk against ${S_NAME[s]} failed: $(tail -3 "$out")"
	t1=$EPOCHREALTIME
	c1=$(cpu_ticks "${S_PID[s]}")
	[ -n "${4:-}" ] || return 0
	awk -v s="$s" -v c="$c" -v cpu=$((c1 - c0)) -v hz="$hz" -v t0="$t0" -v t1="$t1" '
		$1 == "RESULT" { printf "hit %d %d %.1f %.3f %.3f %d %d %d %.0f %.1f\n", s, c,
			$2 / ($3 / 1e6), $4 / 1000, $5 / 1000, $6, $7 + $8 + $9, $10,
			100 * cpu / hz / (t1 - t0), $11 / ($3 / 1e6) / 1e6; f = 1 }
		END { exit !f }' "$out" >>"$res" || die "no RESULT line from wrk: $(tail -3 "$out")"
}

run_hits() {
	for ((s = 0; s < nservers; s++)); do
		wrk_run "$s" 64 1 # warm-up: every thread and connection path once
	done
	echo "bench_serve: cached hits, ${conns[*]} connections, $wrk_s s each, $runs run(s)" >&2
	for ((r = 0; r < runs; r++)); do
		for c in "${conns[@]}"; do
			# rotated: each server goes first in turn
			for ((k = 0; k < nservers; k++)); do
				wrk_run $(((r + k) % nservers)) "$c" "$wrk_s" label
			done
		done
	done

	if [ -n "$profile" ]; then
		pc=${conns[-1]} # 64 if measured: the goal's count
		[[ ",$conns_opt," == *,64,* ]] && pc=64
		if command -v perf >/dev/null && perf record -N -o "$work/probe.data" -- true >/dev/null 2>&1; then
			echo "bench_serve: profiling the node under wrk, $pc connections" >&2
			perf record -N -g -o "$work/node.perf" -p "${S_PID[0]}" 2>"$work/perf.err" &
			perf_pid=$!
			sleep 0.5
			wrk_run 0 "$pc" "$wrk_s"
			kill -INT "$perf_pid"
			wait "$perf_pid" || true
			perf report -i "$work/node.perf" --no-children --stdio --percent-limit 1.5 -g none \
				2>/dev/null | grep -v -e '^#' -e '^$' | sed -n '1,25p' >"$work/profile.txt" || true
		else
			echo "bench_serve: perf record is not permitted here; no profile" >&2
		fi
	fi
}
wanted hits && run_hits

# ------------------------------------------------------ (2) federated misses

# miss_run SERVER CONNS: the next N build IDs of the clones asked from
# SERVER with CONNS connections; each answer must carry its build ID, and
# dsserver's log says how many requests each build ID cost upstream.
next_id=0
miss_run() {
	local s=$1 c=$2 ids=$work/miss.$1.$2.$next_id t0 t1 c0 c1 bad reqs odd
	sed -n "$((next_id + 1)),$((next_id + nmiss))p" "$work/miss.ids" >"$ids"
	next_id=$((next_id + nmiss))
	rm -rf "$work/got" && mkdir "$work/got"
	if [ "$miss_client" = curl ]; then
		while read -r id; do
			printf 'url = "http://127.0.0.1:%s/buildid/%s/debuginfo"\noutput = "%s/%s"\n' \
				"${S_PORT[s]}" "$id" "$work/got" "$id"
		done <"$ids" >"$work/miss.cfg"
		c0=$(cpu_ticks "${S_PID[s]}")
		t0=$EPOCHREALTIME
		curl -s --no-progress-meter -Z --parallel-max "$c" --parallel-immediate -K "$work/miss.cfg" \
			-w '%{http_code}\n' >"$work/miss.codes" || true
		t1=$EPOCHREALTIME
	else
		sed "s|^|http://127.0.0.1:${S_PORT[s]}/buildid/|; s|\$|/debuginfo|" "$ids" >"$work/miss.urls"
		c0=$(cpu_ticks "${S_PID[s]}")
		"$serve_load" -c "$c" -o "$work/got" <"$work/miss.urls" >"$work/miss.out" ||
			die "serve_load failed"
		# its own clock, first request to last answer (no process start)
		t0=0 t1=$(awk '$1 == "wall" { printf "%.6f", $2 / 1000 }' "$work/miss.out")
		awk '$1 != "wall" { print $1 }' "$work/miss.out" >"$work/miss.codes"
	fi
	c1=$(cpu_ticks "${S_PID[s]}")
	bad=$(grep -cvx 200 "$work/miss.codes" || true)
	[ "$bad" = 0 ] || die "${S_NAME[s]}: $bad of $nmiss misses not 200 ($(sort "$work/miss.codes" | uniq -c | tr '\n' ' '))"
	bad=$(python3 - "$work/got" "$perfgen" <<'EOF'
import os, sys
sys.path.insert(0, os.path.dirname(sys.argv[2]))
import perfgen
d = sys.argv[1]
print(sum(1 for f in os.listdir(d)
          if (perfgen.elf_build_id(os.path.join(d, f)) or (b"",))[0].hex() != f))
EOF
)
	[ "$bad" = 0 ] || die "${S_NAME[s]}: $bad answers do not carry the build ID asked"
	ctl idle >/dev/null || die "dsserver does not get idle"
	# requests upstream for this run's build IDs (any artifact), and how
	# many build IDs took other than one
	read -r reqs odd < <(awk 'NR == FNR { want[$1] = 0; next }
		{ split($3, p, "/"); if (p[3] in want) want[p[3]]++ }
		END { for (k in want) { n += want[k]; if (want[k] != 1) o++ } print n + 0, o + 0 }' \
		"$ids" "$work/upstream.log")
	awk -v s="$s" -v c="$c" -v t0="$t0" -v t1="$t1" -v cpu=$((c1 - c0)) -v hz="$hz" \
		-v reqs="$reqs" -v odd="$odd" 'BEGIN { printf "miss %d %d %.1f %.0f %d %d\n", s, c,
			(t1 - t0) * 1000, cpu * 1000 / hz, reqs, odd }' >>"$res"
}
run_misses() {
	# The reference, one past the servers: the same client straight to
	# dsserver, what it, the machine and upstream allow with no server between.
	local client="serve_load"
	[ "$miss_client" != curl ] || client="curl -Z"
	S_NAME+=("$client straight to dsserver") S_PORT+=("$up_port") S_PID+=("$up_pid")
	echo "bench_serve: misses, $nmiss build IDs, ${mconns[*]} connections, $latency ms upstream" >&2
	for ((r = 0; r < runs; r++)); do
		for c in "${mconns[@]}"; do
			for ((k = 0; k <= nservers; k++)); do
				miss_run $(((r + k) % (nservers + 1))) "$c"
			done
		done
	done
}
wanted misses && run_misses

# ------------------------------------------------------- (3) /symbolize

if [ -x /usr/bin/time ]; then
	timer=(/usr/bin/time -f '%e %M %U %S' -o "$work/time")
else
	timer=(python3 -c 'import os, sys, time
t = time.monotonic()
pid = os.fork()
if pid == 0:
	os.execvp(sys.argv[2], sys.argv[2:])
_, st, ru = os.wait4(pid, 0)
open(sys.argv[1], "w").write("%f %d %f %f\n" % (time.monotonic() - t, ru.ru_maxrss, ru.ru_utime, ru.ru_stime))
sys.exit(os.waitstatus_to_exitcode(st))' "$work/time")
fi

# post PORT N OUT: POST /symbolize of the first N frames; prints the
# request's time (curl's time_total, s).
post() {
	local code t
	read -r code t < <(curl -s -H 'Content-Type: text/plain' --data-binary "@$work/frames.$2" \
		-o "$3" -w '%{http_code} %{time_total}\n' "http://127.0.0.1:$1/symbolize")
	[ "$code" = 200 ] || die "POST /symbolize of $2 frames: $code: $(head -c 300 "$3")"
	[ "$(wc -l <"$3")" = "$2" ] || die "POST /symbolize of $2 frames: $(wc -l <"$3") answers"
	echo "$t"
}
# sym TOOL N: one measure, as a "sym" line: wall s, CPU ms, peak RSS KB
# (the node's VmHWM), the output in $work/out.TOOL.N.
sym() {
	local tool=$1 n=$2 out=$work/out.$1.$2 t c0 c1
	case $tool in
	warm)
		c0=$(cpu_ticks "${S_PID[0]}")
		t=$(post "${S_PORT[0]}" "$n" "$out")
		c1=$(cpu_ticks "${S_PID[0]}")
		echo "sym warm $n $t $(((c1 - c0) * 1000 / hz)) $(hwm_kb "${S_PID[0]}")" >>"$res"
		;;
	cold) # a new node: nothing built, nothing saved; the modules' debug
		# files its -F directory (a node does not search /usr/lib/debug)
		rm -rf "$work/cold.cache" "$work/cold.symindex"
		start_node cold -F "$work/symdir" --upstream ''
		c0=$(cpu_ticks "$node_pid")
		t=$(post "$node_port" "$n" "$out")
		c1=$(cpu_ticks "$node_pid")
		echo "sym cold $n $t $(((c1 - c0) * 1000 / hz)) $(hwm_kb "$node_pid")" >>"$res"
		stop "$node_pid"
		;;
	cli | clix) # cli: nothing saved; clix: the saved index `dsostore index` wrote
		rm -rf "$work/cli.symindex"
		DSOSTORE_SYMINDEX_PATH=$work/$tool.symindex "${timer[@]}" \
			"$dsostore" symbolize -f -i -C --output-style JSON <"$work/frames.$n" >"$out" ||
			die "dsostore symbolize failed"
		awk -v n="$n" '{ printf "sym %s %d %s %.0f %d\n", t, n, $1, ($3 + $4) * 1000, $2 }' \
			t="$tool" "$work/time" >>"$res"
		;;
	llvm)
		"${timer[@]}" llvm-symbolizer --output-style=JSON --inlines --debug-file-directory=/usr/lib/debug \
			<"$work/frames.llvm.$n" >"$out" || die "llvm-symbolizer failed"
		awk -v n="$n" '{ printf "sym llvm %d %s %.0f %d\n", n, $1, ($3 + $4) * 1000, $2 }' \
			"$work/time" >>"$res"
		;;
	esac
}

llvm_in='' # how llvm-symbolizer is given the modules
# The frames: addresses drawn uniformly over the bytes of libc's functions
# (gen_symbolize_bench.py realaddrs, the list bench_symbolize.sh caches),
# and python3.11's when its debuginfo is installed, taken in turn.
# Lines "BUILDID ADDR" for the node and `dsostore symbolize`; for
# llvm-symbolizer "BUILDID:HEX ADDR" when it reads them (LLVM 15 on),
# else the debug file's path, which is what it would look up.
run_symbolize() {
	frame_files=()
	for m in "${mods[@]}"; do
		read -r id so dbg <<<"$m"
		dir=$build/bench/sym-libc/$id
		[ "$so" = "$libc_so" ] || dir=$build/bench/sym-serve/$id
		mkdir -p "$dir"
		f=$dir/addrs-$maxf-$seed.txt
		if [ ! -s "$f" ]; then
			python3 "$gen" realaddrs "$so" "$maxf" "$seed" --symtab "$dbg" >"$f.tmp"
			mv "$f.tmp" "$f"
		fi
		awk -v id="$id" '{ print id, $1 }' "$f" >"$work/frames.$id"
		frame_files+=("$work/frames.$id")
	done
	# (never a reader that stops early in a pipe: with pipefail the writer's
	# SIGPIPE would end the bench)
	paste -d '\n' "${frame_files[@]}" | awk -v m="$maxf" 'NF && n < m { print; n++ }' >"$work/frames.all"
	if llvm_probe=$(head -1 "$work/frames.all" | sed 's/^/BUILDID:/' |
		llvm-symbolizer --debug-file-directory=/usr/lib/debug --output-style=JSON) &&
		! grep -q '"Error"' <<<"$llvm_probe"; then
		llvm_in="BUILDID:HEX lines, --debug-file-directory=/usr/lib/debug"
		sed 's/^/BUILDID:/' "$work/frames.all" >"$work/frames.llvm.all"
	else
		llvm_in="the debug file's path per line (llvm-symbolizer $(llvm-symbolizer --version |
			awk '/version/ { print $NF; exit }') reads no BUILDID:)"
		awk 'NR == FNR { p[$1] = $2; next } { print p[$1], $2 }' \
			<(for m in "${mods[@]}"; do read -r id so dbg <<<"$m"; echo "$id $dbg"; done) \
			"$work/frames.all" >"$work/frames.llvm.all"
	fi
	for n in "${frames[@]}"; do
		head -n "$n" "$work/frames.all" >"$work/frames.$n"
		head -n "$n" "$work/frames.llvm.all" >"$work/frames.llvm.$n"
	done

	for m in "${mods[@]}"; do
		read -r id so dbg <<<"$m"
		DSOSTORE_SYMINDEX_PATH=$work/clix.symindex "$dsostore" index "$id" >/dev/null 2>"$work/index.err" ||
			die "dsostore index $id: $(head -1 "$work/index.err")"
	done
	# A node without /symbolize yet (501) leaves its rows out, not the rest.
	tools=(warm cold clix cli llvm)
	head -1 "$work/frames.all" >"$work/frames.probe"
	code=$(curl -s -H 'Content-Type: text/plain' --data-binary "@$work/frames.probe" -o "$work/probe.out" \
		-w '%{http_code}' "http://127.0.0.1:${S_PORT[0]}/symbolize") || code=000
	if [ "$code" = 200 ]; then
		post "${S_PORT[0]}" "${frames[0]}" "$work/out.first" >/dev/null # the node's warm-up
	else
		echo "bench_serve: POST /symbolize answers $code ($(head -c 200 "$work/probe.out")): its rows are left out" >&2
		tools=(clix cli llvm)
		echo "nosym $code" >>"$res"
	fi
	echo "bench_serve: /symbolize, ${frames[*]} frames, $runs run(s); llvm-symbolizer given $llvm_in" >&2
	for ((r = 0; r < runs; r++)); do
		for n in "${frames[@]}"; do
			for ((k = 0; k < ${#tools[@]}; k++)); do
				sym "${tools[(r + k) % ${#tools[@]}]}" "$n"
			done
		done
	done
	for n in "${frames[@]}"; do
		[ -e "$work/out.warm.$n" ] || continue
		cmp -s "$work/out.warm.$n" "$work/out.cold.$n" || die "/symbolize answers otherwise warm and cold ($n frames)"
		python3 "$gen" compare-json "$work/out.llvm.$n" "$work/out.warm.$n" --show 3 >"$work/cmp.$n"
		echo "cmp $n $(head -1 "$work/cmp.$n")" >>"$res"
	done
}
wanted symbolize && run_symbolize

# ------------------------------------------------------------ (4) memory

for ((s = 0; s < nservers; s++)); do
	echo "hwm $s $(hwm_kb "${S_PID[s]}")" >>"$res"
done

# ------------------------------------------------------------- the tables

{
	echo "meta load $load0"
	echo "meta load_end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "meta cpus $(nproc)"
	echo "meta runs $runs"
	echo "meta wrk_s $wrk_s"
	echo "meta files $files_in $corpus_mb $nurls"
	echo "meta miss $nmiss $latency"
	echo "meta budget $budget"
	echo "meta llvm_in ${llvm_in:--}"
	echo "meta modules $(for m in "${mods[@]}"; do read -r id so dbg <<<"$m"; printf '%s ' "$(basename "$so")"; done)"
	for ((s = 0; s < ${#S_NAME[@]}; s++)); do echo "server $s ${S_NAME[s]}"; done
} >>"$res"
status=0
python3 "$src/bench/serve_report.py" "$res" || status=$?
for n in "${frames[@]}"; do
	[ -e "$work/cmp.$n" ] || continue
	[ "$(head -1 "$work/cmp.$n" | cut -d' ' -f1)" = 0 ] && continue
	echo
	echo "first differences of /symbolize from llvm-symbolizer, $n frames:"
	tail -n +2 "$work/cmp.$n"
done
if [ -s "$work/profile.txt" ]; then
	echo
	echo "the node under wrk: perf report --no-children, top entries"
	sed 's/^/  /' "$work/profile.txt"
fi
exit $status
