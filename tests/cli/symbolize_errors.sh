#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Errors a user can act on, against binutils and first principles:
#  - symbolize -e on a missing file, a directory, a file that is no ELF:
#    binutils addr2line prints nothing on stdout and exits 1 for each
#    (checked here, on this machine); so must we, saying which it is;
#  - a stream line whose key is neither a build ID nor a file ("zz 0x10"),
#    a directory, a non-ELF file: "??"/"??:0" for each and a message
#    saying so, the good line between them answered as addr2line does,
#    exit 1;
#  - flamegraph on a directory: says it is one (not "Input/output error");
#  - reasons in JSON: a stripped shared library, its debuginfo nowhere
#    (no servers): its exported function named from .dynsym as nm -D
#    names it, with "Reason":"no debuginfo"; the unstripped original: no
#    Reason where it names, "no symbol at this address" at 0 (the ELF
#    header: nm has nothing there); in text, the stripped library's
#    addresses that are not named make one message on stderr saying its
#    debuginfo was not found.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need gcc strip nm addr2line python3
tl_tmpdir dssymerr
cd "$tmp" || exit 2
export HOME=$tmp/home PERF_BUILDID_DIR= DEBUGINFOD_URLS=
mkdir -p "$HOME" adir nodebug
tl_sanitizer_exitcodes

printf 'plain text, no ELF\n' >notelf
cat >lib.c <<'EOF'
__attribute__((noinline)) int r_exported(int x) { return x * 9 + 4; }
int r_other(int x) { return r_exported(x) + 1; }
EOF
gcc -O1 -g -shared -fPIC -o libr.so lib.c || exit 2
mkdir -p stripped && strip -o stripped/libr.so libr.so || exit 2
ev=$(nm -D --defined-only stripped/libr.so | awk '$3 == "r_exported" {print $1}')
[ -n "$ev" ] || fail "nm -D: no r_exported in the stripped library"
ea=$(printf '0x%x' $((16#$ev + 1)))

tl_case "symbolize -e: a missing file, a directory, no ELF"
for f in "$tmp/missing" "$tmp/adir" "$tmp/notelf"; do
	addr2line -e "$f" 0x10 >a2l.out 2>a2l.err
	arc=$?
	"$DSOSTORE" symbolize -e "$f" 0x10 >ds.out 2>ds.err
	rc=$?
	[ "$arc" = 1 ] && [ ! -s a2l.out ] ||
		fail "$f: binutils addr2line exits $arc with '$(cat a2l.out)': the oracle changed"
	[ "$rc" = "$arc" ] || fail "$f: exit status $rc, addr2line's $arc"
	[ ! -s ds.out ] || fail "$f: stdout '$(head -2 ds.out)', addr2line prints nothing"
	case $f in
	*missing) want="dsostore: $f: no such file" ;;
	*adir) want="dsostore: $f: a directory, not an ELF file" ;;
	*) want="dsostore: $f: not an ELF file" ;;
	esac
	[ "$(cat ds.err)" = "$want" ] || fail "$f: stderr '$(cat ds.err)', want '$want'"
done
tl_case_end

tl_case "stream lines naming no build ID and no file"
printf '%s\n' "zz 0x10" "$tmp/stripped/libr.so $ea" "$tmp/adir 0x10" "$tmp/notelf 0x10" >s.in
{
	printf '??\n??:0\n'
	# (.dynsym names the function; addr2line reads it as we do)
	addr2line -f -e stripped/libr.so "$ea"
	printf '??\n??:0\n??\n??:0\n'
} >s.want
"$DSOSTORE" symbolize -f <s.in >s.out 2>s.err
rc=$?
[ "$rc" = 1 ] || fail "exit status $rc, want 1 (bad lines)"
diff s.want s.out >s.diff || fail "answers: $(head -8 s.diff)"
printf '%s\n' "dsostore: zz: not a build ID (hex), and no such file" \
	"dsostore: $tmp/adir: a directory, not an ELF file" \
	"dsostore: $tmp/notelf: not an ELF file" >s.err.want
diff s.err.want s.err >s.diff || fail "stderr: $(head -8 s.diff)"
tl_case_end

tl_case "flamegraph on a directory"
"$DSOSTORE" flamegraph -o fg.svg "$tmp/adir" >fg.out 2>fg.err
rc=$?
[ "$rc" = 1 ] || fail "exit status $rc"
[ "$(cat fg.err)" = "dsostore: $tmp/adir: a directory, not a perf.data or folded stacks" ] ||
	fail "stderr: $(cat fg.err)"
tl_case_end

tl_case "reasons in JSON: no debuginfo, no symbol"
"$DSOSTORE" symbolize --debug-dir "$tmp/nodebug" --output-style=JSON -e stripped/libr.so \
	"$ea" >j1.out 2>j1.err || fail "stripped: exit $?: $(cat j1.err)"
"$DSOSTORE" symbolize --debug-dir "$tmp/nodebug" --output-style=JSON -e libr.so "$ea" 0 \
	>j2.out 2>j2.err || fail "unstripped: exit $?: $(cat j2.err)"
python3 - j1.out j2.out <<'PY' >j.check 2>&1 || fail "$(tail -2 j.check)"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])]
u = [json.loads(l) for l in open(sys.argv[2])]
assert len(s) == 1 and len(u) == 2, (s, u)
assert s[0]["Symbol"][0]["FunctionName"] == "r_exported", s[0]
assert s[0]["Reason"] == "no debuginfo", s[0]
assert u[0]["Symbol"][0]["FunctionName"] == "r_exported" and "Reason" not in u[0], u[0]
assert u[1]["Symbol"][0]["FunctionName"] == "", u[1]
assert u[1]["Reason"] == "no symbol at this address", u[1]
PY
nm libr.so | awk '$1 ~ /^0+$/ && $2 ~ /[tTwW]/' | grep -q . &&
	fail "nm has a function at 0: the case tests nothing"
tl_case_end

tl_case "stderr: not named for want of debuginfo, once per binary"
# Two addresses of the stripped library no symbol of it holds (0, the ELF
# header; 1): "??" as addr2line answers them, one message saying that its
# debuginfo was not found, exit 0 (a miss); its named address, nothing.
printf '%s\n' "$tmp/stripped/libr.so 0" "$tmp/stripped/libr.so $ea" "$tmp/stripped/libr.so 1" >n.in
addr2line -f -e stripped/libr.so 0 "$ea" 1 >n.want
"$DSOSTORE" symbolize -f --debug-dir "$tmp/nodebug" <n.in >n.out 2>n.err
rc=$?
[ "$rc" = 0 ] || fail "exit status $rc"
diff n.want n.out >n.diff || fail "answers: $(head -6 n.diff)"
[ "$(cat n.err)" = "dsostore: $tmp/stripped/libr.so: no debuginfo (not found): addresses its own symbols do not hold are not named" ] ||
	fail "stderr: $(cat n.err)"
tl_case_end

tl_finish symbolize_errors
