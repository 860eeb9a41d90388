#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Seeds of the .ko relocation fuzz target (fuzz/fuzz_ko.c) into OUTDIR
# (emptied first), compiled on each run (no ELF file is committed):
# relocatable objects with DWARF as a kernel module is one (gcc -c -g,
# ld -r --build-id), with several text sections, DWARF 4 and 5, without
# debug info, and a 32-bit one (refused).
#
#   fuzz/gen_ko_corpus.sh OUTDIR
set -euo pipefail

out=${1:?usage: gen_ko_corpus.sh OUTDIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dskocorpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out"
mkdir -p "$out"
cat >"$tmp/m.c" <<'SRC'
static int counter;
static inline __attribute__((always_inline)) int deep(int x) { counter += x; return counter * 3; }
__attribute__((noinline)) int m_read(int x) { int r = deep(x + 1); return r + deep(r); }
__attribute__((section(".init.text"), noinline)) int m_init(void) { return m_read(2); }
__attribute__((section(".exit.text"), noinline)) void m_exit(void) { counter = 0; }
SRC
n=0
for flags in "-g -O2" "-gdwarf-4 -O1" "-g -O0" "-O2" "-g -O2 -ffunction-sections"; do
	n=$((n + 1))
	cc -c $flags -fno-pie -mcmodel=kernel -fno-asynchronous-unwind-tables "$tmp/m.c" -o "$tmp/m.o"
	ld -r --build-id=sha1 -o "$out/mod$n.ko" "$tmp/m.o"
done
if cc -m32 -c -g "$tmp/m.c" -o "$out/mod32.o" 2>/dev/null; then :; fi
