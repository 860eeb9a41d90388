#!/bin/bash
# SPDX-License-Identifier: MIT
# Test corpus: googletest's own sources (Debian's googletest package,
# /usr/src/googletest) with most of its samples, linked into one program:
# real C++ (templates, lambdas, operators, anonymous namespaces, clones)
# that nobody here wrote.  `bash gtest.bash DIR` makes DIR/VARIANT/prog
# for each variant below; the tests pick theirs by directory name, so a
# variant added here is found by every test that lists the directory.
#
#   gcc-O2, clang-O2   -g: DWARF 5, both compilers' default (the names of
#                      tests/cli/symbolize_names.sh; keep them)
#   gcc-O0-g4          DWARF 4, unoptimised
#   clang-O2-g4-gz     DWARF 4, debug sections compressed (-gz=zlib)
#   gcc-O2-g5-lto      -flto: <artificial> CUs, code of several sources
#                      in one partition
#
# A subset of the matrix tests/corpus/stb.bash builds in full: each
# googletest build is one compiler run of 30 to 80 s on a busy core
# (measured: gcc -O0 32 s, gcc -flto 82 s, clang -O2 -gz 77 s, two at a
# time), stb's whole matrix about as long as one of these.  So here
# each axis once: -O0, DWARF 4 with each compiler, -gz, LTO (gcc's: its
# partitions mix CUs; clang's LTO is covered on stb).
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
variant gcc-O0-g4 g++ -O0 -gdwarf-4
variant clang-O2-g4-gz clang++ -O2 -gdwarf-4 -gz=zlib
variant gcc-O2-g5-lto g++ -O2 -gdwarf-5 -flto=1
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
