#!/bin/bash
# SPDX-License-Identifier: MIT
# Stripped Go binaries: `go build -ldflags='-s -w'` leaves no
# .symtab and no DWARF, only .gopclntab, which dsostore reads
# (lib/symbolize/gopclntab.c).  A Go program with inlined calls (nested), methods on
# pointer receivers, closures, generics and a goroutine is built by the Go
# here (offline, standard library only) for amd64 and 386, each
# unstripped, stripped, and stripped with its section headers removed
# (the table then found by scanning the segments), and amd64 PIE builds
# (the table in .data.rel.ro.gopclntab, the inline trees in another
# segment, found through relocations).  tests/lib/go_cmp.py
# compares ~2000 addresses of each stripped binary (every function start,
# random bytes inside functions) with `go tool addr2line` and
# llvm-symbolizer -i on the unstripped one (docs/oracles.md says why
# both), and names-only answers (DS_SYM_NO_LINES, GNU and perf style,
# through ds_symstats) with `go tool nm -size` on the unstripped one.
# Also: the `PATH ADDR` stream form, and a cgo binary, whose .dynsym
# names its C code.  tests/cli/go_report.sh: dsostore report of Go programs.
#
# The Go is the one on PATH (Debian 12's 1.19: the 1.18 table layout),
# or DS_GO_BIN's (tests/cli/go_new.sh: a Go 1.20+ for the 1.20 layout); with
# DS_GO_MAGIC set, the table must have that magic number.
set -u

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
SRC=${DS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lib/testlib.bash"
[ -z "${DS_GO_BIN:-}" ] || PATH=$DS_GO_BIN:$PATH
NAME=${DS_GO_NAME:-go}
tl_need go python3 llvm-symbolizer
tl_tmpdir dsgo
export HOME=$tmp/home GOFLAGS=-mod=mod GOPROXY=off GOCACHE=$tmp/gocache GOPATH=$tmp/gopath \
	CGO_ENABLED=0 GOTOOLCHAIN=local PERF_BUILDID_DIR=$tmp/perf
unset DEBUGINFOD_URLS
mkdir -p "$HOME" "$tmp/src"
N=${GO_TEST_ADDRS:-2000}

cp "$SRC/tests/gen/goprog/main.go" "$tmp/src/"
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
		tl_finish "$NAME"
	fi
	noshdr "$tmp/$arch.stripped" "$tmp/$arch.noshdr"
	archs+=("$arch")
done

# Which layout the table has: its magic number (little-endian here).
magic=$(python3 - "$tmp/amd64.stripped" <<'PY'
import re, subprocess, sys
out = subprocess.run(["readelf", "-SW", sys.argv[1]], capture_output=True, text=True).stdout
m = re.search(r"\.gopclntab\s+PROGBITS\s+[0-9a-f]+\s+([0-9a-f]+)", out)
f = open(sys.argv[1], "rb")
f.seek(int(m.group(1), 16))
print("0x%08x" % int.from_bytes(f.read(4), "little"))
PY
)
echo "$(go version): .gopclntab magic $magic"
if [ -n "${DS_GO_MAGIC:-}" ] && [ "$magic" != "$DS_GO_MAGIC" ]; then
	fail "the table's magic is $magic, not $DS_GO_MAGIC: this test proves nothing"
	tl_finish "$NAME"
fi

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
		if out=$(DS_SYMSTATS=${DS_BUILD:+$DS_BUILD/ds_symstats} python3 "$SRC/tests/lib/go_cmp.py" "$DSOSTORE" "$full" "$tmp/$arch.$v" "$N" 2>"$tmp/$arch.$v.err"); then
			tl_case_end "$out"
		else
			fail "$(cat "$tmp/$arch.$v.err")"
			tl_case_end "$out"
		fi
	done
done

# Position-independent (amd64): Go's linker puts the table in
# .data.rel.ro.gopclntab, found by that name; linked with -buildid= there
# is no .note.go.buildid either, and .go.buildinfo still says Go; without
# section headers the table is scanned for and the code's start is a
# relocation's.  Each against the unstripped PIE build.
if (cd "$tmp/src" && go build -buildmode=pie -o "$tmp/pie.full" . &&
	go build -buildmode=pie -ldflags='-s -w' -o "$tmp/pie.stripped" . &&
	go build -buildmode=pie -ldflags='-s -w -buildid=' -o "$tmp/pie.nobuildid" .) \
	>"$tmp/pie.log" 2>&1; then
	readelf -SW "$tmp/pie.nobuildid" | grep -q '\.note\.go\.buildid' &&
		fail "pie.nobuildid has a Go build ID note: the case proves less"
	noshdr "$tmp/pie.stripped" "$tmp/pie.noshdr"
	for v in stripped nobuildid noshdr; do
		tl_case "pie.$v"
		if out=$(python3 "$SRC/tests/lib/go_cmp.py" "$DSOSTORE" "$tmp/pie.full" "$tmp/pie.$v" "$N" 2>"$tmp/pie.$v.err"); then
			tl_case_end "$out"
		else
			fail "$(cat "$tmp/pie.$v.err")"
			tl_case_end "$out"
		fi
	done
else
	echo "note: go build -buildmode=pie does not build here: $(tail -2 "$tmp/pie.log")" >&2
fi

# The stream form ("PATH ADDR" lines) gives what -e gives, and a
# names-only query (no -f: file:line only) works on the stripped binary.
tl_case stream
main=$(go tool nm "$tmp/amd64.full" | awk '$3 == "main.main" {print $1}')
want=$("$DSOSTORE" symbolize -e "$tmp/amd64.stripped" -f -i "0x$main")
got=$(echo "$tmp/amd64.stripped 0x$main" | "$DSOSTORE" symbolize -f -i)
[ "$got" = "$want" ] || fail "stream form: $got; -e: $want"
case $want in main.main*main.go:*) ;; *) fail "main.main: $want" ;; esac
tl_case_end

# cgo: a stripped binary with C code has a .dynsym naming that code (and
# some Go functions it exports): names-only answers take Go's functions
# from the table and keep the .dynsym symbols outside them.  The oracle:
# go tool nm -size of the unstripped build, for a Go function (main.main),
# a C one (x_cgo_thread_start, runtime/cgo's C, in the .dynsym) and one
# both name (crosscall2), at their start and last byte.
mkdir -p "$tmp/cgo"
cat >"$tmp/cgo/main.go" <<'EOF'
package main

/*
static int cadd(int a, int b) { return a + b; }
*/
import "C"
import "fmt"

func main() { fmt.Println(C.cadd(1, 2)) }
EOF
printf 'module example.com/cgotest\n\ngo 1.18\n' >"$tmp/cgo/go.mod"
if command -v gcc >/dev/null && (cd "$tmp/cgo" && CGO_ENABLED=1 go build -o full . &&
	CGO_ENABLED=1 go build -ldflags='-s -w' -o stripped .) >"$tmp/cgo.log" 2>&1; then
	tl_case cgo
	# Go 1.22's runtime/cgo exports no C function (its .dynsym has only
	# _cgo_panic, _cgo_topofstack and crosscall2, Go and assembly): its C
	# code keeps no name in a stripped binary, and the case checks the Go
	# ones.  Go 1.19's does (x_cgo_thread_start).
	cfuncs=x_cgo_thread_start
	if ! readelf --dyn-syms -W "$tmp/cgo/stripped" | grep -q ' x_cgo_thread_start$'; then
		case $(go env GOVERSION) in
		go1.19*) fail "x_cgo_thread_start is not in the .dynsym: the case proves nothing" ;;
		*) cfuncs= ;;
		esac
	fi
	for f in main.main $cfuncs crosscall2; do
		read -r a sz <<<"$(go tool nm -size "$tmp/cgo/full" | awk -v f="$f" '$4 == f {print $1, $2}')"
		[ -n "$a" ] || { fail "go tool nm has no $f"; continue; }
		for style in -n -p; do
			got=$("$DS_BUILD/ds_symstats" $style "$tmp/cgo/stripped" "$a" \
				"$(printf '%x' $((0x$a + sz - 1)))" | awk '/^0x/ && NF > 2 {print $2}' | sort -u)
			[ "$got" = "$f" ] || fail "$f ($style): '$got'"
		done
	done
	tl_case_end
else
	echo "note: cgo does not build here: $(tail -1 "$tmp/cgo.log")" >&2
fi

tl_finish "$NAME"
