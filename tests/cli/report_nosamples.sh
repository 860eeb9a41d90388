#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Recordings with no sample at all (report once ran qsort(NULL, 0)
# on them).  perf report is the oracle: on such a file it prints no table,
# says "The FILE data has no samples!" on stderr and exits 0; `dsostore
# report` must do the same, in text and JSON (an empty "events" list), and
# buildid-list must print what `perf buildid-list -i` prints.
#
# The recordings: one made by tests/gen/perfgen.py (a process mapping two
# DSOs, neither sampled, both in the build-ID table), in file and pipe
# mode, so the test runs wherever perf is installed; and, where perf record
# is permitted, perf's own: `true` with a sample period of 1 s of CPU time
# (-c 1000000000), which it exits long before.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf python3
tl_tmpdir dsnosamples
cd "$tmp" || exit 2
export HOME=$tmp/home DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
tl_sanitizer_exitcodes

files=()
if python3 - "$DS_SRC/tests/gen" <<'PY'; then
import sys
sys.path.insert(0, sys.argv[1])
import perfgen
dsos = perfgen.made_up_dsos(2)
for d in dsos:
    d.samples = 0
rec = perfgen.synth(dsos, where="table-all")
rec.write("gen.data")
rec.write("genpipe.data", pipe=True)
PY
	files+=(gen.data genpipe.data)
else
	fail "perfgen.py could not write the recordings"
fi
if perf record -N -e cpu-clock -c 1000000000 -o rec.data -- true >rec.log 2>&1; then
	files+=(rec.data)
else
	echo "note: perf record is not permitted here; perfgen's recordings only" >&2
fi

for f in "${files[@]}"; do
	tl_case "$f"
	perf report --stdio -i "$f" >"$f.perf.out" 2>"$f.perf.err"
	prc=$?
	"$DSOSTORE" report --no-fetch -i "$f" >"$f.out" 2>"$f.err"
	rc=$?
	# perf's words: the line after "Error:" (ui__error on stdio).
	want=$(grep -m1 'has no samples' "$f.perf.err")
	[ -n "$want" ] || fail "perf did not say 'no samples' (the oracle changed?): $(head -3 "$f.perf.err")"
	[ "$want" = "The $f data has no samples!" ] ||
		fail "perf's sentence is not the one expected: $want"
	[ $rc = "$prc" ] || fail "exit status $rc, perf's $prc"
	grep -qxF "dsostore: $want" "$f.err" ||
		fail "stderr is not perf's sentence: $(head -3 "$f.err")"
	[ "$(wc -l <"$f.err")" = 1 ] || fail "more than one line on stderr: $(cat "$f.err")"
	# No table: every line of stdout is a comment, as perf's; no Samples
	# header, no row.
	if grep -qv '^#' "$f.out" || grep -q '^# Samples:' "$f.out"; then
		fail "a table for a recording without samples: $(cat "$f.out")"
	fi
	if grep -qv '^#' "$f.perf.out"; then
		fail "perf printed rows (the oracle changed?): $(cat "$f.perf.out")"
	fi
	"$DSOSTORE" report --no-fetch --json -i "$f" >"$f.json" 2>"$f.jerr"
	rc=$?
	[ $rc = 0 ] || fail "--json: exit status $rc: $(cat "$f.jerr")"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["events"] == [], d["events"]
assert d["lost"] == 0, d["lost"]' "$f.json" 2>"$f.jcheck" ||
		fail "--json: not an empty events list: $(tail -1 "$f.jcheck"): $(head -c 300 "$f.json")"
	# buildid-list: perf's lines (the table, sampled or not, in file mode;
	# in pipe mode the sampled DSOs: none).
	perf buildid-list -i "$f" 2>/dev/null | sort >"$f.perf.bids"
	"$DSOSTORE" buildid-list "$f" 2>"$f.berr" | sort >"$f.bids"
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] || fail "buildid-list: exit status $rc: $(cat "$f.berr")"
	cmp -s "$f.perf.bids" "$f.bids" ||
		fail "buildid-list differs from perf's: $(diff "$f.perf.bids" "$f.bids" | head -5)"
	tl_case_end
done

tl_finish report_nosamples "${#files[@]} recordings"
