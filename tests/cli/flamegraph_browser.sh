#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dsostore flamegraph in a real browser.  The program of tests/gen/flameprog
# (call paths of known shape) is recorded with perf record -g; its flame
# graph is opened in Debian's headless Chromium through ChromeDriver (the
# W3C WebDriver protocol, tests/lib/flamegraph_browser.py), and the rendered
# DOM must show what `report --folded` of the same recording implies:
# the frame count, the names (leaf_spin among them, its label drawn), the
# tooltips' counts and shares, the widths; a click on top_a spreads it over
# the whole width with its callees rescaled and hides top_d (its sibling);
# Reset Zoom brings top_d back; Search (the button and its prompt)
# highlights exactly the frames matching ^leaf_ and prints their share.
# The screenshots stay in $DS_BUILD/test-output/flamegraph_browser/ (the
# log says where).  Skipped (77) when perf may not record or Chromium
# cannot start here; chromedriver and Chromium are stopped at the end.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc python3
tl_tmpdir dsfgbrowser
cd "$tmp" || exit 2
export HOME=$tmp/home
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
export DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
tl_perf_or_skip
tl_sanitizer_exitcodes
outdir=${DS_BUILD:-$tmp}/test-output/flamegraph_browser
rm -rf "$outdir"
mkdir -p "$outdir" || exit 2

if ! bash "$DS_SRC/tests/gen/flameprog/build.sh" . 2>build.log; then
	echo "FAIL: cannot build tests/gen/flameprog: $(tail -3 build.log)" >&2
	exit 1
fi
if ! perf record -N -g -e cpu-clock -F 4000 -o fg.data -- ./fg >rec.log 2>&1; then
	echo "FAIL: perf record: $(tail -3 rec.log)" >&2
	exit 1
fi
rc=0
"$DSOSTORE" report --folded --no-fetch --no-progress fg.data -o fg.folded 2>folded.err || rc=$?
[ "$rc" = 0 ] || fail "report --folded: status $rc: $(head -3 folded.err)"
rc=0
"$DSOSTORE" flamegraph --no-fetch --no-progress --title "tests/gen/flameprog" fg.data \
	-o "$outdir/flamegraph.svg" 2>fg.err || rc=$?
[ "$rc" = 0 ] || fail "flamegraph: status $rc: $(head -3 fg.err)"
grep -q -E 'Sanitizer|runtime error' folded.err fg.err && fail "sanitizer: $(cat folded.err fg.err)"
[ "$fails" = 0 ] || tl_finish flamegraph_browser
cp fg.folded "$outdir/"

py=$(tl_python json) || py=python3
rc=0
"$py" "$DS_SRC/tests/lib/flamegraph_browser.py" "$outdir/flamegraph.svg" fg.folded "$outdir" \
	leaf_spin top_a top_d || rc=$?
case $rc in
0) ;;
77) exit 77 ;;
*) fail "the flame graph in Chromium (above)" ;;
esac
echo "the SVG, its stacks and the screenshots: $outdir"
tl_finish flamegraph_browser
