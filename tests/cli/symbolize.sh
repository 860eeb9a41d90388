#!/bin/bash
# `dsostore symbolize` against the oracles.
#
# Generated C and C++ sources (tests/gen/symbolize_gen.py: always_inline
# helpers nested three deep, loops, switches, recursion, templates,
# namespaces, methods, lambdas, operators) are built as many ways as the
# issue lists: gcc and clang; -O0/-O2/-O3; DWARF 4 and 5; compressed debug
# sections (by the linker and by objcopy); PIE, non-PIE and a shared
# library; split debuginfo found by build ID; a dwz -m pair whose alt file
# is found by its build ID; a MiniDebugInfo-only binary.  For each, about
# 500 addresses (every function's start, start+1, last byte, random bytes
# inside, padding between functions, addresses outside every section) go
# through `dsostore symbolize -e BIN -f -i -a` and `addr2line -f -i -a`,
# whose whole outputs must be identical.  Subsets are also checked in LLVM
# style against llvm-symbolizer and in JSON against addr2line's frames;
# then build-ID mode (a mixed stream with bad lines) and --file-offset.
#
# Where addr2line is known to be wrong, a substitute is used and said so:
# dwz and MiniDebugInfo below (/work/shared/REFERENCES.md, "Oracles have
# bugs too"); clang's DW_FORM_rnglistx, which addr2line 2.40 ignores, and
# C++ functions without a linkage name, which it names depending on what
# it was asked before, in symbolize_gen.py's gnu_oracle().
#
# DS_KEEP_TMP=1 keeps the scratch directory; SYMTEST_ONLY=REGEX runs only
# the checks whose names match (bidmode.* and *.fileoff.bid need the check
# their name starts with).
set -u

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
SRC=${DS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/lib/testlib.bash"
tl_need gcc g++ clang clang++ ld.lld addr2line llvm-symbolizer nm readelf \
	objcopy strip dwz xz python3 eu-readelf

GEN=(python3 "$SRC/tests/gen/symbolize_gen.py")
tl_tmpdir dssym
T=$tmp
# Nothing of the user's: no ~/.debug, no servers, no /usr/lib/debug.
export HOME=$T/home PERF_BUILDID_DIR=$T/perf
unset DEBUGINFOD_URLS
S=$T/src B=$T/bin D=$T/debug E=$T/empty W=$T/work
mkdir -p "$HOME" "$PERF_BUILDID_DIR" "$S" "$B" "$D" "$E" "$W"
START=$SECONDS

wanted()
{
	[ -z "${SYMTEST_ONLY:-}" ] || [[ $1 =~ $SYMTEST_ONLY ]]
}

bid_of()
{
	eu-readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'
}

# Put FILE in the debug dir under its build ID (<D>/.build-id/xx/rest
# SUFFIX), as distributions do.
install_bid()
{
	local dir=$1 file=$2 suffix=$3 bid
	bid=$(bid_of "$file")
	[ -n "$bid" ] || return 1
	mkdir -p "$dir/.build-id/${bid:0:2}"
	cp "$file" "$dir/.build-id/${bid:0:2}/${bid:2}$suffix"
}

# ---------------------------------------------------------------- sources

"${GEN[@]}" gen "$S/c" --lang c --seed 11 --funcs 22 >/dev/null || exit 2
"${GEN[@]}" gen "$S/cxx" --lang cpp --seed 12 --funcs 20 >/dev/null || exit 2
"${GEN[@]}" gen "$S/so" --lang c --seed 13 --funcs 20 --lib --prefix so >/dev/null || exit 2
# The dwz pair shares common.h (one directory), so that dwz -m finds DIEs
# common to both: the inlined cm_* helpers land in the alt file.
"${GEN[@]}" gen "$S/dz" --lang c --seed 14 --funcs 16 --prefix p1 >/dev/null || exit 2
"${GEN[@]}" gen "$S/dz" --lang c --seed 15 --funcs 16 --prefix p2 >/dev/null || exit 2

# ----------------------------------------------------------------- builds

# build NAME COMPILER FLAGS... -- SOURCES...: one variant, in the background
# (two at a time: the machine has two cores).
build()
{
	local name=$1
	shift
	local cmd=() srcs
	while [ "$1" != -- ]; do
		cmd+=("$1")
		shift
	done
	shift
	srcs=("$@")
	while [ "$(jobs -rp | wc -l)" -ge 2 ]; do
		wait -n
	done
	"${cmd[@]}" -Wl,--build-id=sha1 -o "$B/$name" "${srcs[@]}" >"$B/$name.log" 2>&1 &
}

build gcc_O0_dw4 gcc -O0 -gdwarf-4 -- "$S"/c/*.c
build gcc_O2_dw5 gcc -O2 -gdwarf-5 -- "$S"/c/*.c
build gcc_O3_dw5_nopie gcc -O3 -gdwarf-5 -fno-pie -no-pie -- "$S"/c/*.c
build gcc_O2_dw4_zlib gcc -O2 -gdwarf-4 -Wl,--compress-debug-sections=zlib -- "$S"/c/*.c
build clang_O0_dw5 clang -O0 -gdwarf-5 -- "$S"/c/*.c
build clang_O2_dw4_nopie clang -O2 -gdwarf-4 -fno-pie -no-pie -- "$S"/c/*.c
build clang_O3_dw5 clang -O3 -gdwarf-5 -- "$S"/c/*.c
build gxx_O2_dw5 g++ -O2 -gdwarf-5 -- "$S"/cxx/*.cc
build gxx_O0_dw4 g++ -O0 -gdwarf-4 -- "$S"/cxx/*.cc
build clangxx_O2_dw4 clang++ -O2 -gdwarf-4 -- "$S"/cxx/*.cc
build gcc_so_O2 gcc -O2 -gdwarf-5 -shared -fPIC -- "$S"/so/*.c
# lld starts the text segment at an address that is not its file offset,
# which is what --file-offset has to get right.
build clang_so_O2_lld clang -O2 -gdwarf-5 -shared -fPIC -fuse-ld=lld -- "$S"/so/*.c
build dz_a gcc -O2 -gdwarf-5 -- "$S"/dz/p1*.c
build dz_b gcc -O2 -gdwarf-5 -- "$S"/dz/p2*.c
wait
for log in "$B"/*.log; do
	name=$(basename "$log" .log)
	if [ ! -x "$B/$name" ]; then
		echo "build of $name failed:" >&2
		cat "$log" >&2
		exit 2
	fi
done

# Compressed by objcopy rather than by the linker.
objcopy --compress-debug-sections=zlib "$B/clang_O3_dw5" "$B/clang_O3_dw5_zlib" || exit 2
for bin in gcc_O2_dw4_zlib clang_O3_dw5_zlib; do
	# readelf -t prints COMPRESSED and ZLIB lines under a compressed section.
	if ! readelf -tW "$B/$bin" | grep -A3 '\.debug_info$' | grep -q ZLIB; then
		echo "$bin: .debug_info is not compressed" >&2
		exit 2
	fi
done

# Split debuginfo: the stripped binary, the .debug under its build ID.
split()
{
	local from=$1 to=$2
	objcopy --only-keep-debug "$B/$from" "$B/$to.debug" || exit 2
	strip --strip-all -o "$B/$to" "$B/$from" || exit 2
	install_bid "$D" "$B/$to.debug" .debug || exit 2
}
split gcc_O2_dw5 split_gcc_O2
split gxx_O2_dw5 split_gxx_O2

# dwz -m: both .debug files get a .gnu_debugaltlink to common.debug.  The
# name recorded there (-M) leads nowhere on purpose: the alt file must be
# found by its build ID in the debug dir, as on a distribution whose
# debug packages are installed somewhere else than they were built.
objcopy --only-keep-debug "$B/dz_a" "$B/dwz_a.debug" || exit 2
objcopy --only-keep-debug "$B/dz_b" "$B/dwz_b.debug" || exit 2
(cd "$B" && dwz -m common.debug -M /nonexistent/.dwz/sg-common.debug \
	dwz_a.debug dwz_b.debug) || exit 2
if ! readelf -SW "$B/dwz_a.debug" | grep -q gnu_debugaltlink; then
	echo "dwz produced no .gnu_debugaltlink" >&2
	exit 2
fi
strip --strip-all -o "$B/dwz_a" "$B/dz_a" || exit 2
strip --strip-all -o "$B/dwz_b" "$B/dz_b" || exit 2
install_bid "$D" "$B/dwz_a.debug" .debug || exit 2
install_bid "$D" "$B/dwz_b.debug" .debug || exit 2
install_bid "$D" "$B/common.debug" .debug || exit 2

# MiniDebugInfo as Fedora's find-debuginfo makes it: strip everything,
# then add .gnu_debugdata, an xz-compressed ELF holding only a .symtab of
# the function symbols that .dynsym lacks.
minidebuginfo()
{
	local from=$1 to=$2 rm_args
	nm -D --format=posix --defined-only "$B/$from" | awk '{ print $1 }' |
		sort >"$W/$to.dynsyms"
	nm --format=posix --defined-only "$B/$from" |
		awk '$2 == "T" || $2 == "t" { print $1 }' | sort >"$W/$to.funcsyms"
	comm -13 "$W/$to.dynsyms" "$W/$to.funcsyms" >"$W/$to.keep"
	objcopy --only-keep-debug "$B/$from" "$W/$to.mini" || exit 2
	# Every section with contents except the symbol table goes.
	rm_args=$(readelf -SW "$W/$to.mini" | sed -n 's/^ *\[ *[0-9]*\] *//p' |
		awk '$1 ~ /^\./ && $2 != "NOBITS" && $1 != ".symtab" &&
		     $1 != ".strtab" && $1 != ".shstrtab" { print "--remove-section=" $1 }')
	# shellcheck disable=SC2086
	objcopy -S $rm_args --keep-symbols="$W/$to.keep" "$W/$to.mini" || exit 2
	xz -9 "$W/$to.mini" || exit 2
	strip --strip-all -o "$B/$to" "$B/$from" || exit 2
	objcopy --add-section .gnu_debugdata="$W/$to.mini.xz" "$B/$to" || exit 2
}
minidebuginfo gcc_O2_dw5 mdi_gcc_O2

echo "built in $((SECONDS - START)) s"

# ----------------------------------------------------------------- checks

# check NAME KIND key=value... -- dsostore-arguments...: one line of the
# manifest for symbolize_gen.py (which picks the input and asks the
# oracles), and the command line of ours, run with NAME.in on stdin.
MANIFEST=$W/manifest
: >"$MANIFEST"
declare -A ARGS
check()
{
	local name=$1 params=()
	shift
	while [ "$1" != -- ]; do
		params+=("$1")
		shift
	done
	shift
	wanted "$name" || return 0
	echo "$name ${params[*]}" >>"$MANIFEST"
	ARGS[$name]=$(printf '%q ' "$@")
}

# GNU style, the whole -a -f -i output against addr2line's.
gnu()
{
	local name=$1 bin=$2 oracle=$3 dm=$4 c=()
	shift 4
	[ "$dm" = C ] && c=(-C)
	check "$name" gnu oracle="$oracle" dm="$dm" -- "$@" "${c[@]}" -f -i -a -e "$bin"
}

gnu gcc_O0_dw4 "$B/gcc_O0_dw4" "$B/gcc_O0_dw4" -
gnu gcc_O2_dw5 "$B/gcc_O2_dw5" "$B/gcc_O2_dw5" -
gnu gcc_O3_dw5_nopie "$B/gcc_O3_dw5_nopie" "$B/gcc_O3_dw5_nopie" -
gnu gcc_O2_dw4_zlib "$B/gcc_O2_dw4_zlib" "$B/gcc_O2_dw4_zlib" -
gnu clang_O0_dw5 "$B/clang_O0_dw5" "$B/clang_O0_dw5" -
gnu clang_O2_dw4_nopie "$B/clang_O2_dw4_nopie" "$B/clang_O2_dw4_nopie" -
# addr2line 2.40 loses inline frames described with DW_FORM_rnglistx
# (clang -gdwarf-5 -O2 and up); symbolize_gen.py's gnu_oracle takes
# llvm-symbolizer's chain exactly where addr2line's is its truncation.
gnu clang_O3_dw5_zlib "$B/clang_O3_dw5_zlib" "$B/clang_O3_dw5_zlib" -
gnu gxx_O2_dw5 "$B/gxx_O2_dw5" "$B/gxx_O2_dw5" -
gnu gxx_O2_dw5_C "$B/gxx_O2_dw5" "$B/gxx_O2_dw5" C
gnu gxx_O0_dw4_C "$B/gxx_O0_dw4" "$B/gxx_O0_dw4" C
gnu clangxx_O2_dw4_C "$B/clangxx_O2_dw4" "$B/clangxx_O2_dw4" C
gnu gcc_so_O2 "$B/gcc_so_O2" "$B/gcc_so_O2" -
# Every byte of the largest functions as well (dense=N bytes): answers
# shared between neighbouring addresses must stop at each boundary.
gnu_dense() {
	local name=$1 bin=$2 dm=$3 c=()
	[ "$dm" = C ] && c=(-C)
	check "$name" gnu oracle="$bin" dm="$dm" dense=6000 -- "${c[@]}" -f -i -a -e "$bin"
}
gnu_dense gcc_O2_dw5_dense "$B/gcc_O2_dw5" -
gnu_dense gxx_O2_dw5_C_dense "$B/gxx_O2_dw5" C
gnu_dense clang_O3_dw5_zlib_dense "$B/clang_O3_dw5_zlib" -
gnu clang_so_O2_lld "$B/clang_so_O2_lld" "$B/clang_so_O2_lld" -
# Stripped binaries: the debuginfo is found by build ID in --debug-dir.
gnu split_gcc_O2 "$B/split_gcc_O2" "$B/gcc_O2_dw5" - --debug-dir "$D"
gnu split_gxx_O2_C "$B/split_gxx_O2" "$B/gxx_O2_dw5" C --debug-dir "$D"
# addr2line drops or misnames inline frames on dwz output (the names live
# in the alt file's partial units), so the oracle is addr2line on the same
# binary before dwz (REFERENCES.md, "Oracles have bugs too").
gnu dwz_a "$B/dwz_a" "$B/dz_a" - --debug-dir "$D"
gnu dwz_b "$B/dwz_b" "$B/dz_b" - --debug-dir "$D"
# MiniDebugInfo: addr2line reads no .gnu_debugdata, so the oracle is first
# principles: the function symbol (nm -S of the unstripped binary) holding
# the address with no line (NAME, ??:?), or ??/??:0 outside every section;
# padding, which has no factual answer from a symbol table, is left out.
# The debug dir is empty: the binary shares its build ID with gcc_O2_dw5,
# whose full debuginfo must not be found.
check mdi_gcc_O2 mdi oracle="$B/gcc_O2_dw5" -- --debug-dir "$E" -f -i -a -e "$B/mdi_gcc_O2"

# LLVM style on every third address of a GNU check, against
# llvm-symbolizer (which demangles unless told not to).  Where the two
# oracles disagree, ours must carry addr2line's function, file and line:
# the styles print one answer.
llvm()
{
	local from=$1 bin=$2 dm=$3 c=()
	[ "$dm" = C ] && c=(-C)
	check "$from.llvm" llvm from="$from" bin="$bin" dm="$dm" -- \
		"${c[@]}" --output-style=LLVM -f -i -a -e "$bin"
}
llvm gcc_O2_dw5 "$B/gcc_O2_dw5" -
llvm clang_O2_dw4_nopie "$B/clang_O2_dw4_nopie" -
llvm gxx_O2_dw5_C "$B/gxx_O2_dw5" C
llvm clangxx_O2_dw4_C "$B/clangxx_O2_dw4" C
llvm clang_so_O2_lld "$B/clang_so_O2_lld" -

# JSON: one object per address whose frames are addr2line's.
json()
{
	local from=$1 bin=$2 dm=$3 c=()
	[ "$dm" = C ] && c=(-C)
	check "$from.json" json from="$from" bin="$bin" dm="$dm" -- \
		"${c[@]}" --output-style=JSON -f -i -e "$bin"
}
json gcc_O2_dw5 "$B/gcc_O2_dw5" -
json gxx_O2_dw5_C "$B/gxx_O2_dw5" C
json clang_O0_dw5 "$B/clang_O0_dw5" -

# Build-ID mode: a stream over four binaries, two named by build ID (in
# their own debug dir: a .debug for one, the whole unstripped file for the
# other, each next to the executable under the name without .debug) and
# two by path, with bad lines among them (not hex, unknown build IDs,
# garbage, a missing file): addr2line's block per good line, ??/??:0 and
# one stderr line per bad line, exit status 1.  -C throughout: C names do
# not change.  Then the good lines alone with -a (exit 0), and JSON.
BD=$T/bdebug
mkdir -p "$BD"
objcopy --only-keep-debug "$B/gcc_O2_dw5" "$W/bid1.debug" || exit 2
install_bid "$BD" "$W/bid1.debug" .debug || exit 2
install_bid "$BD" "$B/gcc_O2_dw5" "" || exit 2
install_bid "$BD" "$B/gcc_O3_dw5_nopie" .debug || exit 2
install_bid "$BD" "$B/gcc_O3_dw5_nopie" "" || exit 2
check bidmode bid dm=C n=60 \
	src="$(bid_of "$B/gcc_O2_dw5"):$B/gcc_O2_dw5" \
	src="$B/clang_so_O2_lld:$B/clang_so_O2_lld" \
	src="$(bid_of "$B/gcc_O3_dw5_nopie"):$B/gcc_O3_dw5_nopie" \
	src="$B/gxx_O2_dw5:$B/gxx_O2_dw5" -- --debug-dir "$BD" -C -f -i
check bidmode.good bidgood from=bidmode -- --debug-dir "$BD" -C -f -i -a
check bidmode.json bidjson from=bidmode -- --debug-dir "$BD" -C -f -i --output-style=JSON

# --file-offset: offsets computed from PT_LOAD (readelf) answer as their
# virtual addresses do with addr2line; an offset outside every segment
# gets ??/??:0 (and in build-ID mode, "PATH OFFSET" lines, is a bad line:
# one stderr line, exit status 1).  lld's .so and the non-PIE executable
# have text whose address is not its offset.
offsets()
{
	local name=$1 bin=$2
	check "$name.fileoff" off bin="$bin" n=200 -- --file-offset -f -i -e "$bin"
	check "$name.fileoff.bid" offbid from="$name.fileoff" bin="$bin" -- --file-offset -f -i
}
offsets clang_so_O2_lld "$B/clang_so_O2_lld"
offsets gcc_so_O2 "$B/gcc_so_O2"
offsets gcc_O3_dw5_nopie "$B/gcc_O3_dw5_nopie"

"${GEN[@]}" prepare "$MANIFEST" "$W" || exit 2
echo "oracles asked in $((SECONDS - START)) s"

while read -r name _; do
	eval "\"\$DSOSTORE\" symbolize ${ARGS[$name]}" <"$W/$name.in" \
		>"$W/$name.out" 2>"$W/$name.err"
	echo $? >"$W/$name.rc"
done <"$MANIFEST"
echo "dsostore ran in $((SECONDS - START)) s"

"${GEN[@]}" verdict "$MANIFEST" "$W"
rc=$?
echo "symbolize.sh: $((SECONDS - START)) s"
exit $rc
