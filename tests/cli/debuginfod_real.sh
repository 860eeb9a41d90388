#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dsostore fetch` against the real elfutils debuginfod server (Debian's
# 0.188) over a corpus built here: gcc and clang programs, stripped, with
# their debuginfo split into .debug files.  Expected bytes come from the
# files on disk, objcopy --dump-section and debuginfod-find (into a cache of
# its own); build IDs from eu-readelf; request counts from the server's
# /metrics.  Checks debuginfo, executable, source, section, 404 and the
# miss entry, a batch of many build IDs, and federation (a second server
# whose own DEBUGINFOD_URLS names the first).
#
# Debian's 0.188 server listens on every address and refuses -p 0, so this
# script re-runs itself inside a network namespace with only loopback up,
# and the servers and clients all run there.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
export PATH=$PATH:/usr/sbin:/sbin

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need debuginfod debuginfod-find eu-readelf gcc objcopy curl cmp unshare ip
tl_netns_reexec --skip "cannot create a network namespace (unshare -n / -rn failed); the real \
debuginfod 0.188 listens on every address, so it is only run isolated" "$0" "$@"
tl_tmpdir dsreal

P1=8002 # the server with the corpus
P2=8003 # the federating server, no files of its own

# ---- corpus: sources outside the served directory, compiled by absolute
# path so that DW_AT_name and the line table name them absolutely (the
# server serves a source only if the debuginfo's DWARF names it, and the
# file exists).
src=$tmp/src srv=$tmp/srv
# A source whose path needs escaping in the URL ('#', ' ', '+', '%') and in
# the cache name ('#' -> '#_').
odd_dir="$tmp/s#rc dir+%" odd_file="a b#c.c"
mkdir -p "$src" "$srv" "$tmp/empty" "$odd_dir"
progs=()
declare -A srcfile
build() { # name source-file compiler flags...   (in the background: see built)
	local name=$1 file=$2 cc=$3
	shift 3
	cat >"$file" <<EOF
#include <stdio.h>
static int step_$name(int x) { return 3 * x + ${#name}; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", step_$name(argc)); return 0; }
EOF
	srcfile[$name]=$file
	# From the source's directory: clang's DWARF 5 line table then lists
	# the file as entry 1 too, not only as entry 0, which the 0.188 server
	# skips when it indexes sources.
	(cd "${file%/*}" && exec "$cc" -g "$@" -o "$srv/$name" "$file") &
	progs+=("$name:$!")
}
build g0 "$src/g0.c" gcc -O0
build g1 "$src/g1.c" gcc -O1
build g2 "$src/g2.c" gcc -O2 -gdwarf-4
build g3 "$src/g3.c" gcc -O2 -fPIE -pie
if command -v clang >/dev/null; then
	build c0 "$src/c0.c" clang -O0
	build c1 "$src/c1.c" clang -O1 -gdwarf-4
fi
build odd "$odd_dir/$odd_file" gcc -O0
build keep "$src/keep.c" gcc -O1 # stays unstripped: its own debuginfo and executable
built=()
for p in "${progs[@]}"; do
	wait "${p#*:}" && built+=("${p%%:*}") || fail "cannot compile ${p%%:*}"
done
progs=("${built[@]}")
declare -A bid
for p in "${progs[@]}"; do
	if [ "$p" != keep ]; then
		tl_split_debuginfo "$srv/$p" || fail "cannot split the debuginfo of $p"
	fi
	bid[$p]=$(tl_build_id "$srv/$p")
	[ -n "${bid[$p]}" ] || fail "eu-readelf finds no build ID in $p"
done
[ "$fails" -eq 0 ] || exit 1
debugfile() { [ "$1" = keep ] && echo "$srv/keep" || echo "$srv/$1.debug"; }

# ---- servers
tl_start_debuginfod $P1 "$srv" || exit 1
requests() { # artifact type (debuginfo, executable, source, section), on P1
	tl_metric $P1 "http_requests_total{type=\"$1\"}"
}

export DEBUGINFOD_URLS=http://127.0.0.1:$P1
export DEBUGINFOD_CACHE_PATH=$tmp/cache
unset DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME \
	DEBUGINFOD_HEADERS_FILE DEBUGINFOD_RETRY_LIMIT DEBUGINFOD_TIMEOUT

# debuginfod-find into a cache of its own: the oracle.
eu_find() { # args...
	DEBUGINFOD_CACHE_PATH=$tmp/eu-cache debuginfod-find "$@" 2>>"$tmp/eu.err"
}

# One `dsostore fetch`; its path for the single build ID on $out_path.
fetch_one() { # what-it-is hex fetch-options...
	local what=$1 hex=$2 rc=0
	shift 2
	out_path=
	"$DSOSTORE" fetch --no-progress "$@" "$hex" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$what: dsostore fetch $* $hex: exit $rc: $(head -3 "$tmp/err")"
		return 1
	fi
	out_path=$(sed -n "s/^$hex //p" "$tmp/out") # paths may hold spaces
	if [ "$(wc -l <"$tmp/out")" -ne 1 ] || [ -z "$out_path" ] || [ ! -f "$out_path" ]; then
		fail "$what: stdout is not \"$hex <existing file>\": $(head -3 "$tmp/out")"
		return 1
	fi
}
has_build_id() { # what file hex
	local got
	got=$(eu-readelf -n "$2" 2>/dev/null | awk '/Build ID:/ {print $3; exit}')
	[ "$got" = "$3" ] || fail "$1: eu-readelf reads build ID '$got' in $2, expected $3"
}
same() { # what expected actual
	cmp -s "$2" "$3" || fail "$1: $3 differs from $2"
}

# ---- debuginfo and executable: the served files, byte for byte, as
# debuginfod-find gets them, with the right build ID, in the elfutils
# layout.
for p in "${progs[@]}"; do
	h=${bid[$p]}
	if fetch_one "debuginfo of $p" "$h" --debuginfo; then
		same "debuginfo of $p" "$(debugfile "$p")" "$out_path"
		eu=$(eu_find debuginfo "$h") || fail "debuginfod-find debuginfo $h failed"
		same "debuginfo of $p vs debuginfod-find" "$eu" "$out_path"
		has_build_id "debuginfo of $p" "$out_path" "$h"
		[ "$out_path" = "$DEBUGINFOD_CACHE_PATH/$h/debuginfo" ] ||
			fail "debuginfo of $p cached as $out_path, not in the elfutils layout"
	fi
	if fetch_one "executable of $p" "$h" --executable; then
		same "executable of $p" "$srv/$p" "$out_path"
		eu=$(eu_find executable "$h") || fail "debuginfod-find executable $h failed"
		same "executable of $p vs debuginfod-find" "$eu" "$out_path"
		has_build_id "executable of $p" "$out_path" "$h"
	fi
done
echo "debuginfo and executable of ${#progs[@]} programs: checked"

# ---- source: the server answers only for files the DWARF names.
# (Once a regression: tools/cmd_fetch.c took --source PATH for --section.)
source_case() { # what program path-to-ask
	local what=$1 p=$2 path=$3 h=${bid[$2]} eu
	if fetch_one "$what" "$h" --source "$path"; then
		same "$what" "${srcfile[$p]}" "$out_path"
		eu=$(eu_find source "$h" "$path") || fail "debuginfod-find source $h $path failed"
		same "$what vs debuginfod-find" "$eu" "$out_path"
		# The cache names agree (interop: one finds what the other cached).
		[ "${out_path#"$DEBUGINFOD_CACHE_PATH"/}" = "${eu#"$tmp/eu-cache"/}" ] ||
			fail "$what: cached as $out_path, debuginfod-find: $eu"
	fi
}
for p in g1 c0 keep odd; do
	[ -n "${bid[$p]:-}" ] && source_case "source of $p" $p "${srcfile[$p]}"
done
# A doubled slash, as comp_dir "/x/" + "/y.c" gives: the server and
# debuginfod-find take it.  (Once a regression: curl_easy_escape(.., 0)
# escapes the whole rest of the string, which made a wrong URL for the
# empty component.)
[ -n "${bid[odd]:-}" ] && source_case "source with //" odd "$odd_dir//$odd_file"
echo "sources: checked"

# ---- sections: .debug_info comes from the debuginfo, .text (NOBITS
# there) from the executable.
for p in g0 c1; do
	[ -n "${bid[$p]:-}" ] || continue
	h=${bid[$p]}
	objcopy --dump-section .debug_info="$tmp/$p.debug_info" "$(debugfile "$p")" "$tmp/junk" ||
		fail "objcopy cannot dump .debug_info of $p"
	objcopy --dump-section .text="$tmp/$p.text" "$srv/$p" "$tmp/junk" ||
		fail "objcopy cannot dump .text of $p"
	for sec in .debug_info .text; do
		if fetch_one "section $sec of $p" "$h" --section "$sec"; then
			same "section $sec of $p" "$tmp/$p$sec" "$out_path"
			eu=$(eu_find section "$h" "$sec") || fail "debuginfod-find section $h $sec failed"
			same "section $sec of $p vs debuginfod-find" "$eu" "$out_path"
			[ "$out_path" = "$DEBUGINFOD_CACHE_PATH/$h/section-$sec" ] ||
				fail "section $sec of $p cached as $out_path"
		fi
	done
done
echo "sections: checked"

# ---- not found: exit 1, an error line, an empty miss file; within
# cache_miss_s the miss is the answer and no request is made.
miss() { # what hex expected-miss-file [fetch options...]
	local what=$1 hex=$2 file=$3 rc=0
	shift 3
	"$DSOSTORE" fetch --no-progress "$@" "$hex" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -eq 1 ] || fail "$what: exit $rc, expected 1"
	[ ! -s "$tmp/out" ] || fail "$what: printed a path: $(cat "$tmp/out")"
	grep -q "^dsostore: $hex: not found\$" "$tmp/err" ||
		fail "$what: no \"dsostore: $hex: not found\" line in: $(cat "$tmp/err")"
	[ -z "$file" ] || { [ -f "$file" ] && [ ! -s "$file" ]; } || fail "$what: no empty miss file $file"
}
unknown=00112233445566778899aabbccddeeff00112233
before=$(requests debuginfo)
miss "unknown build ID" $unknown "$DEBUGINFOD_CACHE_PATH/$unknown/debuginfo"
mid=$(requests debuginfo)
[ "$mid" -eq $((before + 1)) ] || fail "unknown build ID: $((mid - before)) requests, expected 1"
miss "unknown build ID again" $unknown "$DEBUGINFOD_CACHE_PATH/$unknown/debuginfo" -v
after=$(requests debuginfo)
[ "$after" -eq "$mid" ] || fail "a remembered miss made $((after - mid)) more requests"
! grep -q ' from http' "$tmp/err" || fail "a remembered miss logged a request: $(cat "$tmp/err")"
# The real server 404s a source its DWARF does not name, and an absent
# section.
h=${bid[g1]}
miss "source the DWARF does not name" "$h" "$DEBUGINFOD_CACHE_PATH/$h/source##etc##hostname" \
	--source /etc/hostname
DEBUGINFOD_CACHE_PATH=$tmp/cache-sec miss "absent section" "$h" \
	"$tmp/cache-sec/$h/section-.no_such_section" --section .no_such_section
# With the debuginfo cached, the section is looked for in it, as elfutils'
# client does (cache_find_section()): absent there, no request, no miss file.
before=$(requests section)
miss "absent section, the debuginfo cached" "$h" "" --section .no_such_section
[ "$(requests section)" -eq "$before" ] || fail "absent section: asked though the debuginfo is cached"
[ ! -e "$DEBUGINFOD_CACHE_PATH/$h/section-.no_such_section" ] || fail "absent section: something cached"
# Already-cached files cost no request either.
before=$(requests debuginfo)
fetch_one "cached debuginfo" "$h" --debuginfo -v
[ "$(requests debuginfo)" -eq "$before" ] || fail "a cached debuginfo was requested again"
echo "not found and the miss cache: checked"

# ---- too big: the server's 406 for X-DEBUGINFOD-MAXSIZE is an error, not a
# miss; without the limit the next fetch gets the file.
h=${bid[g2]}
rc=0
DEBUGINFOD_MAXSIZE=1000 DEBUGINFOD_CACHE_PATH=$tmp/cache-max \
	"$DSOSTORE" fetch --no-progress "$h" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 1 ] || fail "MAXSIZE=1000: exit $rc, expected 1"
grep -qi "^dsostore: $h: .*too large" "$tmp/err" || fail "MAXSIZE=1000: error is: $(cat "$tmp/err")"
[ ! -e "$tmp/cache-max/$h/debuginfo" ] || fail "MAXSIZE=1000: something cached at $h/debuginfo"
DEBUGINFOD_CACHE_PATH=$tmp/cache-max fetch_one "debuginfo after a 406" "$h" &&
	same "debuginfo after a 406" "$(debugfile g2)" "$out_path"
echo "MAXSIZE: checked"

# ---- many build IDs in one call, each twice: one request per build ID,
# every one printed.
export DEBUGINFOD_CACHE_PATH=$tmp/cache-many
before=$(requests debuginfo)
ids=()
for p in "${progs[@]}"; do ids+=("${bid[$p]}"); done
rc=0
"$DSOSTORE" fetch --no-progress "${ids[@]}" "${ids[@]}" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 0 ] || fail "batch of ${#ids[@]} build IDs: exit $rc: $(head -3 "$tmp/err")"
[ "$(wc -l <"$tmp/out")" -eq $((2 * ${#ids[@]})) ] ||
	fail "batch: $(wc -l <"$tmp/out") lines for $((2 * ${#ids[@]})) requests"
for p in "${progs[@]}"; do
	h=${bid[$p]}
	paths=$(awk -v h="$h" '$1 == h {print $2}' "$tmp/out" | sort -u)
	if [ "$paths" != "$DEBUGINFOD_CACHE_PATH/$h/debuginfo" ]; then
		fail "batch: $p answered with '$paths'"
		continue
	fi
	same "batch: debuginfo of $p" "$(debugfile "$p")" "$paths"
done
n=$(($(requests debuginfo) - before))
[ "$n" -eq ${#ids[@]} ] || fail "batch: $n requests for ${#ids[@]} distinct build IDs"
# Executables from standard input, with the unknown build ID among them.
before=$(requests executable)
rc=0
printf '%s\n' "${ids[@]}" $unknown |
	"$DSOSTORE" fetch --no-progress --executable - >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 1 ] || fail "stdin batch with an unknown build ID: exit $rc, expected 1"
[ "$(wc -l <"$tmp/out")" -eq ${#ids[@]} ] ||
	fail "stdin batch: $(wc -l <"$tmp/out") paths for ${#ids[@]} known build IDs"
grep -q "^dsostore: $unknown: not found\$" "$tmp/err" || fail "stdin batch: no error for $unknown"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "stdin batch: stderr is not one line: $(cat "$tmp/err")"
for p in "${progs[@]}"; do
	path=$(awk -v h="${bid[$p]}" '$1 == h {print $2}' "$tmp/out")
	if [ -n "$path" ]; then
		same "stdin batch: executable of $p" "$srv/$p" "$path"
	else
		fail "stdin batch: no executable for $p"
	fi
done
n=$(($(requests executable) - before))
[ "$n" -eq $((${#ids[@]} + 1)) ] || fail "stdin batch: $n requests for $((${#ids[@]} + 1)) build IDs"
echo "batches of ${#ids[@]} build IDs: checked"

# ---- federation: the client knows only the second server, which has no
# files and asks the first.
tl_start_debuginfod $P2 "$tmp/empty" "http://127.0.0.1:$P1" || exit 1
export DEBUGINFOD_URLS=http://127.0.0.1:$P2 DEBUGINFOD_CACHE_PATH=$tmp/cache-fed
for p in g2 c1; do
	[ -n "${bid[$p]:-}" ] || continue
	h=${bid[$p]}
	before=$(requests debuginfo)
	if fetch_one "federated debuginfo of $p" "$h" --debuginfo; then
		same "federated debuginfo of $p" "$(debugfile "$p")" "$out_path"
		has_build_id "federated debuginfo of $p" "$out_path" "$h"
	fi
	[ "$(requests debuginfo)" -eq $((before + 1)) ] ||
		fail "federated debuginfo of $p: the upstream server was not asked once"
	fetch_one "federated executable of $p" "$h" --executable &&
		same "federated executable of $p" "$srv/$p" "$out_path"
done
miss "federated unknown build ID" $unknown "$DEBUGINFOD_CACHE_PATH/$unknown/debuginfo"
echo "federation: checked"

eu_errors() { # the last words of debuginfod-find, if any
	[ ! -s "$tmp/eu.err" ] || sed 's/^/  debuginfod-find: /' "$tmp/eu.err" | tail -5 >&2
}
tl_finish debuginfod_real.sh "all checks passed" eu_errors
