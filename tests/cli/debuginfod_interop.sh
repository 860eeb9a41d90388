#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cache interop with the elfutils client (debuginfod-find 0.188): both use
# one DEBUGINFOD_CACHE_PATH, and what either cached (file or miss) the other
# returns without a request.  The server is dsserver, whose counters give
# exact request counts; `dsostore fetch -v` logs every request it makes.
#   (a) dsostore first, then debuginfod-find: same path, one request
#   (b) debuginfod-find first, then dsostore: found in the cache
#   (c) a miss written by either is honoured by the other, until it expires
#   (d) sources (escaped names, '#', ' ', "//") and sections, both ways
#   (e) DEBUGINFOD_URLS empty or unset: dsostore still returns cached files
#   (f) `dsostore cache stats` against find(1); `cache clean` by atime and
#       for expired misses, keeping fresh files; --if-due
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need debuginfod-find gcc objcopy eu-readelf curl cmp find
tl_need_dsserver

tl_tmpdir dsinterop
eq() { # what expected actual
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# ---- corpus: sources inside the served directory (dsserver serves a
# source by path if it lies under a served directory).
srv=$tmp/srv
odd_dir="$srv/s#rc dir" odd_file="a b#c.c" # '#' is '#_' in cache names
mkdir -p "$srv/src" "$odd_dir"
declare -A bid srcfile
progs=(p1 p2 p3 p4 p5 odd)
cc_pids=()
for p in "${progs[@]}"; do
	f=$srv/src/$p.c
	[ $p = odd ] && f=$odd_dir/$odd_file
	srcfile[$p]=$f
	cat >"$f" <<EOF
#include <stdio.h>
int value_$p(int x) { return x + ${#f}; }
int main(void) { printf("%d\n", value_$p(1)); return 0; }
EOF
	gcc -g -O1 -o "$srv/$p" "$f" &
	cc_pids+=($!)
done
for i in "${!cc_pids[@]}"; do
	wait "${cc_pids[i]}" || fail "cannot compile ${progs[i]}"
done
for p in "${progs[@]}"; do
	tl_split_debuginfo "$srv/$p" || fail "cannot split the debuginfo of $p"
	bid[$p]=$(tl_build_id "$srv/$p")
	[ -n "${bid[$p]}" ] || fail "eu-readelf finds no build ID in $p"
done
[ "$fails" -eq 0 ] || exit 1
# Served with an old Last-Modified (clients make it the cached file's
# mtime): a download must still count as fresh, which is by atime.
touch -d '-2 days' "$srv/p4.debug"

tl_start_dsserver port server --max-runtime 120 "$srv" || exit 1
U=http://127.0.0.1:$port

cache=$tmp/cache
export DEBUGINFOD_URLS=$U DEBUGINFOD_CACHE_PATH=$cache
unset DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME \
	DEBUGINFOD_HEADERS_FILE DEBUGINFOD_RETRY_LIMIT DEBUGINFOD_TIMEOUT

# Requests the server received for one build ID's artifact (a prefix of the
# path: debuginfo, executable, source, section/NAME).
reqs() { # hex artifact
	curl -s --noproxy '*' "$U/control/stats?prefix=/buildid/$1/$2"
}
total_reqs() {
	curl -s --noproxy '*' "$U/control/stats" | awk '$1 == "requests" {print $2}'
}
# dsostore fetch -v; paths on $tmp/out, log and errors on $tmp/err; the
# number of requests it logged on $logged.
ds() { # fetch options and build IDs...
	ds_rc=0
	"$DSOSTORE" fetch -v --no-progress "$@" >"$tmp/out" 2>"$tmp/err" || ds_rc=$?
	logged=$(grep -c ' from http' "$tmp/err")
}
ds_path() { # hex: the path dsostore printed for it
	sed -n "s/^$1 //p" "$tmp/out" # paths may hold spaces
}
eu() { # debuginfod-find arguments...: its path on stdout
	debuginfod-find "$@" 2>>"$tmp/eu.err"
}

# ---- (a) dsostore first, then debuginfod-find
ds "${bid[p1]}" "${bid[p2]}"
eq "(a) dsostore fetch debuginfo: exit" 0 $ds_rc
for p in p1 p2; do
	h=${bid[$p]}
	eq "(a) $p debuginfo path" "$cache/$h/debuginfo" "$(ds_path $h)"
	cmp -s "$srv/$p.debug" "$cache/$h/debuginfo" || fail "(a) $p debuginfo: wrong bytes"
	eq "(a) debuginfod-find debuginfo $p after dsostore" "$cache/$h/debuginfo" "$(eu debuginfo $h)"
	eq "(a) requests for $p debuginfo" 1 "$(reqs $h debuginfo)"
done
ds --executable "${bid[p1]}"
eq "(a) dsostore fetch executable: exit" 0 $ds_rc
h=${bid[p1]}
eq "(a) debuginfod-find executable after dsostore" "$cache/$h/executable" "$(eu executable $h)"
eq "(a) requests for p1 executable" 1 "$(reqs $h executable)"
cmp -s "$srv/p1" "$cache/$h/executable" || fail "(a) p1 executable: wrong bytes"

# ---- (b) debuginfod-find first, then dsostore
h=${bid[p3]}
eu_dbg=$(eu debuginfo $h) || fail "(b) debuginfod-find debuginfo p3 failed"
eu_exe=$(eu executable $h) || fail "(b) debuginfod-find executable p3 failed"
eq "(b) debuginfod-find's debuginfo path" "$cache/$h/debuginfo" "$eu_dbg"
ds $h
eq "(b) dsostore fetch after debuginfod-find: exit" 0 $ds_rc
eq "(b) dsostore's debuginfo path" "$eu_dbg" "$(ds_path $h)"
eq "(b) requests dsostore logged for a cached debuginfo" 0 "$logged"
ds --executable $h
eq "(b) dsostore's executable path" "$eu_exe" "$(ds_path $h)"
eq "(b) requests dsostore logged for a cached executable" 0 "$logged"
eq "(b) requests for p3 debuginfo" 1 "$(reqs $h debuginfo)"
eq "(b) requests for p3 executable" 1 "$(reqs $h executable)"

# ---- (c) misses, both ways, and their expiry (cache_miss_s, default 600)
u1=00112233445566778899aabbccddeeff00000001
u2=00112233445566778899aabbccddeeff00000002
eu debuginfo $u1 >/dev/null && fail "(c) debuginfod-find found an unknown build ID"
[ -f "$cache/$u1/debuginfo" ] && [ ! -s "$cache/$u1/debuginfo" ] ||
	fail "(c) debuginfod-find left no empty miss file"
ds $u1
eq "(c) dsostore on debuginfod-find's miss: exit" 1 $ds_rc
grep -q "^dsostore: $u1: not found\$" "$tmp/err" || fail "(c) no 'not found' line: $(cat "$tmp/err")"
eq "(c) requests dsostore logged for debuginfod-find's miss" 0 "$logged"
eq "(c) requests for $u1" 1 "$(reqs $u1 debuginfo)"
ds $u2
eq "(c) dsostore on an unknown build ID: exit" 1 $ds_rc
[ -f "$cache/$u2/debuginfo" ] && [ ! -s "$cache/$u2/debuginfo" ] ||
	fail "(c) dsostore left no empty miss file"
eu debuginfo $u2 >/dev/null && fail "(c) debuginfod-find found $u2"
eq "(c) requests for $u2 after dsostore, then debuginfod-find" 1 "$(reqs $u2 debuginfo)"
# Expired: each asks again, and writes a fresh miss.
touch -m -d '-20 minutes' "$cache/$u1/debuginfo" "$cache/$u2/debuginfo"
ds $u1
eq "(c) dsostore on an expired miss: requests logged" 1 "$logged"
eq "(c) requests for $u1 after its miss expired" 2 "$(reqs $u1 debuginfo)"
eu debuginfo $u2 >/dev/null
eq "(c) requests for $u2 after its miss expired" 2 "$(reqs $u2 debuginfo)"
for u in $u1 $u2; do
	m=$(stat -c %Y "$cache/$u/debuginfo" 2>/dev/null) || m=0
	[ ! -s "$cache/$u/debuginfo" ] && [ $(($(date +%s) - m)) -lt 300 ] ||
		fail "(c) no fresh miss for $u after it expired"
done

# ---- (d) sources and sections: the cache names agree.
# (Once a regression: tools/cmd_fetch.c took --source for --section.)
# One request in all, by whichever client came first (debuginfod-find may
# even need none for a section: it cuts it from a cached debuginfo).
source_case() { # what hex path first(eu|ds) expected-file
	local what=$1 h=$2 path=$3 first=$4 want=$5 eu_path n0 n1
	n0=$(reqs $h source)
	if [ "$first" = eu ]; then
		eu_path=$(eu source $h "$path") || fail "$what: debuginfod-find source failed"
		n1=$(reqs $h source)
		ds --source "$path" $h
		eq "$what: requests dsostore logged" 0 "$logged"
	else
		ds --source "$path" $h
		n1=$(reqs $h source)
		eu_path=$(eu source $h "$path") || fail "$what: debuginfod-find source failed"
	fi
	eq "$what: dsostore exit" 0 $ds_rc
	eq "$what: same path" "$eu_path" "$(ds_path $h)"
	cmp -s "$want" "$eu_path" || fail "$what: wrong bytes in $eu_path"
	eq "$what: requests by the first client" $((n0 + 1)) "$n1"
	eq "$what: requests by the second client" 0 $(($(reqs $h source) - n1))
}
source_case "(d) source, debuginfod-find first" "${bid[p1]}" "${srcfile[p1]}" eu "${srcfile[p1]}"
source_case "(d) source, dsostore first" "${bid[p2]}" "${srcfile[p2]}" ds "${srcfile[p2]}"
source_case "(d) source with '#' and ' ', debuginfod-find first" \
	"${bid[odd]}" "${srcfile[odd]}" eu "${srcfile[odd]}"
# "//" stays in the name ("####"): debuginfod-find caches it, dsostore finds it.
source_case "(d) source with //, debuginfod-find first" \
	"${bid[p3]}" "$srv//src/p3.c" eu "${srcfile[p3]}"
case "$(ls "$cache/${bid[odd]}")" in
"source${srv//\//##}##s#_rc dir##a b#_c.c") ;;
*) fail "(d) unexpected cache name for $odd_dir/$odd_file: $(ls "$cache/${bid[odd]}")" ;;
esac

section_case() { # what hex section first(eu|ds) expected-file
	local what=$1 h=$2 sec=$3 first=$4 want=$5 eu_path n0 n1
	n0=$(reqs $h "section/$sec")
	if [ "$first" = eu ]; then
		eu_path=$(eu section $h "$sec") || fail "$what: debuginfod-find section failed"
		n1=$(reqs $h "section/$sec")
		ds --section "$sec" $h
		eq "$what: requests dsostore logged" 0 "$logged"
	else
		ds --section "$sec" $h
		n1=$(reqs $h "section/$sec")
		[ "$n1" -eq $((n0 + 1)) ] || fail "$what: dsostore made $((n1 - n0)) requests"
		eu_path=$(eu section $h "$sec") || fail "$what: debuginfod-find section failed"
	fi
	eq "$what: dsostore exit" 0 $ds_rc
	eq "$what: path" "$cache/$h/section-$sec" "$eu_path"
	eq "$what: same path" "$eu_path" "$(ds_path $h)"
	cmp -s "$want" "$eu_path" || fail "$what: wrong bytes in $eu_path"
	eq "$what: requests by the second client" 0 $(($(reqs $h "section/$sec") - n1))
}
objcopy --dump-section .debug_info="$tmp/p4.debug_info" "$srv/p4.debug" "$tmp/junk" &&
	objcopy --dump-section .text="$tmp/p2.text" "$srv/p2" "$tmp/junk" ||
	fail "objcopy --dump-section failed"
section_case "(d) .debug_info, debuginfod-find first" "${bid[p4]}" .debug_info eu "$tmp/p4.debug_info"
section_case "(d) .text, dsostore first" "${bid[p2]}" .text ds "$tmp/p2.text"
echo "(a)-(d) checked"

# ---- (e) no servers: cached files still come back, with no request.
before=$(total_reqs)
for urls in empty unset; do
	(
		if [ $urls = empty ]; then export DEBUGINFOD_URLS=''; else unset DEBUGINFOD_URLS; fi
		"$DSOSTORE" fetch --no-progress "${bid[p1]}" "${bid[p3]}" >"$tmp/out" 2>"$tmp/err"
		echo $? >"$tmp/rc"
		"$DSOSTORE" fetch --no-progress --executable "${bid[p1]}" >"$tmp/outx" 2>&1
		echo $? >"$tmp/rcx"
		"$DSOSTORE" fetch --no-progress "${bid[p5]}" >"$tmp/out5" 2>"$tmp/err5"
		echo $? >"$tmp/rc5"
	)
	eq "(e) URLs $urls: cached files: exit" 0 "$(cat "$tmp/rc")"
	eq "(e) URLs $urls: p1" "$cache/${bid[p1]}/debuginfo" "$(ds_path ${bid[p1]})"
	eq "(e) URLs $urls: p3" "$cache/${bid[p3]}/debuginfo" "$(ds_path ${bid[p3]})"
	eq "(e) URLs $urls: cached executable: exit" 0 "$(cat "$tmp/rcx")"
	eq "(e) URLs $urls: cached executable" "${bid[p1]} $cache/${bid[p1]}/executable" \
		"$(cat "$tmp/outx")"
	eq "(e) URLs $urls: uncached: exit" 1 "$(cat "$tmp/rc5")"
	[ ! -s "$tmp/out5" ] || fail "(e) URLs $urls: a path for an uncached build ID"
	grep -q "^dsostore: ${bid[p5]}: .*DEBUGINFOD_URLS" "$tmp/err5" ||
		fail "(e) URLs $urls: the error does not name DEBUGINFOD_URLS: $(cat "$tmp/err5")"
	[ ! -e "$cache/${bid[p5]}/debuginfo" ] || fail "(e) URLs $urls: a miss without any server"
done
eq "(e) requests without servers" "$before" "$(total_reqs)"
if DEBUGINFOD_URLS='' debuginfod-find debuginfo "${bid[p1]}" >/dev/null 2>&1; then
	echo "note: this debuginfod-find returns cached files without servers too"
fi
echo "(e) checked"

# ---- (f) cache stats against find(1), then clean
stats_vs_find() { # what
	local want got
	# (hdr-* files, the headers of a download kept beside it as elfutils
	# 0.193 keeps them, are not artifacts: counted in neither)
	want="build_ids $(find "$cache" -mindepth 1 -maxdepth 1 -type d | wc -l)
files $(find "$cache" -mindepth 2 -type f -size +0 ! -name 'hdr-*' | wc -l)
bytes $(find "$cache" -mindepth 2 -type f ! -name 'hdr-*' -printf '%s\n' | awk '{s += $1} END {print s + 0}')
misses $(find "$cache" -mindepth 2 -type f -empty | wc -l)"
	got=$("$DSOSTORE" cache stats 2>&1 | grep -v '^path ')
	eq "$1: dsostore cache stats vs find" "$want" "$got"
	"$DSOSTORE" cache stats | grep -qx "path $cache" || fail "$1: stats do not name $cache"
}
stats_vs_find "(f) stats"
# .symtab and .dynsym: section names whose tail after the last '.' has 6
# characters, like a temporary file's "<name>.XXXXXX".  p4 is served with
# an old Last-Modified, p3 with a fresh one.
# (Once a regression: lib/debuginfod/cache.c took "section-.symtab" for a temporary
# file, so stats left out the fresh one and clean removed the other.)
ds --section .symtab "${bid[p4]}"
eq "(f) dsostore fetch --section .symtab: exit" 0 $ds_rc
ds --section .dynsym "${bid[p3]}"
eq "(f) dsostore fetch --section .dynsym: exit" 0 $ds_rc
stats_vs_find "(f) stats with section-.symtab and section-.dynsym"

printf '3600\n' >"$cache/max_unused_age_s"
u3=00112233445566778899aabbccddeeff00000003
ds $u3
stale=$cache/${bid[p1]}/debuginfo
touch -a -d '-2 hours' "$stale"
touch -m -d '-2 hours' "$cache/$u3/debuginfo"
keep=("$cache/${bid[p1]}/executable" "$cache/${bid[p4]}/section-.debug_info"
	"$cache/${bid[p2]}/debuginfo" "$cache/${bid[p3]}/debuginfo" "$cache/${bid[p3]}/executable"
	"$cache/${bid[p2]}/section-.text" "$cache/$u1/debuginfo" "$cache/$u2/debuginfo"
	"$cache/${bid[p4]}/section-.symtab"
	"$cache/${bid[odd]}/source${srv//\//##}##s#_rc dir##a b#_c.c")
for f in "${keep[@]}"; do
	[ -f "$f" ] || fail "(f) setup: no $f"
done
"$DSOSTORE" cache clean >"$tmp/out" 2>"$tmp/err" || fail "(f) cache clean: $(cat "$tmp/err")"
[ ! -e "$stale" ] || fail "(f) clean kept a file unused for 2 hours (max_unused_age_s 3600)"
[ ! -e "$cache/$u3" ] || fail "(f) clean kept an expired miss (or its empty directory)"
for f in "${keep[@]}"; do
	[ -f "$f" ] || fail "(f) clean removed a fresh file: $f"
done
grep -q '^removed [1-9]' "$tmp/out" || fail "(f) clean says: $(cat "$tmp/out")"
stats_vs_find "(f) stats after clean"
# The interval (cache_clean_interval_s, 86400) starts again at each clean.
touch -a -d '-2 hours' "$cache/${bid[p2]}/debuginfo"
"$DSOSTORE" cache clean --if-due >/dev/null 2>&1
[ -f "$cache/${bid[p2]}/debuginfo" ] || fail "(f) clean --if-due cleaned right after a clean"
"$DSOSTORE" cache clean >/dev/null 2>&1
[ ! -e "$cache/${bid[p2]}/debuginfo" ] || fail "(f) forced clean kept a stale file"
# What was cleaned is downloaded again, by either client.
h=${bid[p1]}
eq "(f) debuginfod-find after clean" "$stale" "$(eu debuginfo $h)"
eq "(f) requests for p1 debuginfo after clean" 2 "$(reqs $h debuginfo)"
echo "(f) checked"

eu_errors() { # the last words of debuginfod-find, if any
	[ ! -s "$tmp/eu.err" ] || sed 's/^/  debuginfod-find: /' "$tmp/eu.err" | tail -5 >&2
}
tl_finish debuginfod_interop.sh "all checks passed" eu_errors
