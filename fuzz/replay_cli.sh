#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The perf.data fuzz corpus through the whole CLI, not only the reader:
# every file of CORPUS goes through `dsostore buildid-list`, `report
# --no-fetch` (a quarter of them as --folded, and through flamegraph) and
# `prefetch` (no DEBUGINFOD_URLS: local sources only, no network), so that the sanitizer builds see the tool's own code (the
# session, the sample walk, symbol lookup, the tables) run on hostile input.
#
#   fuzz/replay_cli.sh CORPUS            ($DSOSTORE names the CLI)
#
# It asserts only what any input must give: each run finishes within its
# timeout, and exits 0, or 1 or 2 with a message on stderr; never a signal,
# never a sanitizer report (their exit codes are set to 86 and 87, and
# their words are looked for on stderr).  The options of report and
# buildid-list rotate over the files, so each set sees a third (report's:
# a quarter) of the corpus (the cut and corrupted copies of a seed are next to each other).
# Prefetch takes up to 64 files per process, as it can, and a failing group
# is run again one file at a time to name the file.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

corpus=${1:?usage: replay_cli.sh CORPUS}
: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need timeout
tl_tmpdir dsreplaycli
tl_sanitizer_exitcodes
# Nothing of the user's: no servers, no caches, an empty debug directory
# (the symbolize path is fuzzed by fuzz_symelf; here the DSOs of a
# recording are named from their own symbols, which is cheap).
export HOME=$tmp/home DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache \
	PERF_BUILDID_DIR=$tmp/perfcache
unset DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
mkdir -p "$HOME" "$tmp/nodebug"
# Per run: what a tiny recording costs under ASan, times a lot (a loaded
# machine); the kill comes 5 s later if TERM is not enough.
per_run=${DS_REPLAY_TIMEOUT:-60}
common=(--debug-dir "$tmp/nodebug")

mapfile -t files < <(find "$corpus" -maxdepth 1 -type f | LC_ALL=C sort)
[ ${#files[@]} -gt 0 ] || {
	echo "FAIL: no corpus in $corpus" >&2
	exit 1
}

runs=0
# run WHAT FILE... -- ARGS...: one process; a failure is counted and shown.
run() {
	local what=$1 rc
	shift
	runs=$((runs + 1))
	timeout -k 5 "$per_run" "$DSOSTORE" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		fail "$what: did not finish in ${per_run} s: dsostore $*"
	elif [ $rc -gt 2 ]; then
		fail "$what: exit status $rc: dsostore $*"
		head -30 "$tmp/err" >&2
	elif grep -q 'Sanitizer\|runtime error:' "$tmp/err"; then
		fail "$what: a sanitizer report: dsostore $*"
		head -30 "$tmp/err" >&2
	elif [ $rc != 0 ] && [ ! -s "$tmp/err" ]; then
		fail "$what: exit status $rc and nothing on stderr: dsostore $*"
	else
		return 0
	fi
	return 1
}

report_opts=(
	""
	"--children --inline -n -s comm,dso,sym,srcline"
	"--json --inline --no-children -s sym,srcline --top 5"
	"--folded --count period --annotate kernel,dso --comm-tid"
)
list_opts=("" "--all" "--local")
for i in "${!files[@]}"; do
	f=${files[i]} name=${files[i]##*/}
	# shellcheck disable=SC2206 # the option sets are words
	ro=(${report_opts[i % 4]}) lo=(${list_opts[i % 3]})
	run "$name" buildid-list "${lo[@]}" "$f"
	run "$name" report --no-fetch "${common[@]}" "${ro[@]}" "$f"
	if [ $((i % 4)) = 3 ]; then
		run "$name" flamegraph --no-fetch --no-progress "${common[@]}" -o "$tmp/fg.svg" "$f"
	fi
done

# Prefetch, 64 recordings a process (its limit); --all --kernel: every DSO
# of each, --perf-cache: the install path too (into $tmp).
for ((i = 0; i < ${#files[@]}; i += 64)); do
	group=("${files[@]:i:64}")
	if ! run "prefetch of ${#group[@]} files" prefetch --all --kernel --perf-cache -q \
		"${common[@]}" "${group[@]}"; then
		for f in "${group[@]}"; do
			run "${f##*/}" prefetch --all --kernel --perf-cache -q "${common[@]}" "$f"
		done
	fi
done

tl_finish replay_cli "$runs runs over ${#files[@]} files"
