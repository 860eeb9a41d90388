#!/bin/bash
# Local debuginfo lookup (lib/locate) through `dsostore find`.
#
# Each case builds a directory layout by hand from binaries compiled here,
# so the expected answer is known from first principles: we put the file
# there.  Build IDs come from eu-readelf, debuglink CRCs from python's zlib.
# Documented order: the binary itself, <debugdir>/.build-id/xx/rest.debug,
# .gnu_debuglink (binary's dir, its .debug/, <debugdir>/<binary's dir>/),
# perf's build-id cache (debug, then elf); every candidate's build ID must
# match.
set -u
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc objcopy eu-readelf readelf python3

# canonical (tl_tmpdir): the debuglink and perf-cache layouts are keyed by
# the binary's canonical directory, so the test's own paths must be too.
tl_tmpdir dslocate
T=$tmp
# Keep the user's ~/.debug and environment out of every case.
export HOME=$T/home
unset PERF_BUILDID_DIR DEBUGINFOD_URLS
mkdir -p "$HOME" "$T/empty"
cd "$T/empty" || exit 2

# --------------------------------------------------------------- fixtures

B=$T/build
mkdir -p "$B"
build()
{
	# $1: name, $2: text making the program (and so its build ID) unique
	printf '#include <stdio.h>\nint %s_fn(int x) { return x * 3 + %d; }\n' "$1" "$2" >"$B/$1.c"
	printf 'int main(int c, char **v) { (void)v; printf("%%d\\n", %s_fn(c)); return 0; }\n' \
		"$1" >>"$B/$1.c"
	gcc -g -O0 -Wl,--build-id=sha1 -o "$B/$1" "$B/$1.c" || exit 2
	objcopy --only-keep-debug "$B/$1" "$B/$1.debug" || exit 2
	# The standard split: strip, then link to the .debug by name + CRC.
	objcopy --strip-debug "$B/$1" "$B/$1.stripped" || exit 2
	objcopy --add-gnu-debuglink="$B/$1.debug" "$B/$1.stripped" || exit 2
}
build prog 1
build other 2
# Same build ID as prog.debug (the note is kept), different bytes: a CRC
# mismatch for prog's debuglink.
head -c 4096 /dev/urandom >"$B/junk"
objcopy --add-section .junk="$B/junk" "$B/prog.debug" "$B/prog.debug.badcrc" || exit 2
# An ELF without a build ID, for the error paths.
gcc -O0 -Wl,--build-id=none -o "$B/nobid" "$B/prog.c" || exit 2

readelf_bid()
{
	eu-readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'
}
BID=$(readelf_bid "$B/prog")
OTHER_BID=$(readelf_bid "$B/other")

# The debuglink section: file name, NUL padding to 4, then the CRC32 in
# the target's byte order (the host's: we built for it).
debuglink_crc()
{
	objcopy -O binary --only-section=.gnu_debuglink \
		--set-section-flags .gnu_debuglink=alloc "$1" "$T/dl.bin" || return 1
	python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
print("%08x" % struct.unpack("=I", d[-4:])[0])' "$T/dl.bin"
}
file_crc()
{
	python3 -c 'import sys, zlib
print("%08x" % zlib.crc32(open(sys.argv[1], "rb").read()))' "$1"
}

# Path helpers.
bidpath() # DIR [SUFFIX] [HEX]
{
	local hex=${3:-$BID}
	echo "$1/.build-id/${hex:0:2}/${hex:2}${2:-}"
}
put() # SRC DST: copy, creating directories
{
	mkdir -p "${2%/*}" && cp "$1" "$2"
}
# perf's layout: <root>/<realpath>/<hex>/NAME, and the relative link
# <root>/.build-id/xx/rest -> ../../<realpath without leading />/<hex>.
# (Every path under $T is already canonical: BINARY is its realpath.)
perf_put() # ROOT BINARY NAME SRC
{
	local dir=$1$2/$BID link

	link=$(bidpath "$1")
	put "$4" "$dir/$3"
	mkdir -p "${link%/*}"
	ln -sfn "../..$2/$BID" "$link"
}
perf_file() # ROOT BINARY NAME: the file perf_put made
{
	echo "$1$2/$BID/$3"
}

# Per case: $C is a fresh directory; $BIN the stripped binary (with its
# debuglink) at $C/bin/prog; $D, $D2 debug dirs; $P a perf root.
new_case()
{
	tl_case "$1"
	C=$T/cases/$1
	BIN=$C/bin/prog
	D=$C/debug
	D2=$C/debug2
	P=$C/perf
	mkdir -p "$C/bin" "$D" "$D2" "$P"
	cp "$B/prog.stripped" "$BIN"
}

# ---------------------------------------------------------------- running

# Extra environment (NAME=VALUE...) for the next runs.
ENVS=()
slurp() # VAR FILE: the file without its last newline, forking nothing
{
	IFS= read -r -d '' "$1" <"$2"
	printf -v "$1" '%s' "${!1%$'\n'}"
}
run() # dsostore find ARGS...; sets OUT ERR RC
{
	if [ ${#ENVS[@]} = 0 ]; then
		"$DSOSTORE" find "$@" >"$T/out" 2>"$T/err"
	else
		env "${ENVS[@]}" "$DSOSTORE" find "$@" >"$T/out" 2>"$T/err"
	fi
	RC=$?
	slurp OUT "$T/out"
	slurp ERR "$T/err"
}

# Found at exactly WANT from SOURCE (-s; case_plain_output checks the
# output without -s).
expect_found() # WANT SOURCE ARGS...
{
	local want=$1 src=$2
	shift 2
	run -s "$@"
	if [ "$RC" != 0 ] || [ "$OUT" != "$want $src" ]; then
		fail "find -s $*: want '$want $src' (exit 0), got '$OUT' (exit $RC); stderr: $ERR"
	fi
}

# Found a path naming the same file as WANT (for answers reached through a
# symlink, where either the link or its target is a right answer).
expect_found_file() # WANT SOURCE ARGS...
{
	local want=$1 src=$2 path
	shift 2
	run -s "$@"
	path=${OUT% *}
	if [ "$RC" != 0 ] || [ "${OUT##* }" != "$src" ] || [ "${path:0:1}" != / ] ||
		[ "$(readlink -f "$path")" != "$(readlink -f "$want")" ]; then
		fail "find -s $*: want '$want' (or a link to it) '$src', got '$OUT' (exit $RC); stderr: $ERR"
	fi
}

# Not found: exit 1, nothing on stdout, and stderr says where it looked.
expect_missing() # ARGS...
{
	run "$@"
	if [ "$RC" != 1 ] || [ -n "$OUT" ] || [ -z "$ERR" ]; then
		fail "find $*: want not found (exit 1, empty stdout, a reason), got '$OUT' (exit $RC); stderr: $ERR"
	fi
}

err_has() # TEXT: the last run's stderr mentions TEXT
{
	grep -qF -- "$1" "$T/err" || fail "stderr does not mention '$1': $ERR"
}
err_lacks() # TEXT
{
	! grep -qF -- "$1" "$T/err" || fail "stderr mentions '$1' but should not: $ERR"
}
# The stderr line naming PATH also gives a reason matching REGEX.
err_reason() # PATH REGEX
{
	grep -F -- "$1" "$T/err" | grep -qiE -- "$2" ||
		fail "stderr has no line naming '$1' with a reason matching /$2/: $ERR"
}

NOPERF=(--perf-buildid-dir "")

# ------------------------------------------------------------------ cases

# The fixtures are what the cases assume; a wrong premise would make every
# verdict below meaningless.
case_premises()
{
	[ ${#BID} = 40 ] || fail "eu-readelf gave build ID '$BID' for prog"
	[ ${#OTHER_BID} = 40 ] && [ "$OTHER_BID" != "$BID" ] || fail "other's build ID '$OTHER_BID'"
	for f in prog.debug prog.stripped prog.debug.badcrc; do
		[ "$(readelf_bid "$B/$f")" = "$BID" ] || fail "$f does not carry prog's build ID"
	done
	[ -z "$(readelf_bid "$B/nobid")" ] || fail "nobid has a build ID"
	readelf -SW "$B/prog" 2>/dev/null | grep -q ' \.debug_info ' || fail "prog lacks .debug_info"
	readelf -SW "$B/prog.debug" 2>/dev/null | grep -q ' \.debug_info ' || fail "prog.debug lacks .debug_info"
	! readelf -SW "$B/prog.stripped" 2>/dev/null | grep -q ' \.debug_info ' || fail "prog.stripped has .debug_info"
	readelf -SW "$B/prog.debug" 2>/dev/null | grep -qE ' \.text +NOBITS ' || fail "prog.debug has a .text with bytes"
	local want
	want=$(debuglink_crc "$B/prog.stripped")
	[ "$want" = "$(file_crc "$B/prog.debug")" ] || fail "debuglink CRC $want != crc32(prog.debug)"
	[ "$want" != "$(file_crc "$B/prog.debug.badcrc")" ] || fail "badcrc has the right CRC"
	[ "$want" != "$(file_crc "$B/other.debug")" ] || fail "other.debug has prog's CRC"
}

# ---- the binary itself

case_self_unstripped()
{
	cp "$B/prog" "$C/bin/full"
	expect_found "$C/bin/full" self --debug-dir "$D" "${NOPERF[@]}" "$C/bin/full"
	expect_found "$C/bin/full" self --debuginfo --debug-dir "$D" "${NOPERF[@]}" "$C/bin/full"
	# Its build ID alone does not name it: nothing else holds it.
	expect_missing --debug-dir "$D" "${NOPERF[@]}" "$BID"
}

case_self_stripped_nothing_anywhere()
{
	expect_missing --debug-dir "$D" --perf-buildid-dir "$P" "$BIN"
	err_has "$(bidpath "$D" .debug)"
	err_has "$C/bin/prog.debug"
	err_has "$C/bin/.debug/prog.debug"
	err_has "$D$C/bin/prog.debug"
	err_has "$(bidpath "$P")"
	# By build ID alone: the build-id dir and perf cache, nothing else.
	expect_missing --debug-dir "$D" --perf-buildid-dir "$P" "$BID"
	err_has "$(bidpath "$D" .debug)"
	err_has "$(bidpath "$P")"
}

case_self_stripped_all_no_debuglink()
{
	objcopy --strip-all "$B/prog" "$C/bin/bare"
	expect_missing --debug-dir "$D" "${NOPERF[@]}" "$C/bin/bare"
	err_has "$(bidpath "$D" .debug)"
}

# ---- <debugdir>/.build-id/xx/rest.debug

case_buildid_dir_found()
{
	put "$B/prog.debug" "$(bidpath "$D" .debug)"
	expect_found "$(bidpath "$D" .debug)" build-id-dir --debug-dir "$D" "${NOPERF[@]}" "$BIN"
	expect_found "$(bidpath "$D" .debug)" build-id-dir --debug-dir "$D" "${NOPERF[@]}" "$BID"
}

case_buildid_dir_second_of_several()
{
	put "$B/prog.debug" "$(bidpath "$D2" .debug)"
	expect_found "$(bidpath "$D2" .debug)" build-id-dir \
		--debug-dir "$D" --debug-dir "$D2" "${NOPERF[@]}" "$BID"
	expect_found "$(bidpath "$D2" .debug)" build-id-dir \
		--debug-dir "$C/no-such-dir" --debug-dir "$D2" "${NOPERF[@]}" "$BIN"
}

case_buildid_dir_first_wins()
{
	put "$B/prog.debug" "$(bidpath "$D" .debug)"
	put "$B/prog.debug" "$(bidpath "$D2" .debug)"
	expect_found "$(bidpath "$D" .debug)" build-id-dir \
		--debug-dir "$D" --debug-dir "$D2" "${NOPERF[@]}" "$BID"
	expect_found "$(bidpath "$D2" .debug)" build-id-dir \
		--debug-dir "$D2" --debug-dir "$D" "${NOPERF[@]}" "$BID"
}

# /usr/lib/debug is looked at by default and only by default.  (We do not
# write there; the places listed on a miss show which dirs were used.)
case_buildid_dir_default_replaced()
{
	expect_missing "${NOPERF[@]}" "$BID"
	err_has "$(bidpath /usr/lib/debug .debug)"
	expect_missing --debug-dir "$D" "${NOPERF[@]}" "$BID"
	err_has "$(bidpath "$D" .debug)"
	err_lacks /usr/lib/debug
	expect_missing --debug-dir "$D" "${NOPERF[@]}" "$BIN"
	err_lacks /usr/lib/debug
}

case_buildid_dir_without_debug_suffix_ignored()
{
	# xx/rest (no suffix) is the executable's name, not the debuginfo's.
	put "$B/prog.debug" "$(bidpath "$D")"
	expect_missing --debug-dir "$D" "${NOPERF[@]}" "$BID"
}

# ---- a candidate with the wrong build ID

case_wrong_bid_rejected()
{
	put "$B/other.debug" "$(bidpath "$D" .debug)"
	expect_missing --debug-dir "$D" "${NOPERF[@]}" "$BIN"
	err_has "$(bidpath "$D" .debug)"
	expect_missing --debug-dir "$D" "${NOPERF[@]}" "$BID"
}

case_wrong_bid_then_right_in_next_dir()
{
	put "$B/other.debug" "$(bidpath "$D" .debug)"
	put "$B/prog.debug" "$(bidpath "$D2" .debug)"
	expect_found "$(bidpath "$D2" .debug)" build-id-dir \
		--debug-dir "$D" --debug-dir "$D2" "${NOPERF[@]}" "$BID"
}

case_wrong_bid_then_right_debuglink()
{
	put "$B/other.debug" "$(bidpath "$D" .debug)"
	cp "$B/prog.debug" "$C/bin/prog.debug"
	expect_found "$C/bin/prog.debug" debuglink --debug-dir "$D" "${NOPERF[@]}" "$BIN"
}

case_wrong_bid_then_right_perf()
{
	put "$B/other.debug" "$(bidpath "$D" .debug)"
	perf_put "$P" "$BIN" debug "$B/prog.debug"
	expect_found_file "$(perf_file "$P" "$BIN" debug)" perf-cache \
		--debug-dir "$D" --perf-buildid-dir "$P" "$BID"
}

case_wrong_bid_in_perf_cache()
{
	perf_put "$P" "$BIN" debug "$B/other.debug"
	perf_put "$P" "$BIN" elf "$B/other"
	expect_missing --debug-dir "$D" --perf-buildid-dir "$P" "$BIN"
	expect_missing --executable --debug-dir "$D" --perf-buildid-dir "$P" "$BID"
}

# ---- .gnu_debuglink

case_debuglink_same_dir()
{
	cp "$B/prog.debug" "$C/bin/prog.debug"
	expect_found "$C/bin/prog.debug" debuglink --debug-dir "$D" "${NOPERF[@]}" "$BIN"
	# A relative FILE: the debuglink is next to the binary, not the cwd.
	mkdir "$C/elsewhere"
	(cd "$C/bin" && run -s --debug-dir "$D" "${NOPERF[@]}" prog && [ "$RC" = 0 ] &&
		[ "${OUT##* }" = debuglink ] && [ "$(readlink -f "${OUT% *}")" = "$C/bin/prog.debug" ]) ||
		fail "relative FILE 'prog' (cwd $C/bin): no debuglink found"
	(cd "$C/elsewhere" && run -s --debug-dir "$D" "${NOPERF[@]}" ../bin/prog && [ "$RC" = 0 ] &&
		[ "$(readlink -f "${OUT% *}")" = "$C/bin/prog.debug" ]) ||
		fail "relative FILE '../bin/prog' (cwd $C/elsewhere): no debuglink found"
}

case_debuglink_dot_debug_subdir()
{
	put "$B/prog.debug" "$C/bin/.debug/prog.debug"
	expect_found "$C/bin/.debug/prog.debug" debuglink --debug-dir "$D" "${NOPERF[@]}" "$BIN"
}

case_debuglink_debugdir_mirror()
{
	put "$B/prog.debug" "$D$C/bin/prog.debug"
	expect_found "$D$C/bin/prog.debug" debuglink --debug-dir "$D" "${NOPERF[@]}" "$BIN"
	# In the second debug dir too.
	expect_found "$D$C/bin/prog.debug" debuglink \
		--debug-dir "$D2" --debug-dir "$D" "${NOPERF[@]}" "$BIN"
}

case_debuglink_dir_order()
{
	cp "$B/prog.debug" "$C/bin/prog.debug"
	put "$B/prog.debug" "$C/bin/.debug/prog.debug"
	put "$B/prog.debug" "$D$C/bin/prog.debug"
	local args=(--debug-dir "$D" "${NOPERF[@]}" "$BIN")
	expect_found "$C/bin/prog.debug" debuglink "${args[@]}"
	rm "$C/bin/prog.debug"
	expect_found "$C/bin/.debug/prog.debug" debuglink "${args[@]}"
	rm "$C/bin/.debug/prog.debug"
	expect_found "$D$C/bin/prog.debug" debuglink "${args[@]}"
}

# Right build ID, wrong CRC: debuglink promises these exact bytes.
case_debuglink_crc_mismatch()
{
	cp "$B/prog.debug.badcrc" "$C/bin/prog.debug"
	expect_missing --debug-dir "$D" "${NOPERF[@]}" "$BIN"
	err_reason "$C/bin/prog.debug" 'crc|checksum'
	# A good copy further along the debuglink dirs is still found.
	put "$B/prog.debug" "$C/bin/.debug/prog.debug"
	expect_found "$C/bin/.debug/prog.debug" debuglink --debug-dir "$D" "${NOPERF[@]}" "$BIN"
}

case_debuglink_other_file_same_name()
{
	cp "$B/other.debug" "$C/bin/prog.debug"
	put "$B/other.debug" "$C/bin/.debug/prog.debug"
	put "$B/other.debug" "$D$C/bin/prog.debug"
	expect_missing --debug-dir "$D" "${NOPERF[@]}" "$BIN"
	err_has "$C/bin/prog.debug"
	err_has "$C/bin/.debug/prog.debug"
	err_has "$D$C/bin/prog.debug"
}

# Without the binary there is no debuglink to follow.
case_debuglink_needs_the_file()
{
	cp "$B/prog.debug" "$C/bin/prog.debug"
	expect_missing --debug-dir "$D" "${NOPERF[@]}" "$BID"
	err_lacks "$C/bin/prog.debug"
}

# ---- perf's build-id cache

case_perf_debug_option()
{
	perf_put "$P" "$BIN" debug "$B/prog.debug"
	[ "$(readlink "$(bidpath "$P")")" = "../..$BIN/$BID" ] || fail "perf link not as perf makes it"
	expect_found_file "$(perf_file "$P" "$BIN" debug)" perf-cache \
		--debug-dir "$D" --perf-buildid-dir "$P" "$BIN"
	expect_found_file "$(perf_file "$P" "$BIN" debug)" perf-cache \
		--debug-dir "$D" --perf-buildid-dir "$P" "$BID"
}

case_perf_debug_env()
{
	perf_put "$P" "$BIN" debug "$B/prog.debug"
	ENVS=(PERF_BUILDID_DIR="$P")
	expect_found_file "$(perf_file "$P" "$BIN" debug)" perf-cache --debug-dir "$D" "$BID"
	ENVS=()
}

case_perf_debug_home_default()
{
	local h=$C/home
	perf_put "$h/.debug" "$BIN" debug "$B/prog.debug"
	ENVS=(HOME="$h")
	expect_found_file "$(perf_file "$h/.debug" "$BIN" debug)" perf-cache --debug-dir "$D" "$BID"
	# PERF_BUILDID_DIR wins over $HOME/.debug.
	ENVS=(HOME="$h" PERF_BUILDID_DIR="$P")
	expect_missing --debug-dir "$D" "$BID"
	ENVS=()
}

case_perf_disabled_by_empty()
{
	perf_put "$P" "$BIN" debug "$B/prog.debug"
	ENVS=(PERF_BUILDID_DIR="$P")
	expect_missing --debug-dir "$D" --perf-buildid-dir "" "$BID"
	err_lacks "$P"
	ENVS=()
	expect_missing --debug-dir "$D" --perf-buildid-dir "" "$BIN"
	err_lacks "$P"
}

case_perf_elf_with_debuginfo()
{
	perf_put "$P" "$BIN" elf "$B/prog"
	expect_found_file "$(perf_file "$P" "$BIN" elf)" perf-cache \
		--debug-dir "$D" --perf-buildid-dir "$P" "$BID"
}

case_perf_elf_without_debuginfo()
{
	perf_put "$P" "$BIN" elf "$B/prog.stripped"
	expect_missing --debug-dir "$D" --perf-buildid-dir "$P" "$BID"
}

case_perf_debug_before_elf()
{
	perf_put "$P" "$BIN" debug "$B/prog.debug"
	perf_put "$P" "$BIN" elf "$B/prog"
	expect_found_file "$(perf_file "$P" "$BIN" debug)" perf-cache \
		--debug-dir "$D" --perf-buildid-dir "$P" "$BID"
}

# ---- order between sources

# Every source holds a right file: self, build-id dir, debuglink, perf.
populate_all()
{
	put "$B/prog.debug" "$(bidpath "$D" .debug)"
	cp "$B/prog.debug" "$C/bin/prog.debug"
	perf_put "$P" "$BIN" debug "$B/prog.debug"
}

case_order_self_first()
{
	populate_all
	cp "$B/prog" "$C/bin/full"
	expect_found "$C/bin/full" self --debug-dir "$D" --perf-buildid-dir "$P" "$C/bin/full"
}

case_order_buildid_dir_before_debuglink()
{
	populate_all
	expect_found "$(bidpath "$D" .debug)" build-id-dir \
		--debug-dir "$D" --perf-buildid-dir "$P" "$BIN"
}

case_order_debuglink_before_perf()
{
	populate_all
	rm "$(bidpath "$D" .debug)"
	expect_found "$C/bin/prog.debug" debuglink --debug-dir "$D" --perf-buildid-dir "$P" "$BIN"
	rm "$C/bin/prog.debug"
	expect_found_file "$(perf_file "$P" "$BIN" debug)" perf-cache \
		--debug-dir "$D" --perf-buildid-dir "$P" "$BIN"
}

# ---- --executable

case_exec_self_stripped()
{
	expect_found "$BIN" self --executable --debug-dir "$D" "${NOPERF[@]}" "$BIN"
	cp "$B/prog" "$C/bin/full"
	expect_found "$C/bin/full" self --executable --debug-dir "$D" "${NOPERF[@]}" "$C/bin/full"
}

# Debian's layout: xx/rest (no suffix) is a relative symlink to the binary.
case_exec_buildid_dir_symlink()
{
	mkdir -p "$D/.build-id/${BID:0:2}"
	ln -s ../../../bin/prog "$(bidpath "$D")"
	[ "$(readlink -f "$(bidpath "$D")")" = "$BIN" ] || fail "symlink does not reach the binary"
	expect_found_file "$BIN" build-id-dir --executable --debug-dir "$D" "${NOPERF[@]}" "$BID"
	# The .debug name is not an executable even when it holds a binary.
	rm "$(bidpath "$D")"
	put "$B/prog.stripped" "$(bidpath "$D" .debug)"
	expect_missing --executable --debug-dir "$D" "${NOPERF[@]}" "$BID"
}

# A .debug has NOBITS .text: no code, never an executable.
case_exec_debug_file_rejected()
{
	put "$B/prog.debug" "$(bidpath "$D")"
	expect_missing --executable --debug-dir "$D" "${NOPERF[@]}" "$BID"
	err_has "$(bidpath "$D")"
	cp "$B/prog.debug" "$C/bin/prog.debug"
	expect_missing --executable --debug-dir "$D" "${NOPERF[@]}" "$C/bin/prog.debug"
	# ... while it is the debuginfo of itself.
	expect_found "$C/bin/prog.debug" self --debug-dir "$D" "${NOPERF[@]}" "$C/bin/prog.debug"
}

case_exec_wrong_bid_rejected()
{
	mkdir -p "$D/.build-id/${BID:0:2}"
	cp "$B/other.stripped" "$(bidpath "$D")"
	expect_missing --executable --debug-dir "$D" "${NOPERF[@]}" "$BID"
	err_has "$(bidpath "$D")"
}

case_exec_perf_elf()
{
	perf_put "$P" "$BIN" elf "$B/prog.stripped"
	perf_put "$P" "$BIN" debug "$B/prog.debug"
	expect_found_file "$(perf_file "$P" "$BIN" elf)" perf-cache \
		--executable --debug-dir "$D" --perf-buildid-dir "$P" "$BID"
	# The build-id dir comes before the perf cache.
	mkdir -p "$D/.build-id/${BID:0:2}"
	ln -s ../../../bin/prog "$(bidpath "$D")"
	expect_found_file "$BIN" build-id-dir \
		--executable --debug-dir "$D" --perf-buildid-dir "$P" "$BID"
}

# ---- output without -s: the path alone, one line, for every source

case_plain_output()
{
	local args=(--debug-dir "$D" --perf-buildid-dir "$P")
	cp "$B/prog" "$C/bin/full"
	put "$B/prog.debug" "$(bidpath "$D" .debug)"
	perf_put "$P" "$BIN" debug "$B/prog.debug"
	run "${args[@]}" "$C/bin/full"
	[ "$RC" = 0 ] && [ "$OUT" = "$C/bin/full" ] || fail "self: got '$OUT' (exit $RC)"
	run "${args[@]}" "$BID"
	[ "$RC" = 0 ] && [ "$OUT" = "$(bidpath "$D" .debug)" ] ||
		fail "build-id-dir: got '$OUT' (exit $RC)"
	rm "$(bidpath "$D" .debug)"
	cp "$B/prog.debug" "$C/bin/prog.debug"
	run --debuginfo "${args[@]}" "$BIN"
	[ "$RC" = 0 ] && [ "$OUT" = "$C/bin/prog.debug" ] || fail "debuglink: got '$OUT' (exit $RC)"
	run "${args[@]}" "$BID"
	[ "$RC" = 0 ] && [ "$(readlink -f "$OUT")" = "$(perf_file "$P" "$BIN" debug)" ] &&
		[ "$(wc -l <"$T/out")" = 1 ] || fail "perf-cache: got '$OUT' (exit $RC)"
	run --executable "${args[@]}" "$BIN"
	[ "$RC" = 0 ] && [ "$OUT" = "$BIN" ] || fail "executable: got '$OUT' (exit $RC)"
}

# ---- what the argument is

case_arg_buildid_vs_file()
{
	put "$B/prog.debug" "$(bidpath "$D" .debug)"
	cp "$B/prog" "$C/bin/full"
	# The -g binary is self only when named; by build ID the dir answers.
	expect_found "$C/bin/full" self --debug-dir "$D" "${NOPERF[@]}" "$C/bin/full"
	expect_found "$(bidpath "$D" .debug)" build-id-dir --debug-dir "$D" "${NOPERF[@]}" "$BID"
	local upper
	upper=$(echo "$BID" | tr a-f A-F)
	expect_found "$(bidpath "$D" .debug)" build-id-dir --debug-dir "$D" "${NOPERF[@]}" "$upper"
	# A relative FILE is the binary in the current directory.
	(cd "$C/bin" && run --debug-dir "$D" "${NOPERF[@]}" full && [ "$RC" = 0 ] &&
		[ "$(readlink -f "$OUT")" = "$C/bin/full" ]) ||
		fail "relative FILE 'full' in $C/bin not found as itself"
}

expect_bad_arg() # ARG
{
	run --debug-dir "$D" "${NOPERF[@]}" "$1"
	if [ "$RC" = 0 ] || [ "$RC" -ge 126 ] || [ -n "$OUT" ] || [ -z "$ERR" ]; then
		fail "find '$1': want an error (exit 1..125, a message), got '$OUT' (exit $RC); stderr: $ERR"
	elif [ -n "$1" ]; then
		err_has "$1"
	fi
}

case_arg_malformed()
{
	expect_bad_arg "${BID:0:39}" # odd length
	expect_bad_arg abc
	expect_bad_arg "zz${BID:2}" # not hex
	expect_bad_arg "${BID}${BID}${BID}${BID}0000000000000000000000000000000000000000000000000" # 130 digits
	expect_bad_arg ""
	expect_bad_arg "$C/no-such-file"
	expect_bad_arg "$B/nobid" # ELF without a build ID
	expect_bad_arg "$B/prog.c" # not ELF
	run --debug-dir "$D" "${NOPERF[@]}"
	[ "$RC" != 0 ] && [ "$RC" -lt 126 ] || fail "find without an argument exited $RC"
}

# ------------------------------------------------------------------- main

# All cases, or those named on the command line; the premises first.
CASES=$(declare -F | awk '$3 ~ /^case_/ && $3 != "case_premises" { sub(/^case_/, "", $3); print $3 }')
if [ $# -gt 0 ]; then
	CASES="$*"
fi
for c in premises $CASES; do
	new_case "$c"
	"case_$c"
	ENVS=()
	tl_case_end
done

if [ "$fails" != 0 ]; then
	echo "locate.sh: $case_fails case(s) failed ($fails check(s))" >&2
	exit 1
fi
echo "locate.sh: all cases passed"
