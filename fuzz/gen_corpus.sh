#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generates the seed corpus of the build-ID fuzz target into OUTDIR (emptied
# first).  Nothing here is committed: ELF files must not be tracked, so the
# seeds are compiled (gcc and clang, 64 and 32 bit, every --build-id style,
# objects, shared libraries, stripped and split debug files) and hand-built
# (fuzz/mkelf.c: both byte orders and classes, decoy notes, notes only in
# sections, hostile sizes) on each run.
#
#   fuzz/gen_corpus.sh OUTDIR [MKELF]
#
# MKELF is a built fuzz/mkelf.c; without it the script compiles one.  The
# seeds are kept small (-Os, no debug info unless the point is debug info):
# a fuzzer spends its time where the bytes are.
set -euo pipefail

out=${1:?usage: gen_corpus.sh OUTDIR [MKELF]}
mkelf=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dscorpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

rm -rf "$out"
mkdir -p "$out"

if [ -z "$mkelf" ]; then
	mkelf=$tmp/mkelf
	"${CC:-cc}" -std=gnu11 -O1 -o "$mkelf" "$here/mkelf.c"
fi
"$mkelf" "$out" >/dev/null

cat >"$tmp/prog.c" <<'EOF'
int main(int argc, char **argv) { return argc > 1 ? argv[1][0] : 0; }
EOF
echo 'int f(int x) { return x * 3; }' >"$tmp/lib.c"

n=0
# seed NAME CC FLAGS... : compile one seed; a missing compiler or -m32
# support only means fewer seeds.
seed() {
	local name=$1 cc=$2
	shift 2
	command -v "$cc" >/dev/null || return 0
	if "$cc" "$@" -o "$out/$name" 2>/dev/null; then
		n=$((n + 1))
	else
		rm -f "$out/$name"
	fi
}

for cc in gcc clang; do
	for bits in 64 32; do
		m=-m$bits
		seed "$cc$bits-sha1" "$cc" $m -Os -Wl,--build-id=sha1 "$tmp/prog.c"
		seed "$cc$bits-md5.so" "$cc" $m -Os -shared -fPIC -Wl,--build-id=md5 "$tmp/lib.c"
		seed "$cc$bits-none" "$cc" $m -Os -Wl,--build-id=none "$tmp/prog.c"
		seed "$cc$bits.o" "$cc" $m -Os -c "$tmp/prog.c"
	done
	seed "$cc-uuid" "$cc" -Os -Wl,--build-id=uuid "$tmp/prog.c"
	seed "$cc-hex10" "$cc" -Os -Wl,--build-id=0x0123456789abcdef00ff "$tmp/prog.c"
	# Split debug info: notes kept, code and data NOBITS.
	if seed "$cc-g" "$cc" -g -O1 -Wl,--build-id "$tmp/prog.c" && [ -f "$out/$cc-g" ]; then
		objcopy --only-keep-debug "$out/$cc-g" "$out/$cc-g.debug"
		strip -o "$out/$cc-g.stripped" "$out/$cc-g"
		n=$((n + 2))
	fi
done
# A relocatable link: build ID in a section, no program headers.
if [ -f "$out/gcc64.o" ]; then
	ld -r --build-id=sha1 -o "$out/ld-r.o" "$out/gcc64.o" && n=$((n + 1))
fi
# Not ELF at all, and nearly ELF.
printf '#!/bin/sh\necho not ELF\n' >"$out/text"
: >"$out/empty"
printf '\177ELF\002\001\001' >"$out/ident-only"

echo "gen_corpus: $n compiled and $(ls "$out" | grep -c '^hand-') hand-built seeds in $out"
