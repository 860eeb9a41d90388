#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A dwz alt file found where its debug file's .gnu_debugaltlink says, with
# no .build-id entry for it anywhere: the name relative to the debug file's
# directory (dwz -r, as Fedora's find-debuginfo runs it) and an absolute
# name (dwz -M).  Two stripped programs share an always_inline helper that
# dwz moves into the alt file; their debug files sit beside them, found by
# .gnu_debuglink.  Oracle: addr2line -i -f on the programs before strip and
# dwz, for every address of each program's function that inlines the
# helper.  Then: the alt file moved away (the helper's frames are unknown,
# with a warning naming the alt file), and another alt file at the named
# path (its build ID is not the one the link names: refused, same).
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc objcopy strip dwz addr2line nm python3
tl_tmpdir dsaltpath
tl_sanitizer_exitcodes
cd "$tmp" || exit 2
export DSOSTORE_SYMINDEX=0 DEBUGINFOD_URLS=

cat >common.h <<'EOF'
static inline __attribute__((always_inline)) unsigned long cm_mix(unsigned long x)
{
	for (int i = 0; i < 300; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}
EOF
# build SET DWZ-OPTIONS...: SET/a and SET/b stripped, SET/a.debug and
# SET/b.debug beside them (dwz'd), the originals in plain/SET.
build() {
	local set=$1 p
	shift
	mkdir -p "$set/.dwz" "plain/$set"
	for p in a b; do
		cat >"$set-$p.c" <<EOF
#include <stdio.h>
#include "common.h"
__attribute__((noinline)) unsigned long ${p}_spin(unsigned long x)
{
	return cm_mix(x) + 1;
}
int main(int argc, char **argv)
{
	(void)argv;
	printf("%lx\n", ${p}_spin((unsigned long)argc));
	return 0;
}
EOF
		gcc -O2 -g -o "plain/$set/$p" "$set-$p.c" &&
			objcopy --only-keep-debug "plain/$set/$p" "$set/$p.debug" || return 1
	done
	(cd "$set" && dwz "$@" a.debug b.debug) || return 1
	for p in a b; do
		strip --strip-all -o "$set/$p" "plain/$set/$p" &&
			objcopy --add-gnu-debuglink="$set/$p.debug" "$set/$p" || return 1
	done
}
build rel -m .dwz/common.debug -r || { fail "dwz -r set"; tl_finish dwz_altpath; }
mkdir -p abs
build abs -m "$tmp/abs/common.debug" -M "$tmp/abs/common.debug" ||
	{ fail "dwz -M set"; tl_finish dwz_altpath; }
[ -f rel/.dwz/common.debug ] || fail "dwz -r left no rel/.dwz/common.debug"

# check SET PROG [EXPECT_HELPER]: our frames for every address of
# PROG_spin against addr2line's on the unstripped original.
check() {
	local set=$1 p=$2 want=${3:-yes} start size
	read -r start size < <(nm -S "plain/$set/$p" | awk -v f="${p}_spin" '$4 == f {print $1, $2}')
	[ -n "$start" ] || { fail "$set/$p: no ${p}_spin"; return; }
	python3 -c 'import sys; s, n = int(sys.argv[1], 16), int(sys.argv[2], 16)
for a in range(s, s + n): print(hex(a))' "$start" "$size" >"$set-$p.addrs"
	addr2line -i -f -e "plain/$set/$p" <"$set-$p.addrs" >"$set-$p.want"
	"$DSOSTORE" symbolize --debug-dir /nonexistent -i -f -e "$set/$p" <"$set-$p.addrs" \
		>"$set-$p.got" 2>"$set-$p.err"
	if [ "$want" = yes ]; then
		grep -q cm_mix "$set-$p.want" || fail "$set/$p: the oracle has no inlined cm_mix"
		if ! cmp -s "$set-$p.want" "$set-$p.got"; then
			fail "$set/$p: frames differ from addr2line on the original:"
			diff "$set-$p.want" "$set-$p.got" | head -8 >&2
		fi
	else
		! grep -q cm_mix "$set-$p.got" || fail "$set/$p: cm_mix named without its alt file"
		grep -q 'dwz alt file.*not found' "$set-$p.err" ||
			fail "$set/$p: no warning about the alt file: $(head -3 "$set-$p.err")"
	fi
}
for s in rel abs; do
	check "$s" a
	check "$s" b
done

# Gone: the helper's frames are unknown, and we say why.
mv rel/.dwz rel/dwz.away
check rel a no
# Another alt file at the named path (of other code: another build ID):
# refused by its build ID.
mkdir -p other/.dwz && sed 's/300/301/' common.h >other/common.h &&
	for p in x y; do
		sed "s/a_spin/${p}_spin/" rel-a.c >"other/$p.c" &&
			gcc -O2 -g -Iother -o "other/$p" "other/$p.c" || exit 1
	done &&
	(cd other && dwz -m .dwz/common.debug -r x y) &&
	mkdir -p rel/.dwz && cp other/.dwz/common.debug rel/.dwz/common.debug ||
	fail "cannot make another alt file"
[ "$(tl_build_id other/.dwz/common.debug)" != "$(tl_build_id rel/dwz.away/common.debug)" ] ||
	fail "the other alt file has the same build ID"
check rel a no

tl_finish dwz_altpath "the alt file by its relative (dwz -r) and absolute names, every address as addr2line; missing and foreign alt files refused"
