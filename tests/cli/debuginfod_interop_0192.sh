#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One DEBUGINFOD_CACHE_PATH shared with the newest elfutils client
# (scripts/peers' debuginfod-find-0.192), both ways, for debuginfo and
# executables: while the server (dsserver) is up, dsostore fetches one
# program's files and debuginfod-find 0.192 another's; then the server is
# stopped (DEBUGINFOD_URLS still names it: a request would fail) and each
# client asks for what the other fetched.  Each must answer from the cache,
# the cached file's path, with the served bytes (cmp with the server's
# files).  The server's counters say each file was asked for once.
# (tests/cli/debuginfod_interop.sh does the same and more with the
# system's 0.188.)  Sources and sections too, of two more programs whose
# debuginfo neither client fetched (elfutils would cut a section from a
# cached debuginfo): 0.192 names them in the cache otherwise than 0.188
# and dsostore ("section-HASH-.debug_info", lib/debuginfod/cache.c), and
# each client must still find the other's file, the server stopped.
# Last, a section 0.192 cuts from a cached debuginfo (as "section-NAME",
# 0600) is found by dsostore and survives its clean; dsostore cuts one
# from a cached debuginfo too, with no server.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
tl_sanitizer_exitcodes
: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
find192=$(tl_peer debuginfod-find-0.192) || exit $?
tl_need gcc objcopy readelf eu-readelf curl cmp
tl_need_dsserver
tl_tmpdir dsinterop192
cd "$tmp" || exit 2
export HOME=$tmp/home
mkdir -p "$HOME" srv
unset DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME \
	DEBUGINFOD_HEADERS_FILE DEBUGINFOD_RETRY_LIMIT DEBUGINFOD_TIMEOUT

declare -A bid src
mkdir -p "srv/src dir"
for p in ours theirs ours2 theirs2; do
	# (The sources under the served directory, where dsserver serves
	# them from; one with a '#', which both escape in cache names.)
	src[$p]="$tmp/srv/src dir/$p.c"
	[ $p = theirs2 ] && src[$p]="$tmp/srv/src dir/t#2.c"
	printf 'int value_%s(int x) { return x + 1; }\nint main(void) { return value_%s(0); }\n' $p $p >"${src[$p]}"
	gcc -g -O1 -o "srv/$p" "${src[$p]}" && tl_split_debuginfo "srv/$p" || fail "cannot build $p"
	bid[$p]=$(tl_build_id "srv/$p")
	[ -n "${bid[$p]}" ] || fail "no build ID in $p"
done
[ "$fails" = 0 ] || tl_finish debuginfod_interop_0192

tl_start_dsserver port server --max-runtime 120 "$tmp/srv" || tl_finish debuginfod_interop_0192
export DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/cache
reqs() { curl -s --max-time 5 "http://127.0.0.1:$port/control/stats?url=/buildid/$1/$2"; }
want() { # ARTIFACT PROG: the served file of PROG's ARTIFACT
	case $1 in debuginfo) echo "srv/$2.debug" ;; *) echo "srv/$2" ;; esac
}
# ds NAME ARTIFACT HEX: dsostore fetch, its path on stdout; the requests
# it made (-v logs each) in NAME.requests.
ds() {
	local opt=
	[ "$2" = executable ] && opt=--executable
	"$DSOSTORE" fetch -v --no-progress $opt "$3" >"$1.out" 2>"$1.err" ||
		fail "$1: dsostore fetch: exit $?: $(tail -3 "$1.err")"
	grep -c ' from http' "$1.err" >"$1.requests"
	sed -n "s/^$3 //p" "$1.out"
}
# eu NAME ARTIFACT HEX: debuginfod-find 0.192, its path on stdout.
eu() {
	"$find192" -v "$2" "$3" 2>"$1.err" || fail "$1: debuginfod-find-0.192: exit $?: $(tail -3 "$1.err")"
}
# same NAME ARTIFACT PROG PATH: PATH is the cache's file and the server's bytes.
same() {
	[ "$4" = "$tmp/cache/${bid[$3]}/$2" ] || fail "$1: path '$4', not the cache's $2"
	cmp -s "$4" "$(want "$2" "$3")" || fail "$1: $4 is not the served $2 of $3"
}

tl_case "fetched, the server up"
for a in debuginfo executable; do
	same "ds-$a" $a ours "$(ds "ds-$a" $a "${bid[ours]}")"
	same "eu-$a" $a theirs "$(eu "eu-$a" $a "${bid[theirs]}")"
	for p in ours theirs; do
		[ "$(reqs "${bid[$p]}" $a)" = 1 ] || fail "$p $a: asked for $(reqs "${bid[$p]}" $a) times, not once"
	done
done
tl_case_end

# Sources and sections: ours2's by dsostore, theirs2's by 0.192; the
# served bytes (a source as it is, a section as objcopy cuts it).
for p in ours2 theirs2; do
	objcopy --dump-section .debug_info="$p.debug_info" "srv/$p.debug" junk &&
		objcopy --dump-section .text="$p.text" "srv/$p" junk || fail "objcopy --dump-section $p"
done
# dsx NAME PROG OPTION ARG: dsostore fetch --source or --section; path on stdout.
dsx() {
	"$DSOSTORE" fetch -v --no-progress "$3" "$4" "${bid[$2]}" >"$1.out" 2>"$1.err" ||
		fail "$1: dsostore fetch $3: exit $?: $(tail -3 "$1.err")"
	sed -n "s/^${bid[$2]} //p" "$1.out"
}
tl_case "sources and sections fetched, the server up"
f=$(dsx ds-src ours2 --source "${src[ours2]}") && cmp -s "$f" "${src[ours2]}" || fail "dsostore source: '$f'"
f=$(dsx ds-sec ours2 --section .debug_info) && cmp -s "$f" ours2.debug_info || fail "dsostore section: '$f'"
f=$("$find192" source "${bid[theirs2]}" "${src[theirs2]}" 2>eu-src.err) && cmp -s "$f" "${src[theirs2]}" ||
	fail "0.192 source: '$f' $(tail -2 eu-src.err)"
f=$("$find192" section "${bid[theirs2]}" .text 2>eu-sec.err) && cmp -s "$f" theirs2.text ||
	fail "0.192 section: '$f' $(tail -2 eu-sec.err)"
# 0.192 kept them under its names, which are not 0.188's.
compgen -G "cache/${bid[theirs2]}/section-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-.text" >/dev/null ||
	fail "no 0.192 name of a section: $(ls "cache/${bid[theirs2]}")"
tl_case_end

tl_stop "${pids[-1]}" 5 || true # the server
curl -s --max-time 2 "$DEBUGINFOD_URLS/metrics" >/dev/null && fail "the server still answers"

tl_case "dsostore's files, debuginfod-find 0.192 offline"
for a in debuginfo executable; do
	same "eu-off-$a" $a ours "$(eu "eu-off-$a" $a "${bid[ours]}")"
done
f=$("$find192" source "${bid[ours2]}" "${src[ours2]}" 2>eu-off-src.err) && cmp -s "$f" "${src[ours2]}" ||
	fail "0.192 offline, dsostore's source: '$f' $(tail -2 eu-off-src.err)"
f=$("$find192" section "${bid[ours2]}" .debug_info 2>eu-off-sec.err) && cmp -s "$f" ours2.debug_info ||
	fail "0.192 offline, dsostore's section: '$f' $(tail -2 eu-off-sec.err)"
tl_case_end

tl_case "debuginfod-find 0.192's files, dsostore offline"
for a in debuginfo executable; do
	same "ds-off-$a" $a theirs "$(ds "ds-off-$a" $a "${bid[theirs]}")"
	[ "$(cat "ds-off-$a.requests")" = 0 ] || fail "ds-off-$a: dsostore made a request: $(cat "ds-off-$a.err")"
done
f=$(dsx ds-off-src theirs2 --source "${src[theirs2]}") && cmp -s "$f" "${src[theirs2]}" ||
	fail "dsostore offline, 0.192's source: '$f'"
f=$(dsx ds-off-sec theirs2 --section .text) && cmp -s "$f" theirs2.text ||
	fail "dsostore offline, 0.192's section: '$f'"
tl_case_end

# A section 0.192 cuts from a cached debuginfo (no request: the server is
# down): it writes it as "section-NAME", 0.188's name and ours, and leaves
# it 0600 (extract_section(): mkstemp, no fchmod).  dsostore finds it, and
# its clean does not take "section-.symtab" (six characters after a dot,
# 0600) for a temporary file left by a dead writer, once a minute old.
tl_case "a section 0.192 cut from a cached debuginfo"
# secbytes FILE SECTION: its bytes at readelf's offset and size (objcopy
# dumps no .symtab or .strtab: they are not BFD sections)
secbytes() {
	local off size
	read -r off size < <(readelf -S -W "$1" |
		awk -v s="$2" '{ for (i = 1; i < NF; i++) if ($i == s) { print $(i + 3), $(i + 4); exit } }')
	[ -n "$size" ] || fail "readelf: no $2 in $1"
	tail -c +$((0x$off + 1)) "$1" | head -c $((0x$size))
}
secbytes "srv/theirs.debug" .symtab >theirs.symtab
secbytes "srv/theirs.debug" .strtab >theirs.strtab
f=$("$find192" section "${bid[theirs]}" .symtab 2>eu-cut.err) && cmp -s "$f" theirs.symtab ||
	fail "0.192 cut .symtab: '$f' $(tail -2 eu-cut.err)"
[ "$f" = "$tmp/cache/${bid[theirs]}/section-.symtab" ] || fail "0.192 cut .symtab into '$f'"
[ "$(stat -c %a "$f" 2>/dev/null)" = 600 ] ||
	echo "note: 0.192's cut section is $(stat -c %a "$f" 2>/dev/null), not 0600: docs/oracles.md"
g=$(dsx ds-cut theirs --section .symtab) && [ "$g" = "$f" ] || fail "dsostore offline, 0.192's cut section: '$g'"
[ "$(grep -c ' from http' ds-cut.err)" = 0 ] || fail "dsostore asked for 0.192's cut section"
touch -h -d '5 minutes ago' "$f"
"$DSOSTORE" cache clean >clean.out 2>&1 || fail "cache clean: $(cat clean.out)"
[ -e "$f" ] || fail "dsostore's clean removed 0.192's section-.symtab (taken for a temporary file)"
# and dsostore cuts one from the cached debuginfo too, with no server
f=$(dsx ds-cut2 theirs --section .strtab) && [ "$f" = "$tmp/cache/${bid[theirs]}/section-.strtab" ] ||
	fail "dsostore offline, a section of a cached debuginfo: '$f' $(tail -2 ds-cut2.err)"
cmp -s "$f" theirs.strtab || fail "dsostore's cut .strtab is not readelf's"
tl_case_end

tl_finish debuginfod_interop_0192
