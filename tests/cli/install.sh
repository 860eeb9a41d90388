#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An installed dsostore is usable through pkg-config alone (once, after
# an earlier `make`, `make install PREFIX=P` left prefix=/usr/local in
# dsostore.pc).  `cmake --install` of the already-built tree into a
# temporary prefix (the build directory is not configured again), then:
#
#  - dsostore.pc says that prefix, and pkg-config's flags point into it;
#    staged with DESTDIR, it says the final prefix;
#  - a small C program, compiled and linked with nothing but `pkg-config
#    --cflags --libs dsostore`, runs against the installed shared library
#    (LD_LIBRARY_PATH: the prefix has no place in the loader's path), and
#    readelf says it needs libdsostore.so.0 by that name;
#  - the same program linked with `pkg-config --static --cflags --libs`
#    once the shared library is gone from the prefix, so that -ldsostore
#    can only be the archive: it links (the .pc names every library the
#    archive needs), needs no libdsostore at run time, and answers alike;
#  - libexec/dsostore/bin/addr2line links to the installed CLI, and run
#    through it, the CLI answers for that program as binutils does;
#  - the man page dsostore(1) and the bash completion are installed.
#
# The program's answers come from first principles: a build ID it parses
# is printed back in lowercase, 20 bytes for 40 digits; an odd number of
# digits is -EINVAL, as the header says; the build ID it reads from its own
# file is the one the test chose at link time (-Wl,--build-id=0x...), and
# the function it looks up in itself is named, with its file and line, as
# addr2line names it.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DS_BUILD:?DS_BUILD must name the build directory}"
tl_need cmake pkg-config cc readelf addr2line
tl_tmpdir dsinstall
cd "$tmp" || exit 2
export HOME=$tmp/home
mkdir -p "$HOME"
unset DEBUGINFOD_URLS PERF_BUILDID_DIR
# The programs get a build ID of our choosing, the same from run to run
# while their DWARF names this run's directory: their saved indexes stay
# here, not in the build's shared directory (a later run would map this
# one's: same build ID, same layout, so the key cannot tell).
export DSOSTORE_SYMINDEX_PATH=$tmp/symindex
tl_sanitizer_exitcodes
# A sanitized library needs its runtime in the program too, as any user
# of that build would add.
san=()
[ -z "${DS_SANITIZE:-}" ] || san=(-fsanitize="$DS_SANITIZE")

prefix=$tmp/prefix
if ! cmake --install "$DS_BUILD" --prefix "$prefix" >install.log 2>&1; then
	fail "cmake --install failed: $(tail -5 install.log)"
	exit 1
fi
pc=$(find "$prefix" -name dsostore.pc)
[ -n "$pc" ] && [ "$(echo "$pc" | wc -l)" = 1 ] || {
	fail "no single dsostore.pc under the prefix: '$pc'"
	exit 1
}
export PKG_CONFIG_PATH=${pc%/dsostore.pc}

tl_case "the .pc file"
[ "$(pkg-config --variable=prefix dsostore)" = "$prefix" ] ||
	fail "prefix=$(pkg-config --variable=prefix dsostore), installed under $prefix"
libdir=$(pkg-config --variable=libdir dsostore)
incdir=$(pkg-config --variable=includedir dsostore)
[ -f "$libdir/libdsostore.so" ] && [ -f "$libdir/libdsostore.a" ] ||
	fail "libdir=$libdir has no libdsostore.so and .a"
[ -f "$incdir/dsostore.h" ] || fail "includedir=$incdir has no dsostore.h"
[ "$(pkg-config --modversion dsostore)" = "$(awk '/define DS_VERSION_MAJOR/ {a = $3}
	/define DS_VERSION_MINOR/ {b = $3} /define DS_VERSION_PATCH/ {c = $3}
	END {print a "." b "." c}' "$incdir/dsostore.h")" ] ||
	fail "Version: $(pkg-config --modversion dsostore) is not the header's"
tl_case_end

# A staged install (packagers: DESTDIR) names the final prefix, not the
# staging directory.
tl_case "DESTDIR"
if DESTDIR=$tmp/stage cmake --install "$DS_BUILD" --prefix /opt/dsostore >stage.log 2>&1; then
	staged=$(find "$tmp/stage" -name dsostore.pc)
	case $staged in
	"$tmp"/stage/opt/dsostore/*/pkgconfig/dsostore.pc)
		grep -qx 'prefix=/opt/dsostore' "$staged" ||
			fail "staged .pc: $(grep '^prefix=' "$staged")"
		;;
	*) fail "the staged .pc is not under DESTDIR/opt/dsostore: '$staged'" ;;
	esac
else
	fail "DESTDIR=... cmake --install failed: $(tail -5 stage.log)"
fi
tl_case_end

cat >prog.c <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <dsostore.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

__attribute__((noinline)) int marker(int x)
{
	return x * 3 + 1;
}

int main(void)
{
	struct ds_build_id bid;
	struct ds_sym_result r;
	struct ds_context *ctx;
	struct ds_store *store;
	struct ds_dso *dso;
	char hex[2 * DS_BUILD_ID_MAX + 1];
	uint64_t addr;
	Dl_info dl;
	int rc;

	rc = ds_build_id_parse("0123456789ABCDEF0123456789abcdef01234567", &bid);
	if (rc || ds_build_id_format(&bid, hex, sizeof(hex)) < 0)
		return 1;
	printf("parsed %s %u\n", hex, bid.size);
	printf("odd %s\n", ds_build_id_parse("abc", &bid) == -EINVAL ? "EINVAL" : "other");
	if (ds_build_id_read_file("/proc/self/exe", &bid) ||
	    ds_build_id_format(&bid, hex, sizeof(hex)) < 0)
		return 1;
	printf("self %s\n", hex);
	ctx = ds_context_new(NULL);
	store = ctx ? ds_store_new(ctx, "host", NULL) : NULL;
	dso = store ? ds_store_findnew(store, "/proc/self/exe", NULL) : NULL;
	if (!dso)
		return 1;
	/* A PIE is loaded at dli_fbase: marker's address in the file is
	 * its address less that. */
	if (!dladdr((void *)marker, &dl))
		return 1;
	addr = (uint64_t)((uintptr_t)marker - (uintptr_t)dl.dli_fbase);
	rc = ds_dso_symbolize(dso, addr, 0, &r);
	if (rc || !r.nframes)
		return 1;
	printf("sym %#llx %s %s:%u\n", (unsigned long long)addr, r.frames[0].function,
	       r.frames[0].file, r.frames[0].line);
	ds_sym_result_release(&r);
	ds_dso_put(dso);
	ds_store_free(store);
	ds_context_free(ctx);
	return marker(0) == 1 ? 0 : 1;
}
EOF
self=1b5e1f0a11ed0000c0ffee0000decade00000009

# check NAME BINARY: its output against first principles and addr2line.
check() {
	local name=$1 bin=$2 addr want
	shift 2
	if ! "$@" "./$bin" >"$bin.out" 2>"$bin.err"; then
		fail "$name: the program failed: $(head -5 "$bin.err")"
		return
	fi
	addr=$(awk '$1 == "sym" {print $2}' "$bin.out")
	{
		echo "parsed 0123456789abcdef0123456789abcdef01234567 20"
		echo "odd EINVAL"
		echo "self $self"
		echo "sym $addr $(addr2line -f -e "$bin" "$addr" | paste -sd' ')"
	} >"$bin.want"
	cmp -s "$bin.want" "$bin.out" || fail "$name: $(diff "$bin.want" "$bin.out")"
}

build() {
	local out=$1
	shift
	# shellcheck disable=SC2046 # pkg-config's words are the point
	cc -g -O1 -fPIE -pie "${san[@]}" -Wl,--build-id=0x$self -o "$out" prog.c \
		$(pkg-config "$@" --cflags --libs dsostore) >"$out.log" 2>&1
}

tl_case "shared, pkg-config --cflags --libs"
if build prog-shared; then
	readelf -d prog-shared | grep -q 'NEEDED.*\[libdsostore\.so\.0\]' ||
		fail "readelf: prog-shared does not need libdsostore.so.0"
	check shared prog-shared env LD_LIBRARY_PATH="$libdir"
else
	fail "compiling against the installed library: $(head -5 prog-shared.log)"
fi
tl_case_end

tl_case "static, pkg-config --static --cflags --libs"
rm -f "$libdir"/libdsostore.so*
if build prog-static --static; then
	! readelf -d prog-static | grep -q 'NEEDED.*libdsostore' ||
		fail "readelf: prog-static still needs libdsostore"
	check static prog-static env
else
	fail "linking the archive with pkg-config --static: $(grep -m3 -i 'undefined\|error' prog-static.log)"
fi
tl_case_end

# The addr2line personality's link (tools/cmd_addr2line.c): in a directory
# of its own under the prefix, naming the installed CLI, answering as
# binutils' addr2line for the program just built.
tl_case "libexec/dsostore/bin/addr2line"
link=$prefix/libexec/dsostore/bin/addr2line
if [ -L "$link" ] && [ "$(readlink -f "$link")" = "$(readlink -f "$prefix/bin/dsostore")" ]; then
	addr=$(nm prog-static 2>/dev/null | awk '$3 == "marker" {print $1}')
	want=$(addr2line -f -i -e prog-static "$addr" 2>&1)
	got=$(PATH=${link%/addr2line}:$PATH addr2line -f -i -e prog-static "$addr" 2>&1)
	[ -n "$addr" ] && [ "$got" = "$want" ] ||
		fail "addr2line through the link: '$got', binutils: '$want'"
else
	fail "no link $link to $prefix/bin/dsostore: $(ls -l "${link%/*}" 2>&1 | head -3)"
fi
tl_case_end

# The man page and the bash completion the build wrote from the CLI's
# option tables, where man and bash-completion look under the prefix.
tl_case "man page and bash completion"
man1=$(find "$prefix" -path '*/man1/dsostore.1')
comp=$prefix/share/bash-completion/completions/dsostore
[ -n "$man1" ] && grep -q '^\.TH DSOSTORE 1' "$man1" && grep -q '^\.SS report$' "$man1" ||
	fail "no man page man1/dsostore.1 with a section per command under $prefix: '$man1'"
[ -f "$comp" ] && bash -n "$comp" && grep -q 'complete .*-F _dsostore dsostore' "$comp" ||
	fail "no bash completion at $comp"
tl_case_end

tl_finish install
