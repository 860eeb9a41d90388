#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/agent.c (a profiling agent in one page: pid + absolute
# addresses, normalized, symbolized with inline frames) on a process this
# test starts, a stripped PIE whose debuginfo is in a .build-id dir given
# given with -d.  Expected: binutils addr2line -f -i on the
# unstripped original at the virtual address of each function (nm), its
# frames joined as the example prints them; the build ID from readelf.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_need gcc objcopy strip nm readelf addr2line
AGENT=${DS_BUILD:?}/ds_example_agent
[ -x "$AGENT" ] || { echo "FAIL: no $AGENT" >&2; exit 1; }
tl_tmpdir dsagent
tl_sanitizer_exitcodes
export HOME=$tmp/home PERF_BUILDID_DIR= DEBUGINFOD_URLS=
mkdir -p "$HOME" "$tmp/usr/lib/debug"
cat >"$tmp/main.c" <<'EOF2'
#include <stdio.h>
#include <unistd.h>
static inline int sq(int x) { return x * x; }
__attribute__((noinline)) int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(i); return s; }
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "w");
	fprintf(f, "%d\n", work(argc));
	fclose(f);
	for (;;)
		pause();
}
EOF2
gcc -O2 -g -o "$tmp/orig" "$tmp/main.c" || exit 1
bid=$(readelf -n "$tmp/orig" | awk '/Build ID/ {print $3}')
d=$tmp/usr/lib/debug/.build-id/${bid:0:2}
mkdir -p "$d"
objcopy --only-keep-debug "$tmp/orig" "$d/${bid:2}.debug"
strip -o "$tmp/prog" "$tmp/orig"
"$tmp/prog" "$tmp/ready" &
pid=$!
pids+=("$pid")
for ((i = 0; i < 100; i++)); do [ -s "$tmp/ready" ] && break; sleep 0.05; done
# The PIE's load bias: its mapping of file offset 0 (vaddr 0 there).
base=$(awk -v p="$tmp/prog" '$6 == p && $3 == "00000000" {split($1, r, "-"); print r[1]; exit}' \
	"/proc/$pid/maps")
[ -n "$base" ] || fail "no mapping of $tmp/prog"
# An address of work inside the inlined sq (addr2line -i gives two
# frames there), and one of main.
read -r ws wsz < <(nm -S "$tmp/orig" | awk '$4 == "work" {print $1, $2}')
inl=$(for ((k = 0; k < 16#$wsz; k++)); do printf '0x%x\n' $((16#$ws + k)); done |
	addr2line -a -f -i -e "$tmp/orig" |
	awk '/^0x/ {if (n >= 4 && !done) {print a; done = 1} a = $1; n = 0; next} {n++}
		END {if (n >= 4 && !done) print a}')
[ -n "$inl" ] || fail "addr2line finds no inlined code in work: the test tests less"
abs=() want=()
for f in inl main; do
	if [ $f = inl ]; then
		v=$((inl))
	else
		v=$(nm "$tmp/orig" | awk -v f=$f '$3 == f {print $1}')
		v=$((16#$v + 8))
	fi
	a=$(printf '0x%x' $((16#$base + v)))
	abs+=("$a")
	off=$(printf '0x%x' $v) # (text: offset = vaddr in this layout; checked below)
	frames=$(addr2line -f -i -e "$tmp/orig" $(printf '0x%x' $v) | sed 's/ (discriminator [0-9]*)//' |
		paste -d' ' - - | awk 'NR == 1 {printf "%s", $0; next} {printf " (inlined into %s)", $0}')
	want+=("$a $bid+$off $frames")
done
# (The offsets above take offset = vaddr: true of the code segment here.)
while read -r t o v rest; do
	[ "$t" = LOAD ] && [[ $rest == *E* ]] && { [ $((o)) = $((v)) ] || fail "text offset != vaddr"; }
done < <(readelf -lW "$tmp/orig")
"$AGENT" -d "$tmp/usr/lib/debug" "$pid" "${abs[@]}" >"$tmp/got" 2>"$tmp/err" ||
	fail "agent exit $?: $(cat "$tmp/err")"
printf '%s\n' "${want[@]}" >"$tmp/want"
diff "$tmp/want" "$tmp/got" >"$tmp/diff" || fail "differs from addr2line: $(cat "$tmp/diff")"

# examples/symbolize_pid.c: the same addresses in one ds_symbolize_pid()
# call, in another order with one repeated, a libc function's among them
# (qsort from nm -D, its frames addr2line's on the file: libc's debuginfo
# found, or not, by both alike in /usr/lib/debug) and 0x10, in no mapping:
# the frames as addr2line gives them, in input order, and the reason.
PIDEX=$DS_BUILD/ds_example_symbolize_pid
[ -x "$PIDEX" ] || fail "no $PIDEX"
libc=$(awk '$6 ~ /\/libc[.-][^\/]*so/ {print $6; exit}' "/proc/$pid/maps")
qv=$(nm -D --defined-only "$libc" | awk '$3 ~ /^qsort(@|$)/ {print $1; exit}')
[ -n "$libc" ] && [ -n "$qv" ] || fail "no libc or no qsort in it: '$libc' '$qv'"
qv=$((16#$qv + 4))
# libc's mapping of that offset (text: vaddr = offset in its layout too).
qabs=
while read -r range perm pg dev ino path; do
	[ "$path" = "$libc" ] || continue
	s=$((16#${range%-*})) e=$((16#${range#*-})) pg=$((16#$pg))
	((qv >= pg && qv < pg + e - s)) && { qabs=$(printf '0x%x' $((s + qv - pg))); break; }
done <"/proc/$pid/maps"
[ -n "$qabs" ] || fail "no mapping of libc's qsort"
while read -r t o v rest; do
	[ "$t" = LOAD ] && [[ $rest == *E* ]] && { [ $((o)) = $((v)) ] || fail "libc: text offset != vaddr"; }
done < <(readelf -lW "$libc")
qframes=$(addr2line -f -i -e "$libc" $(printf '0x%x' $qv) | sed 's/ (discriminator [0-9]*)//' |
	paste -d' ' - - | awk 'NR == 1 {printf "%s", $0; next} {printf " (inlined into %s)", $0}')
nobid() { sed 's/^\([^ ]*\) [^ ]* /\1 /' <<<"$1"; } # the example prints no build ID
{
	nobid "${want[1]}"
	echo "$qabs $qframes"
	echo "0x10 [in no mapping of the process]"
	nobid "${want[0]}"
	nobid "${want[1]}"
} >"$tmp/want2"
"$PIDEX" -d "$tmp/usr/lib/debug" "$pid" "${abs[1]}" "$qabs" 0x10 "${abs[0]}" "${abs[1]}" \
	>"$tmp/got2" 2>"$tmp/err" || fail "symbolize_pid exit $?: $(cat "$tmp/err")"
diff "$tmp/want2" "$tmp/got2" >"$tmp/diff" ||
	fail "symbolize_pid differs from addr2line: $(cat "$tmp/diff")"
kill "$pid"
tl_finish example_agent
