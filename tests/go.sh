#!/bin/bash
# SPDX-License-Identifier: MIT
# Stripped Go binaries (issue 11): `go build -ldflags='-s -w'` leaves no
# .symtab and no DWARF, only .gopclntab, which dsostore reads
# (lib/gopclntab.c).  A Go program with inlined calls (nested), methods on
# pointer receivers, closures, generics and a goroutine is built by the Go
# here (offline, standard library only) for amd64 and 386, each
# unstripped, stripped, and stripped with its section headers removed
# (the table then found by scanning the segments).  tests/go_cmp.py
# compares ~2000 addresses of each stripped binary (every function start,
# random bytes inside functions) with `go tool addr2line` and
# llvm-symbolizer -i on the unstripped one (docs/oracles.md says why
# both).  Also: the `PATH ADDR` stream form, and a names-only answer.
set -u

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
SRC=${DS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$SRC/tests/testlib.bash"
tl_need go python3 llvm-symbolizer
tl_tmpdir dsgo
export HOME=$tmp/home GOFLAGS=-mod=mod GOPROXY=off GOCACHE=$tmp/gocache GOPATH=$tmp/gopath \
	CGO_ENABLED=0 GOTOOLCHAIN=local PERF_BUILDID_DIR=$tmp/perf
unset DEBUGINFOD_URLS
mkdir -p "$HOME" "$tmp/src"
N=${GO_TEST_ADDRS:-2000}

cp "$SRC/tests/goprog/main.go" "$tmp/src/"
printf 'module example.com/gotest\n\ngo 1.18\n' >"$tmp/src/go.mod"

# A copy of an ELF file without section headers: e_shoff, e_shnum and
# e_shstrndx zeroed (the gABI's "no section header table").
noshdr() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
end = '<' if d[5] == 1 else '>'
if d[4] == 2:
    struct.pack_into(end + 'Q', d, 0x28, 0)
    struct.pack_into(end + 'HHH', d, 0x3a, 0, 0, 0)
else:
    struct.pack_into(end + 'I', d, 0x20, 0)
    struct.pack_into(end + 'HHH', d, 0x2e, 0, 0, 0)
open(sys.argv[2], 'wb').write(d)
PY
}

archs=()
for arch in amd64 386; do
	if ! (cd "$tmp/src" && GOARCH=$arch go build -o "$tmp/$arch.full" . &&
		GOARCH=$arch go build -ldflags='-s -w' -o "$tmp/$arch.stripped" .) \
		>"$tmp/$arch.log" 2>&1; then
		[ "$arch" = amd64 ] || { echo "note: GOARCH=$arch does not build here" >&2; continue; }
		cat "$tmp/$arch.log" >&2
		fail "go build ($arch)"
		tl_finish go
	fi
	noshdr "$tmp/$arch.stripped" "$tmp/$arch.noshdr"
	archs+=("$arch")
done

for arch in "${archs[@]}"; do
	full=$tmp/$arch.full
	if readelf -SW "$tmp/$arch.stripped" | grep -qE '\.(symtab|debug_info|zdebug_info)'; then
		fail "$arch.stripped still has symbols or DWARF"
	fi
	if readelf -SW "$tmp/$arch.noshdr" 2>/dev/null | grep -q gopclntab; then
		fail "$arch.noshdr still has section headers"
	fi
	for v in stripped noshdr; do
		tl_case "$arch.$v"
		if out=$(python3 "$SRC/tests/go_cmp.py" "$DSOSTORE" "$full" "$tmp/$arch.$v" "$N" 2>"$tmp/$arch.$v.err"); then
			tl_case_end "$out"
		else
			fail "$(cat "$tmp/$arch.$v.err")"
			tl_case_end "$out"
		fi
	done
done

# The stream form ("PATH ADDR" lines) gives what -e gives, and a
# names-only query (no -f: file:line only) works on the stripped binary.
tl_case stream
main=$(go tool nm "$tmp/amd64.full" | awk '$3 == "main.main" {print $1}')
want=$("$DSOSTORE" symbolize -e "$tmp/amd64.stripped" -f -i "0x$main")
got=$(echo "$tmp/amd64.stripped 0x$main" | "$DSOSTORE" symbolize -f -i)
[ "$got" = "$want" ] || fail "stream form: $got; -e: $want"
case $want in main.main*main.go:*) ;; *) fail "main.main: $want" ;; esac
tl_case_end

tl_finish go
