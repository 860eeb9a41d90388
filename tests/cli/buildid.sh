#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dsostore buildid` against eu-readelf -n: on binaries compiled here and on
# a deterministic sample of the system's ELF files, then the error contract
# with mixed good and bad arguments.
set -euo pipefail

. "$DS_SRC/tests/lib/testlib.bash"
: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need eu-readelf gcc

tl_tmpdir dsbuildid

# The build ID eu-readelf reports, or nothing.
readelf_bid() {
	eu-readelf -n "$1" 2>/dev/null | awk '/Build ID:/ {print $3; exit}'
}

# "<build ID or ->" per argument, in order, from one eu-readelf run (process
# start-up dominates otherwise): with several files it heads each file's
# output with a "\nPATH:" line.
readelf_bids() {
	if [ $# -eq 1 ]; then
		local b
		b=$(readelf_bid "$1")
		echo "${b:--}"
		return
	fi
	printf '%s\n' "$@" >"$tmp/names"
	eu-readelf -n "$@" 2>/dev/null | awk -v names="$tmp/names" '
		BEGIN { while ((getline l < names) > 0) { order[++n] = l; want[l ":"] = l } }
		prev == "" && ($0 in want) { cur = want[$0]; prev = $0; next }
		{ prev = $0 }
		/^    Build ID: / && cur != "" && !(cur in bid) { bid[cur] = $3 }
		END { for (i = 1; i <= n; i++) print (order[i] in bid ? bid[order[i]] : "-") }'
}

# How many lines of stdin are "dsostore: PATH: <reason>" for this path.
err_lines() {
	awk -v p="dsostore: $1: " 'index($0, p) == 1 && length($0) > length(p)' | wc -l
}

# Without a process per file: read stops at the NUL after "\177ELF" or
# takes 4 bytes.
is_elf() {
	local magic=""
	IFS= read -r -d '' -n 4 magic <"$1" 2>/dev/null
	[ "$magic" = $'\177ELF' ]
}

# Runs the CLI on every argument; expects on stdout exactly the files that
# have a build ID (in argument order, "<hex> <path>"), and on stderr one
# "dsostore: PATH: reason" line per file without one.
check_against_readelf() {
	local expect_out="$tmp/expect.out" expect_errs="$tmp/expect.err" f bid rc=0 i=0
	local -a bids
	: >"$expect_out"
	: >"$expect_errs"
	mapfile -t bids < <(readelf_bids "$@")
	[ ${#bids[@]} -eq $# ] || fail "eu-readelf gave ${#bids[@]} answers for $# files"
	for f in "$@"; do
		bid=${bids[i++]}
		if [ "$bid" != - ]; then
			echo "$bid $f" >>"$expect_out"
		else
			echo "$f" >>"$expect_errs"
		fi
	done
	"$DSOSTORE" buildid "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if ! diff -u "$expect_out" "$tmp/out" >"$tmp/diff"; then
		fail "buildid output differs from eu-readelf -n on $# files:"
		head -40 "$tmp/diff" >&2
	fi
	while read -r f; do
		[ "$(err_lines "$f" <"$tmp/err")" -eq 1 ] ||
			fail "not one error line for $f (eu-readelf finds no build ID)"
	done <"$expect_errs"
	if [ "$(wc -l <"$tmp/err")" -ne "$(wc -l <"$expect_errs")" ]; then
		fail "$(wc -l <"$tmp/err") error lines for $(wc -l <"$expect_errs") files without build ID"
		head -20 "$tmp/err" >&2
	fi
	if [ -s "$expect_errs" ]; then
		[ "$rc" -eq 1 ] || fail "exit status $rc with failing files, expected 1"
	else
		[ "$rc" -eq 0 ] || fail "exit status $rc with all files good, expected 0"
	fi
	echo "checked $# files ($(wc -l <"$expect_out") with build ID, $(wc -l <"$expect_errs") without)"
}

# ---- binaries compiled here
cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
int main(void) { puts("hello"); return 0; }
EOF
echo 'int f(int x) { return x + 1; }' >"$tmp/lib.c"
built=()
compile() { # out cc flags...
	local out=$tmp/$1 cc=$2
	shift 2
	command -v "$cc" >/dev/null || return 0
	if "$cc" "$@" -o "$out" 2>/dev/null; then
		built+=("$out")
	elif [[ " $* " != *" -m32 "* ]]; then
		fail "could not compile $out with $cc $*"
	fi
}
for cc in gcc clang; do
	for style in sha1 md5 uuid 0xdeadbeefcafe0001 none; do
		compile "$cc-$style" "$cc" -Wl,--build-id=$style "$tmp/prog.c"
	done
	compile "$cc-lib.so" "$cc" -shared -fPIC -Wl,--build-id "$tmp/lib.c"
	compile "$cc-m32" "$cc" -m32 -Wl,--build-id "$tmp/prog.c"
	compile "$cc-prog.o" "$cc" -c "$tmp/prog.c"
done
check_against_readelf "${built[@]}"

# ---- the system's ELF files: every k-th of the sorted list, so the sample
# is the same on every run of one machine and spreads over the alphabet.
sys=()
for dir in /usr/lib/x86_64-linux-gnu /usr/lib /usr/bin; do
	[ -d "$dir" ] || continue
	mapfile -t cand < <(find "$dir" -maxdepth 1 -type f -size +0 2>/dev/null | LC_ALL=C sort)
	step=$(((${#cand[@]} + 149) / 150))
	[ "$step" -ge 1 ] || step=1
	for ((i = 0; i < ${#cand[@]}; i += step)); do
		[ -r "${cand[i]}" ] && is_elf "${cand[i]}" && sys+=("${cand[i]}")
	done
done
if [ ${#sys[@]} -lt 20 ]; then
	echo "note: only ${#sys[@]} system ELF files found" >&2
fi
[ ${#sys[@]} -eq 0 ] || check_against_readelf "${sys[@]}"

# ---- mixed arguments: good ones printed in order, one error line per bad
good1=$tmp/gcc-sha1 good2=$tmp/gcc-md5
mkdir "$tmp/a-directory"
echo "plain text, not ELF" >"$tmp/text"
: >"$tmp/empty"
head -c 200 "$good1" >"$tmp/truncated"
mkfifo "$tmp/fifo" # nobody writes to it: reading it must not wait
bad=("$tmp/a-directory" "$tmp/text" "$tmp/missing" "$tmp/fifo" "$tmp/truncated" "$tmp/empty"
	"$tmp/gcc-none")
rc=0
timeout 20 "$DSOSTORE" buildid "$good1" "${bad[@]:0:3}" "$good2" "${bad[@]:3}" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 1 ] || fail "mixed arguments: exit status $rc, expected 1"
printf '%s %s\n' "$(readelf_bid "$good1")" "$good1" "$(readelf_bid "$good2")" "$good2" >"$tmp/expect.out"
diff -u "$tmp/expect.out" "$tmp/out" >&2 || fail "mixed arguments: stdout is not the two good files"
[ "$(wc -l <"$tmp/err")" -eq ${#bad[@]} ] || fail "mixed arguments: $(wc -l <"$tmp/err") error lines for ${#bad[@]} bad files"
for f in "${bad[@]}"; do
	[ "$(err_lines "$f" <"$tmp/err")" -eq 1 ] || fail "not one error line for $f"
done
grep -F -- "dsostore: $tmp/missing: " "$tmp/err" | grep -qi 'no such file\|not found' ||
	fail "missing file: error does not say so"
grep -F -- "dsostore: $tmp/a-directory: " "$tmp/err" | grep -qi 'directory' ||
	fail "directory: error does not say so"
sed 's/^/  stderr: /' "$tmp/err"

# No file at all is a usage error, not success.
rc=0
"$DSOSTORE" buildid >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -ne 0 ] && [ ! -s "$tmp/out" ] || fail "buildid without files: status $rc"

tl_finish buildid.sh "all checks passed"
