#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generates the seed corpus of the Go table fuzz target (fuzz_gopclntab.c)
# into OUTDIR (emptied first):
#
#   fuzz/gen_gopclntab_corpus.sh OUTDIR MKGOTAB
#
#  - MKGOTAB (fuzz/mkgotab.c) writes the hand-built tables of mkgotab.h:
#    the Go 1.2, 1.16, 1.18 and 1.20 layouts, both byte orders, 4- and
#    8-byte pointers;
#  - when go is installed, tests/gen/goprog (tests/cli/go.sh's program) is built
#    for amd64 and 386, stripped (-ldflags=-s -w), and the part of its
#    read-only segment from go.func.* to the end of .gopclntab becomes a
#    seed (what the reader copies).
#    Offline: the standard library only, no module downloads.
# Nothing here is committed: the seeds are made at test time.
set -euo pipefail

out=${1:?usage: gen_gopclntab_corpus.sh OUTDIR MKGOTAB}
mkgotab=${2:?usage: gen_gopclntab_corpus.sh OUTDIR MKGOTAB}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsgocorpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

rm -rf "$out"
mkdir -p "$out"
"$mkgotab" "$out"

command -v go >/dev/null || exit 0
mkdir -p "$tmp/src"
cp "$(dirname "$0")/../tests/gen/goprog/main.go" "$tmp/src/"
printf 'module example.com/seed\n\ngo 1.18\n' >"$tmp/src/go.mod"
export GOFLAGS=-mod=mod GOPROXY=off GOCACHE=$tmp/gocache GOPATH=$tmp/gopath HOME=$tmp \
	CGO_ENABLED=0 GOTOOLCHAIN=local
for arch in amd64 386; do
	(cd "$tmp/src" && GOARCH=$arch go build -ldflags='-s -w' -o "$tmp/$arch" .) || continue
	(cd "$tmp/src" && GOARCH=$arch go build -o "$tmp/$arch.full" .) || continue
	gofunc=$(go tool nm "$tmp/$arch.full" | awk '$3 == "go.func.*" || $3 == "go:func.*" {print $1}')
	python3 - "$tmp/$arch" "${gofunc:-0}" "$out/go-$arch" <<'PY'
import struct, sys

path, gofunc, out = sys.argv[1], int(sys.argv[2], 16), sys.argv[3]
d = open(path, 'rb').read()
is64 = d[4] == 2
end = '<' if d[5] == 1 else '>'
if is64:
    shoff, = struct.unpack_from(end + 'Q', d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from(end + 'HHH', d, 0x3a)
    sh = lambda i: struct.unpack_from(end + 'IIQQQQIIQQ', d, shoff + i * shentsize)
else:
    shoff, = struct.unpack_from(end + 'I', d, 0x20)
    shentsize, shnum, shstrndx = struct.unpack_from(end + 'HHH', d, 0x2e)
    sh = lambda i: struct.unpack_from(end + 'IIIIIIIIII', d, shoff + i * shentsize)
strs = sh(shstrndx)
for i in range(shnum):
    s = sh(i)
    name = d[strs[4] + s[0]:d.index(b'\0', strs[4] + s[0])]
    if name == b'.gopclntab':
        addr, off, size = s[3], s[4], s[5]
        lo = gofunc if 0 < gofunc < addr and addr - gofunc < (4 << 20) else addr
        img = d[off - (addr - lo):off + size]
        open(out, 'wb').write(struct.pack('<QQII', lo, gofunc, addr - lo, 0) + img)
PY
done
