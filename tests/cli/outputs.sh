#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The files commands write (report --pprof, report --folded -o,
# flamegraph -o; tools/cli_output.c) never destroy an input, and are
# replaced whole or not at all:
#  - an output that is the command's input — named alike, through a
#    symlink, or another hard link of it, or perf.data when the recording
#    is perf's default one (`report --pprof perf.data`) — is refused with
#    exit 2 and a message, the input left byte for byte as it was;
#  - a file that is replaced is replaced by rename: another hard link of
#    the old file still has the old bytes (it was not truncated and
#    rewritten), and a symlink stays a symlink, its target replaced;
#  - a run that fails, or that SIGINT ends (exit 130), leaves the old
#    output as it was and no temporary file in its directory;
#  - something that is not a regular file (/dev/null) is written in place.
# The recording is made by tests/gen/perfgen.py (made-up DSOs: no perf
# needed); what a good output holds is tested elsewhere (pprof.sh,
# folded.sh): here only whether it is whole (gzip -t, the SVG's end tag).
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need python3 gzip cmp mkfifo
tl_tmpdir dsoutputs
cd "$tmp" || exit 2
export HOME=$tmp/home DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$tmp/dcache
mkdir -p "$HOME"
unset PERF_BUILDID_DIR DEBUGINFOD_PROGRESS
tl_sanitizer_exitcodes

python3 - "$DS_SRC/tests/gen" <<'PY' || { echo "FAIL: perfgen" >&2; exit 1; }
import sys
sys.path.insert(0, sys.argv[1])
import perfgen
dsos = perfgen.made_up_dsos(2)
perfgen.synth(dsos, callchain=True).write("perf.data")
PY
cp perf.data orig.data
printf 'main;work;leaf 3\nmain;other 2\n' >stacks.folded
cp stacks.folded orig.folded

RC=0
# ds ARGS...: dsostore ARGS, stdout in out, stderr in err, status in RC.
ds() {
	RC=0
	"$DSOSTORE" "$@" >out 2>err || RC=$?
	grep -q -E 'Sanitizer|runtime error' err && fail "sanitizer report: $(head -3 err)"
	return 0
}
expect_rc() { [ "$RC" = "$1" ] || fail "exit status $RC, expected $1: $(head -3 err)"; }
# The recording and the folded text are what they were.
inputs_intact() {
	cmp -s perf.data orig.data || fail "perf.data was changed"
	cmp -s stacks.folded orig.folded || fail "stacks.folded was changed"
}
# No temporary file of ours (".NAME.XXXXXX") in the directory.
no_tmp() {
	local left
	left=$(find . -maxdepth 1 -name '.*.??????' | head -3)
	[ -z "$left" ] || fail "temporary files left: $left"
}
# Each case from intact inputs (a failure of one leaves the next its own).
restore() {
	cmp -s perf.data orig.data || cp orig.data perf.data
	cmp -s stacks.folded orig.folded || cp orig.folded stacks.folded
}
refused() { # what...: exit 2, one message saying it is the input, nothing changed
	expect_rc 2
	grep -q "refusing to overwrite" err || fail "no message saying why: $(head -3 err)"
	inputs_intact
	no_tmp
}

tl_case "report --pprof perf.data: the default recording is not overwritten"
restore
ds report --no-fetch --pprof perf.data
refused
grep -q -- "-i" err || fail "the message does not say how to name the recording: $(cat err)"
tl_case_end

tl_case "the input named alike, through a symlink, through a hard link"
restore
ln -s perf.data sym.data
ln perf.data hard.data
for o in perf.data sym.data hard.data; do
	ds report --no-fetch --pprof "$o" -i perf.data
	refused
	ds report --no-fetch --pprof "$o" perf.data
	refused
	ds report --no-fetch --folded -o "$o" perf.data
	refused
	ds flamegraph --no-fetch -o "$o" perf.data
	refused
	ds flamegraph --no-fetch -o "$o"
	refused
done
ln -s stacks.folded sym.folded
for o in stacks.folded sym.folded; do
	ds flamegraph -o "$o" stacks.folded
	refused
	ds flamegraph -o "$o" - <stacks.folded
	refused
	ds flamegraph -o stacks.folded "$o"
	refused
done
tl_case_end

# The option takes the next word as its file, as perf's parser does: an
# option there is a forgotten file name, not a file to create.
tl_case "an option where the file goes: refused, no file of that name"
restore
ds report --pprof --no-fetch perf.data
expect_rc 2
grep -q "an option where the output file goes" err || fail "no message saying why: $(head -3 err)"
[ -e ./--no-fetch ] && fail "wrote a file named --no-fetch"
ds flamegraph -o --title perf.data
expect_rc 2
[ -e ./--title ] && fail "wrote a file named --title"
ds flamegraph -o ./-named.svg stacks.folded
expect_rc 0
[ -s ./-named.svg ] || fail "./-named.svg not written"
inputs_intact
no_tmp
tl_case_end

# Each writer once: a new file, whole.
tl_case "new outputs are written whole"
restore
ds report --no-fetch --pprof new.pb.gz perf.data
expect_rc 0
gzip -t new.pb.gz 2>/dev/null || fail "new.pb.gz is not whole gzip"
ds report --no-fetch --folded -o new.folded perf.data
expect_rc 0
[ -s new.folded ] || fail "new.folded is empty"
ds flamegraph -o new.svg stacks.folded
expect_rc 0
[ "$(tail -n 1 new.svg)" = "</svg>" ] || fail "new.svg does not end with </svg>"
inputs_intact
no_tmp
tl_case_end

# An old output with a second hard link: replacing the file (a new inode
# renamed over the name) leaves the link's bytes; writing into it would
# change them.
tl_case "an existing output is replaced by rename, not rewritten in place"
restore
for f in o.pb.gz o.folded o.svg; do
	echo old >"$f"
	ln -f "$f" "$f.keep"
done
ds report --no-fetch --pprof o.pb.gz perf.data
expect_rc 0
ds report --no-fetch --folded -o o.folded perf.data
expect_rc 0
ds flamegraph -o o.svg stacks.folded
expect_rc 0
for f in o.pb.gz o.folded o.svg; do
	[ "$(cat "$f.keep")" = old ] || fail "$f was rewritten in place (its other link changed)"
	cmp -s "$f" "$f.keep" && fail "$f was not written"
done
gzip -t o.pb.gz 2>/dev/null || fail "o.pb.gz is not whole gzip"
no_tmp
tl_case_end

tl_case "a symlink output: the link stays, its target is replaced"
restore
echo old >target.svg
ln -s target.svg link.svg
ds flamegraph -o link.svg stacks.folded
expect_rc 0
[ -L link.svg ] || fail "link.svg is no longer a symlink"
[ "$(tail -n 1 target.svg)" = "</svg>" ] || fail "target.svg was not written"
no_tmp
tl_case_end

tl_case "a failed run leaves the old output, and no temporary file"
restore
echo old >kept.svg
echo old >kept.folded
ds flamegraph -o kept.svg missing.folded
expect_rc 1
ds report --no-fetch --folded -o kept.folded missing.data
expect_rc 1
[ "$(cat kept.svg)" = old ] || fail "kept.svg changed by a failed run"
[ "$(cat kept.folded)" = old ] || fail "kept.folded changed by a failed run"
no_tmp
tl_case_end

tl_case "not a regular file: written in place (/dev/null)"
restore
ds flamegraph -o /dev/null stacks.folded
expect_rc 0
tl_case_end

# flamegraph reading stacks from a FIFO nobody writes to: blocked in its
# read with the output's temporary file open (polled for, no fixed sleep).
tl_case "SIGINT: exit 130, the old output as it was, no temporary file"
restore
echo old >int.svg
mkfifo fifo
exec 7<>fifo # held open for writing: the reader never sees EOF
# (env: a background job of a shell without job control starts with SIGINT
# ignored, and keeps it so.)
env --default-signal=INT "$DSOSTORE" flamegraph -o int.svg - <fifo >out 2>err &
pid=$!
for _ in $(seq 200); do
	[ -n "$(find . -maxdepth 1 -name '.int.svg.??????')" ] && break
	sleep 0.05
done
[ -n "$(find . -maxdepth 1 -name '.int.svg.??????')" ] || fail "no temporary output appeared"
kill -INT $pid
RC=0
wait $pid || RC=$?
exec 7>&-
expect_rc 130
[ "$(cat int.svg)" = old ] || fail "int.svg changed by an interrupted run"
no_tmp
tl_case_end

tl_finish outputs
