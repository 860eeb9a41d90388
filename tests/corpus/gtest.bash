#!/bin/bash
# SPDX-License-Identifier: MIT
# Test corpus: googletest's own sources (Debian's googletest package,
# /usr/src/googletest) with most of its samples, linked into one program:
# real C++ (templates, lambdas, operators, anonymous namespaces, clones)
# that nobody here wrote.  `bash gtest.bash DIR` makes DIR/VARIANT/prog
# for each variant below; the tests pick theirs by directory name, so a
# variant added here is found by every test that lists the directory.
set -eu
DIR=$1
GT=${GTEST_SRC:-/usr/src/googletest/googletest}
for tool in g++ clang++; do
	command -v "$tool" >/dev/null || exit 77
done
[ -f "$GT/src/gtest-all.cc" ] || exit 77

# sample9 and sample10 bring their own main(); the others share gtest_main.
SRCS=("$GT/src/gtest-all.cc" "$GT/src/gtest_main.cc")
for s in 1 2 4; do
	SRCS+=("$GT/samples/sample$s.cc")
done
for s in 1 2 3 4 5 6 7 8; do
	SRCS+=("$GT/samples/sample${s}_unittest.cc")
done

# variant NAME COMPILER FLAGS...: DIR/NAME/prog, one compiler run in the
# background (two at a time: the machine has two cores).
variant() {
	local name=$1
	shift
	mkdir -p "$DIR/$name"
	while [ "$(jobs -rp | wc -l)" -ge 2 ]; do
		wait -n
	done
	"$@" -I"$GT/include" -I"$GT" -pthread -Wl,--build-id=sha1 -o "$DIR/$name/prog" \
		"${SRCS[@]}" >"$DIR/$name/build.log" 2>&1 &
}

variant gcc-O2 g++ -O2 -g
variant clang-O2 clang++ -O2 -g
status=0
for pid in $(jobs -rp); do
	wait "$pid" || status=1
done
wait || true
for v in "$DIR"/*/; do
	if [ ! -x "$v/prog" ]; then
		echo "build of $(basename "$v") failed:" >&2
		cat "$v/build.log" >&2
		status=1
	fi
done
exit $status
