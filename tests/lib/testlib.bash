# SPDX-License-Identifier: MIT
# Shared preambles of the shell tests, sourced (never run: it is not a
# *.sh, so tests/tests.cmake makes no test of it):
#
#	. "$DS_SRC/tests/lib/testlib.bash"
#
# Sourcing it defines functions and `fails=0` plus fail(); it runs nothing
# else.  Exit 77 is "skipped" (SKIP_RETURN_CODE).  Works under
# `set -euo pipefail` as well as under plain `set -u`.

fails=0
CASE=
CASE_FAILED=0
case_fails=0

# fail MESSAGE...: report a failed check and count it in $fails; inside a
# case (tl_case), the case fails too.
fail() {
	if [ -n "$CASE" ]; then
		echo "  FAIL [$CASE]: $*" >&2
		CASE_FAILED=1
	else
		echo "FAIL: $*" >&2
	fi
	fails=$((fails + 1))
}

# tl_case NAME: the checks that follow are case NAME's.
tl_case() {
	CASE=$1
	CASE_FAILED=0
}

# tl_case_end [NOTE]: "ok   NAME NOTE", or "FAIL NAME NOTE" counted in
# $case_fails and status 1 (for the caller to show more).
tl_case_end() {
	local name=$CASE note=${1:+ $1}

	CASE=
	if [ "$CASE_FAILED" = 0 ]; then
		echo "ok   $name$note"
		return 0
	fi
	echo "FAIL $name$note"
	case_fails=$((case_fails + 1))
	return 1
}

# tl_finish NAME [MESSAGE [CMD ARGS...]]: the last line of a test.  With
# failures: "NAME: N failure(s)" on stderr, then CMD ARGS (more detail,
# if given), and exit 1; else "NAME: MESSAGE" ("ok" by default).
tl_finish() {
	local name=$1 ok=${2:-ok}

	if [ "$fails" -ne 0 ]; then
		echo "$name: $fails failure(s)" >&2
		if [ $# -gt 2 ]; then
			"${@:3}" || true
		fi
		exit 1
	fi
	echo "$name: $ok"
}

# tl_split_debuginfo FILE: FILE's debuginfo into FILE.debug, FILE keeps
# its code and a .gnu_debuglink to it.  Status of objcopy.
tl_split_debuginfo() {
	objcopy --only-keep-debug "$1" "$1.debug" &&
		objcopy --strip-debug --add-gnu-debuglink="$1.debug" "$1"
}

# tl_vmlinux OUT BUILD-ID [SOURCE]: a synthetic vmlinux: SOURCE (default
# k.c, written here when absent: middle with an inlined deep, do_sys_thing,
# _start) built with gcc -g -O2 as kernel code, linked at
# 0xffffffff81000000 (_text, _stext, _etext; k.lds), with that build ID.
# Status of gcc; its messages in gcc.err.
tl_vmlinux() {
	local src=${3:-k.c}
	[ -e k.c ] || cat >k.c <<'EOF'
static int counter;
static inline __attribute__((always_inline)) int deep(int x)
{
	counter += x;
	return counter * 3;
}
__attribute__((noinline)) int middle(int x)
{
	int r = deep(x + 1);

	return r + deep(r);
}
__attribute__((noinline)) int do_sys_thing(int x)
{
	return middle(x) - 1;
}
void _start(void)
{
	do_sys_thing(2);
	for (;;)
		;
}
EOF
	[ -e k.lds ] || cat >k.lds <<'EOF'
SECTIONS
{
	. = 0xffffffff81000000;
	_text = .;
	.text : { _stext = .; *(.text .text.*) _etext = .; }
	.notes : { *(.note.gnu.build-id) }
	/DISCARD/ : { *(.note.*) }
	.bss : { *(.bss .bss.*) }
}
EOF
	gcc -g -O2 -ffreestanding -fno-pie -no-pie -nostdlib -mcmodel=kernel \
		-fno-asynchronous-unwind-tables -Wl,-T,k.lds -Wl,--build-id=0x$2 -o "$1" "$src" \
		2>>gcc.err
}

# tl_kmod OUT BUILD-ID: a synthetic kernel module kmodx, ET_REL with DWARF
# (gcc -c -g -O2 of m.c, ld -r): x_read (with an inlined deep) and x_write
# in .text, x_init in .init.text.  Status of the build; messages in gcc.err.
tl_kmod() {
	cat >m.c <<'EOF'
static int counter;
static inline __attribute__((always_inline)) int deep(int x)
{
	counter += x;
	return counter * 3;
}
__attribute__((noinline)) int x_read(int x)
{
	int r = deep(x + 1);

	return r + deep(r);
}
__attribute__((noinline)) int x_write(int x)
{
	return x_read(x) - 1;
}
__attribute__((section(".init.text"), noinline)) int x_init(void)
{
	return x_write(2);
}
EOF
	gcc -c -g -O2 -fno-pie -mcmodel=kernel -fno-asynchronous-unwind-tables m.c -o m.o \
		2>>gcc.err && ld -r --build-id=0x$2 -o "$1" m.o 2>>gcc.err
}

# tl_build_id FILE: its GNU build ID as eu-readelf reads it ("" if none).
tl_build_id() {
	eu-readelf -n "$1" 2>/dev/null | awk '/Build ID:/ {print $3; exit}'
}

# tl_buildid_copies PROG TEMPLATE OUTDIR HEX...: a copy of PROG per HEX,
# OUTDIR/HEX, with HEX written over TEMPLATE, PROG's build ID (link it
# with -Wl,--build-id=0xTEMPLATE), which must occur once in the file:
# many build IDs from one link.  Status of python3.
tl_buildid_copies() {
	python3 - "$@" <<'EOF'
import sys
prog, tmpl, out, ids = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[3], sys.argv[4:]
data = open(prog, "rb").read()
assert data.count(tmpl) == 1, "the template build ID is not there exactly once"
for h in ids:
    open(out + "/" + h, "wb").write(data.replace(tmpl, bytes.fromhex(h)))
EOF
}

# tl_client_env SECONDS: the debuginfod client's environment for the fault
# tests: HOME in $tmp (tl_tmpdir first), TIMEOUT=SECONDS exported as
# DEBUGINFOD_TIMEOUT (a server must send 100 KiB within it; connecting is
# capped by it too), two retries of a transient failure (backoff 100 + 200
# ms), no size, time or header settings of the caller's, nothing verbose.
tl_client_env() {
	export HOME=$tmp/home
	mkdir -p "$HOME"
	TIMEOUT=$1
	export DEBUGINFOD_TIMEOUT=$TIMEOUT DEBUGINFOD_RETRY_LIMIT=2
	unset DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME DEBUGINFOD_HEADERS_FILE DEBUGINFOD_PROGRESS \
		DEBUGINFOD_VERBOSE VERBOSE
}

# tl_need TOOL...: skip (77) unless every TOOL is on PATH.
tl_need() {
	local tool

	for tool; do
		if ! command -v "$tool" >/dev/null; then
			echo "SKIP: $tool is not installed" >&2
			exit 77
		fi
	done
}

# tl_peer NAME: prints the path of peer NAME (perf-6.12,
# debuginfod-find-0.192, debuginfod-0.192, eu-stack-0.192: newer peers
# than the system's, which scripts/peers unpacks into $DS_PEERS, default
# $DS_CORPUS/peers, else build-corpus/peers in the source tree); skips
# (77), saying how to get it, when it is not there.
tl_peer() {
	local w

	w=$(tl_peer_or_none "$1")
	if [ -z "$w" ]; then
		echo "SKIP: no $1 in ${DS_PEERS:-${DS_CORPUS:-$DS_SRC/build-corpus}/peers}/bin (scripts/peers unpacks it there)" >&2
		exit 77
	fi
	echo "$w"
}

# tl_peer_or_none NAME: the path of peer NAME as tl_peer finds it, or
# nothing (status 0 either way): for a test that compares with it too
# when it is there.
tl_peer_or_none() {
	local w=${DS_PEERS:-${DS_CORPUS:-$DS_SRC/build-corpus}/peers}/bin/$1

	[ ! -x "$w" ] || echo "$w"
}

# tl_need_dsserver: sets DSSERVER (the environment's, else
# $DS_BUILD/dsserver) and fails (exit 1: the build makes it) without it.
tl_need_dsserver() {
	DSSERVER=${DSSERVER:-${DS_BUILD:-build}/dsserver}
	if [ ! -x "$DSSERVER" ]; then
		echo "FAIL: no dsserver at $DSSERVER" >&2
		exit 1
	fi
}

# tl_no_proxy: no proxy between the clients and the servers on 127.0.0.1.
tl_no_proxy() {
	unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
}

# tl_sanitizer_exitcodes: a sanitizer's report must not pass for a clean
# exit (nor for an expected "exit 1"): ASan exits 86, UBSan 87.
tl_sanitizer_exitcodes() {
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87
}

# tl_tmpdir PREFIX: makes the scratch directory, sets tmp to its canonical
# path, and pids=() (servers tl_cleanup stops: append to it).  On exit,
# tl_cleanup runs.  Call it from the script, not from a subshell.
tl_tmpdir() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 2
	tmp=$(realpath "$tmp") || exit 2
	pids=()
	tl_also_rm=()
	trap tl_cleanup EXIT
}

# tl_cleanup: TERMs every process in pids, waits for all children, and
# removes $tmp and whatever tl_also_rm names, unless DS_KEEP_TMP is set.
# Never fails: it runs at exit, and must not change the test's status.
tl_cleanup() {
	local p

	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	if [ -z "${DS_KEEP_TMP:-}" ]; then
		rm -rf "$tmp" "${tl_also_rm[@]}" || true
	fi
}

# tl_spin_main NAME: on stdout, the main() of a perf workload that calls
# NAME_spin(h) for 0.3 s (now(): seconds, and NAME_spin must be declared
# before it), printing the result so that nothing is optimized away.
tl_spin_main() {
	cat <<EOF
int main(void)
{
	double end = now() + 0.3;
	unsigned long h = 1;

	while (now() < end)
		h = $1_spin(h);
	printf("%lx\\n", h);
	return 0;
}
EOF
}

# tl_perf_or_skip [PERF]: skip (77), showing perf's words, unless this
# user may `PERF record -e cpu-clock` (perf_event_paranoid, containers;
# PERF: perf by default, or a peer's wrapper).  -N: no write to the
# build-id cache.
tl_perf_or_skip() {
	if ! "${1:-perf}" record -N -e cpu-clock -o "$tmp/probe.data" -- true >"$tmp/probe.log" 2>&1; then
		echo "SKIP: perf record -e cpu-clock is not permitted here:" >&2
		sed 's/^/  /' "$tmp/probe.log" >&2
		exit 77
	fi
}

# tl_netns_reexec [--skip WHY | --root-only] SCRIPT ARGS...
# Outside a namespace of ours (DS_IN_NETNS unset): runs `bash SCRIPT ARGS`
# again, with DS_IN_NETNS=1, in a new network namespace and does not
# return: `unshare -n` as root, else `unshare -rn` (a user namespace too,
# where we may still bring lo up); --root-only: only `unshare -n`, only as
# root.  Inside one (DS_IN_NETNS=1): brings lo up.  Returns 0 inside with
# lo up, 1 otherwise; with --skip, skips (77) instead of returning 1, with
# "SKIP: WHY" when no namespace could be made.
tl_netns_reexec() {
	local skip='' how
	local -a ways=("unshare -n" "unshare -rn")

	case $1 in
	--skip)
		skip=$2
		shift 2
		;;
	--root-only)
		ways=()
		[ "$(id -u)" != 0 ] || ways=("unshare -n")
		shift
		;;
	esac
	if [ "${DS_IN_NETNS:-}" != 1 ]; then
		for how in "${ways[@]}"; do
			if $how true 2>/dev/null; then
				exec $how env DS_IN_NETNS=1 bash "$@"
			fi
		done
		if [ -n "$skip" ]; then
			echo "SKIP: $skip" >&2
			exit 77
		fi
		return 1
	fi
	if ip link set lo up 2>/dev/null; then
		return 0
	fi
	if [ -n "$skip" ]; then
		echo "SKIP: cannot bring up lo in the network namespace" >&2
		exit 77
	fi
	return 1
}

# tl_metrics PORT: the /metrics page of the server on 127.0.0.1:PORT.
tl_metrics() {
	curl -s --max-time 5 "http://127.0.0.1:$1/metrics"
}

# tl_metric PORT NAME-WITH-LABELS: its value, 0 if absent.
tl_metric() {
	tl_metrics "$1" | awk -v k="$2" '$1 == k {v = $2} END {print v + 0}'
}

# tl_wait_ready PORT [PID]: waits up to 15 s (less if PID dies) until the
# debuginfod on PORT (or dsserver, which answers alike) is ready: the
# traversal is done and no file waits for or is in a scanner (the scan
# gauges are absent when nothing was ever queued: an empty dir).
tl_wait_ready() {
	local port=$1 pid=${2:-} m i

	for ((i = 0; i < 150; i++)); do
		m=$(tl_metrics "$port") || m=
		if awk '$1 == "ready" && $2 == 1 {r = 1}
			$1 == "thread_work_total{role=\"traverse\"}" && $2 >= 1 {t = 1}
			$1 == "thread_work_pending{role=\"scan\"}" && $2 != 0 {busy = 1}
			$1 == "thread_busy{role=\"scan\"}" && $2 != 0 {busy = 1}
			END {exit !(r && t && !busy)}' <<<"$m"; then
			return 0
		fi
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			return 1
		fi
		sleep 0.1
	done
	return 1
}

# tl_start_debuginfod PORT DIR [UPSTREAM-URLS]: the real elfutils
# debuginfod serving DIR on PORT (every address: run it in a namespace,
# see tl_netns_reexec), federating to UPSTREAM-URLS if given, its cache
# $tmp/srvcache-PORT, its log $tmp/server-PORT.log; added to pids.  The
# program is $TL_DEBUGINFOD when set (another elfutils' debuginfod, as
# bench/bench_serve.sh measures), else debuginfod on PATH.
# Returns once it is ready (tl_wait_ready); 1, with the log's tail on
# stderr, if it is not.
tl_start_debuginfod() {
	local port=$1 dir=$2 up=${3:-}

	env -u DEBUGINFOD_URLS ${up:+DEBUGINFOD_URLS=$up} DEBUGINFOD_CACHE_PATH="$tmp/srvcache-$port" \
		"${TL_DEBUGINFOD:-debuginfod}" -F -d :memory: -p "$port" -t0 -g0 "$dir" >"$tmp/server-$port.log" 2>&1 &
	pids+=($!)
	tl_wait_ready "$port" "${pids[-1]}" && return 0
	echo "debuginfod on port $port did not get ready; its log:" >&2
	tail -20 "$tmp/server-$port.log" >&2
	return 1
}

# tl_start_dsserver VAR NAME DSSERVER-ARGS...: tests/server's dsserver
# (tl_need_dsserver first) with --die-with-parent and ARGS, its request
# log $tmp/NAME.log, stdout and stderr $tmp/NAME.err; added to pids.
# Once it has written its port file ($tmp/NAME.port, when ready), sets
# VAR to the port.  Returns 1, saying why on stderr, if it does not
# within 10 s.  (Its locals are _tl_*, so that VAR is the caller's.)
tl_start_dsserver() {
	local _tl_var=$1 _tl_name=$2 _tl_port=''

	shift 2
	rm -f "$tmp/$_tl_name.port"
	"$DSSERVER" --port-file "$tmp/$_tl_name.port" --log "$tmp/$_tl_name.log" --die-with-parent \
		"$@" >"$tmp/$_tl_name.err" 2>&1 &
	pids+=($!)
	if ! tl_wait_port_file _tl_port "$tmp/$_tl_name.port"; then
		echo "FAIL: dsserver $_tl_name did not start: $(cat "$tmp/$_tl_name.err")" >&2
		return 1
	fi
	printf -v "$_tl_var" '%s' "$_tl_port"
}

# tl_wait_port_file VAR FILE [SECONDS]: waits up to SECONDS (10), less if
# the server last added to pids dies, for the port it writes into FILE (a
# --port-file), and sets VAR to it; 1 if it does not come.  (Locals _tl_*:
# VAR is the caller's.)
tl_wait_port_file() {
	local _tl_i _tl_p=''

	for ((_tl_i = 0; _tl_i < ${3:-10} * 20; _tl_i++)); do
		[ ! -s "$2" ] || break
		kill -0 "${pids[-1]}" 2>/dev/null || break
		sleep 0.05
	done
	_tl_p=$(cat "$2" 2>/dev/null) || _tl_p=''
	[ -n "$_tl_p" ] || return 1
	printf -v "$1" '%s' "$_tl_p"
}

# tl_cached WANT PATH: whether PATH (a node's cache entry) holds WANT's
# bytes within 10 s.  A node answers a small download from memory, before
# its file is written, fsync()ed and renamed into the cache: a client can
# have the bytes before the cache does.
tl_cached() {
	local _tl_i

	for ((_tl_i = 0; _tl_i < 200; _tl_i++)); do
		! cmp -s "$1" "$2" || return 0
		sleep 0.05
	done
	return 1
}

# tl_start_serve VAR NAME PORT SERVE-ARGS...: `$DSOSTORE serve -v -p PORT`
# (0: the kernel picks one) with ARGS, its stderr (with -v, a line per
# request) in $tmp/NAME.err; added to pids.  Once it has written its port
# file ($tmp/NAME.port: it does when it listens, its -F directories
# walked), sets VAR to the port.  Returns 1, saying why on stderr, if it
# has not within 30 s (sanitized builds start slowly).
tl_start_serve() {
	local _tl_var=$1 _tl_name=$2 _tl_port=$3

	shift 3
	rm -f "$tmp/$_tl_name.port"
	"$DSOSTORE" serve -v -p "$_tl_port" --port-file "$tmp/$_tl_name.port" "$@" \
		>"$tmp/$_tl_name.err" 2>&1 &
	pids+=($!)
	if ! tl_wait_port_file _tl_port "$tmp/$_tl_name.port" 30; then
		echo "FAIL: dsostore serve $_tl_name did not get ready; its log:" >&2
		tail -20 "$tmp/$_tl_name.err" >&2
		return 1
	fi
	printf -v "$_tl_var" '%s' "$_tl_port"
}

# tl_stop PID SECONDS: SIGTERM to PID (a child of this shell, taken out of
# pids), then waits for it at most SECONDS; its exit status, or 124 (and a
# SIGKILL) if it did not exit in time.
tl_stop() {
	local pid=$1 i rc=0 p
	local -a keep=()

	for p in "${pids[@]}"; do
		[ "$p" = "$pid" ] || keep+=("$p")
	done
	pids=("${keep[@]}")
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		return 124
	fi
	wait "$pid" || rc=$?
	return "$rc"
}

# tl_corpus NAME: the directory of test corpus NAME, made by the recipe
# tests/corpus/NAME.bash (run as `bash RECIPE DIR`, DIR empty and its own)
# the first time any test asks for it, and reused after that: by the other
# tests of the run and by the sanitizer passes, since corpora compiled from
# third-party sources do not depend on our build.  They live in $DS_CORPUS
# (default: build-corpus/ in the source tree).  A recipe is run again when
# it or the compilers change (recipes run alone, without this file: an
# edit here rebuilds nothing).  Concurrent askers wait on a lock.  Status 77 (print nothing) if the recipe exits 77 (a tool missing),
# 1 if it fails (its log is printed).
tl_corpus() {
	local name=$1 root=${DS_CORPUS:-$DS_SRC/build-corpus}
	local recipe=$DS_SRC/tests/corpus/$name.bash dir key rc=0

	mkdir -p "$root"
	dir=$root/$name
	key=$({ cat "$recipe"; gcc --version; clang --version; } 2>&1 |
		cksum | cut -d' ' -f1)
	(
		flock 9
		if [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$key" ]; then
			exit 0
		fi
		rm -rf "$dir" "$dir.log"
		mkdir -p "$dir"
		bash "$recipe" "$dir" >"$dir.log" 2>&1 || exit $?
		echo "$key" >"$dir/.stamp"
	) 9>"$root/.$name.lock" || rc=$?
	if [ "$rc" = 77 ]; then
		return 77
	elif [ "$rc" != 0 ]; then
		echo "corpus $name: recipe failed (status $rc):" >&2
		tail -n 40 "$dir.log" >&2 || true
		return 1
	fi
	echo "$dir"
}

# tl_python MODULE: print a python3 that can import MODULE, Debian's
# /usr/bin/python3 first (the setup installs its modules, e.g.
# python3-xxhash; a python3 earlier in PATH, such as pyenv's, lacks
# them); status 1 if none can.
tl_python() {
	local p

	for p in /usr/bin/python3 python3; do
		if "$p" -c "import $1" 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# tl_prefetch NAME ARGS...: `$DSOSTORE prefetch --no-progress ARGS...`,
# stdout in NAME.out, stderr in NAME.err, the exit status in $rc; a
# sanitizer report on stderr is a failure.
tl_prefetch() {
	local name=$1
	shift
	rc=0
	"$DSOSTORE" prefetch --no-progress "$@" >"$name.out" 2>"$name.err" || rc=$?
	if grep -q -E 'Sanitizer|runtime error' "$name.err"; then
		fail "$name: sanitizer report: $(head -5 "$name.err")"
	fi
}

# tl_summary_field NAME LABEL: the number after LABEL in NAME.out's
# summary (prefetch's "  LABEL   N" lines).
tl_summary_field() {
	awk -v l="$2" 'index($0, "  " l " ") == 1 {
		sub("^  " l " +", ""); print $1 + 0; exit}' "$1.out"
}

# tl_report_same DATA NAME OPTIONS...: one case, NAME: `dsostore report`
# of recording DATA is `perf report --stdio` of it with the same options,
# line for line.  The caller defines norm (a filter of both tables) and
# unplt OURS PERF (makes the two files comparable where PLT stubs are
# named differently by design); NAME.ours.text keeps our table as printed.
tl_report_same() {
	local data=$1 name=$2 rc

	shift 2
	tl_case "$name"
	perf report -i "$data" --stdio "$@" 2>"$name.perf.err" | norm >"$name.perf"
	"$DSOSTORE" report --no-fetch -i "$data" "$@" 2>"$name.err" | norm >"$name.ours"
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] || fail "exit status $rc: $(head -3 "$name.err")"
	cp "$name.ours" "$name.ours.text"
	unplt "$name.ours" "$name.perf"
	if [ "$CASE_FAILED" != 0 ]; then
		:
	elif ! grep -q '^# Samples' "$name.perf"; then
		fail "perf printed no table: $(head -3 "$name.perf.err")"
	elif ! cmp -s "$name.perf" "$name.ours"; then
		fail "not perf's table:"
		diff "$name.perf" "$name.ours" | head -20 >&2
	fi
	[ -z "${TL_PERF612:-}" ] || tl_report_612 "$data" "$name" "$@"
	tl_case_end
}

# tl_squeezed FILE: its lines with runs of blanks as one space, none at
# either end, sorted.
tl_squeezed() {
	tr -s ' \t' ' ' <"$1" | sed 's/^ //; s/ $//' | sort
}

# tl_report_612 DATA NAME OPTIONS... (in tl_report_same's case, when the
# test set TL_PERF612 to perf 6.12: `TL_PERF612=$(tl_peer_or_none
# perf-6.12)`): perf 6.12's table of the same recording, NAME.perf612, made
# comparable as perf 6.1's was.  Where it is perf 6.1's, ours must be it;
# where the two perfs differ (docs/oracles.md, "perf 6.1 and perf 6.12"),
# every row both print alike (spaces squeezed: 6.12 sizes some columns
# otherwise) must be in ours, and the case's note says how many lines
# differ (perf612_differs counts the cases).
tl_report_612() {
	local data=$1 name=$2 n

	shift 2
	"$TL_PERF612" report -i "$data" --stdio "$@" 2>"$name.perf612.err" | norm >"$name.perf612"
	cp "$name.ours.text" "$name.ours612"
	unplt "$name.ours612" "$name.perf612"
	if ! grep -q '^# Samples' "$name.perf612"; then
		fail "perf 6.12 printed no table: $(head -3 "$name.perf612.err")"
	elif cmp -s "$name.perf612" "$name.perf"; then
		cmp -s "$name.perf612" "$name.ours612" || {
			fail "not perf 6.12's table (perf 6.1's and 6.12's are the same):"
			diff "$name.perf612" "$name.ours612" | head -20 >&2
		}
	else
		comm -12 <(tl_squeezed "$name.perf") <(tl_squeezed "$name.perf612") >"$name.both"
		comm -23 "$name.both" <(tl_squeezed "$name.ours612") >"$name.both.missing"
		[ ! -s "$name.both.missing" ] ||
			fail "rows perf 6.1 and 6.12 print alike are not ours: $(head -5 "$name.both.missing")"
		n=$(diff <(tl_squeezed "$name.perf") <(tl_squeezed "$name.perf612") | grep -c '^[<>]')
		perf612_differs=$((${perf612_differs:-0} + 1))
		echo "     (perf 6.12's table is not 6.1's: $n lines differ; the $(wc -l <"$name.both") alike are ours)"
	fi
}
