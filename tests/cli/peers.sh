#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The newer peers that scripts/peers unpacks beside the system (tl_peer):
# each wrapper runs and says its version (perf 6.12, elfutils 0.192), perf
# 6.12 is built with debuginfod, the dynamic loader (LD_DEBUG=libs) takes
# elfutils' libraries and libtraceevent from the prefix, not the system's
# 0.188, and the real debuginfod 0.192 serves a debuginfo file that
# debuginfod-find 0.192 fetches byte for byte (in a network namespace: it
# listens on every address).  Skips without the peers.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
export PATH=$PATH:/usr/sbin:/sbin

perf=$(tl_peer perf-6.12) || exit $?
find=$(tl_peer debuginfod-find-0.192) || exit $?
server=$(tl_peer debuginfod-0.192) || exit $?
stack=$(tl_peer eu-stack-0.192) || exit $?
prefix=$(dirname "$(dirname "$(readlink -f "$perf")")")
tl_need gcc objcopy eu-readelf cmp
# The server part in a namespace of its own (below); the rest either way.
netns=0
if command -v unshare >/dev/null && command -v ip >/dev/null && tl_netns_reexec "$0" "$@"; then
	netns=1
fi
tl_tmpdir dspeers

# ---- versions: what each program says of itself.
tl_case versions
v=$("$perf" version 2>&1) || fail "perf-6.12 version: $v"
[[ $v =~ ^perf\ version\ 6\.12\.[0-9]+ ]] || fail "perf-6.12 version says: $v"
for w in "$find" "$server" "$stack"; do
	v=$("$w" --version 2>&1 | head -1) || fail "${w##*/} --version: $v"
	[[ $v =~ \(elfutils\)\ 0\.192$ ]] || fail "${w##*/} --version says: $v"
done
v=$("$perf" version --build-options 2>&1)
grep -Eq '^ *debuginfod: \[ on +\]' <<<"$v" || fail "perf 6.12 is built without debuginfod: $v"
tl_case_end

# ---- libraries: the loader's own account of what each program loaded.
tl_case libraries
for w in "$perf" "$find" "$stack"; do
	case $w in
	*perf-*) arg=version libs="libelf libdw libdebuginfod libtraceevent" ;;
	*find-*) arg=--version libs="libelf libdw libdebuginfod" ;;
	*) arg=--version libs="libelf libdw" ;; # libdw opens libdebuginfod when asked
	esac
	LD_DEBUG=libs "$w" $arg >"$tmp/ld.out" 2>"$tmp/ld.err" || fail "${w##*/} $arg fails"
	for lib in $libs; do
		got=$(awk -v l="/$lib.so.1" '/calling init:/ && index($NF, l) == length($NF) - length(l) + 1 {
			print $NF}' "$tmp/ld.err" | sort -u)
		case $got in
		"$prefix"/root/*) ;;
		"") fail "${w##*/}: the loader loaded no $lib.so.1" ;;
		*) fail "${w##*/}: $lib.so.1 is not the prefix's: $got" ;;
		esac
	done
done
tl_case_end

# ---- the real debuginfod 0.192 serving debuginfod-find 0.192.
if [ $netns = 0 ]; then
	tl_finish peers "ok (debuginfod 0.192 not run: no network namespace)"
	exit 0
fi
tl_case server
mkdir -p "$tmp/srv" "$tmp/bin"
printf 'int main(void) { return 0; }\n' >"$tmp/p.c"
gcc -g -o "$tmp/srv/p" "$tmp/p.c" && objcopy --only-keep-debug "$tmp/srv/p" "$tmp/srv/p.debug" &&
	objcopy --strip-debug "$tmp/srv/p" || fail "cannot build the program"
bid=$(tl_build_id "$tmp/srv/p")
# tl_start_debuginfod runs `debuginfod`: this one, through a link.
ln -s "$server" "$tmp/bin/debuginfod"
if PATH=$tmp/bin:$PATH tl_start_debuginfod 8002 "$tmp/srv"; then
	got=$(env DEBUGINFOD_URLS=http://127.0.0.1:8002 DEBUGINFOD_CACHE_PATH="$tmp/cache" \
		"$find" debuginfo "$bid" 2>"$tmp/find.err") || fail "debuginfod-find-0.192: $(cat "$tmp/find.err")"
	cmp -s "$got" "$tmp/srv/p.debug" || fail "debuginfod-find-0.192 got $got, not p.debug's bytes"
else
	fail "debuginfod-0.192 did not get ready"
fi
tl_case_end

tl_finish peers
