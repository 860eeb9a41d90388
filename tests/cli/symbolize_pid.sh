#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dsostore symbolize --pid` and `dsostore normalize --pid` on real
# processes this test starts: a stripped PIE and a stripped shared library
# it links, their debuginfo only in a .build-id directory.
#
# Addresses come from the live process: its /proc/PID/maps (the mapping
# holding each function's file offset) plus nm on the unstripped
# originals; expected answers from binutils addr2line -f -i on the
# originals at the same virtual addresses, build IDs from readelf, file
# offsets from readelf's program headers.  Cases:
#   - the running binary and library (PROCMAP_QUERY, then maps text);
#   - a binary deleted while it runs (found through map_files / memory);
#   - a process in another mount namespace (unshare -m) whose binary's
#     directory has a bind mount over it: the host path holds another
#     program, and the answers must be the process's;
#   - JIT code: a program maps anonymous memory and writes
#     /tmp/perf-PID.map; its names must come back (reason "jit").
set -u
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc objcopy strip nm readelf addr2line
tl_tmpdir dspid
tl_sanitizer_exitcodes
export HOME=$tmp/home PERF_BUILDID_DIR= DEBUGINFOD_URLS=
mkdir -p "$HOME" "$tmp/orig" "$tmp/run" "$tmp/dbg"

cat >"$tmp/lib.c" <<'EOF'
static inline int mix(int x) { return x * 2654435761u >> 7; }
__attribute__((noinline)) int lib_step(int x) { return mix(x) ^ (x << 3); }
__attribute__((noinline)) int lib_twice(int x) { return lib_step(lib_step(x)) + 1; }
EOF
cat >"$tmp/main.c" <<'EOF'
#include <stdio.h>
#include <unistd.h>
int lib_twice(int);
static inline int sq(int x) { return x * x; }
__attribute__((noinline)) int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(i); return s; }
__attribute__((noinline)) int outer(int n) { return work(n) + lib_twice(n); }
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "w");
	fprintf(f, "%d\n", outer(argc)); /* then: ready */
	fclose(f);
	for (;;)
		pause();
}
EOF
(cd "$tmp/orig" && gcc -O2 -g -shared -fPIC -o libpidt.so "$tmp/lib.c" &&
	gcc -O2 -g -fPIE -pie -o prog "$tmp/main.c" -L. -lpidt -Wl,-rpath,"$tmp/run") ||
	fail "cannot compile"
[ "$fails" -eq 0 ] || exit 1
# Debuginfo into the build-id dir; the stripped files are what runs.
for f in prog libpidt.so; do
	bid=$(readelf -n "$tmp/orig/$f" | awk '/Build ID/ {print $3}')
	mkdir -p "$tmp/dbg/.build-id/${bid:0:2}"
	objcopy --only-keep-debug "$tmp/orig/$f" "$tmp/dbg/.build-id/${bid:0:2}/${bid:2}.debug"
	strip -o "$tmp/run/$f" "$tmp/orig/$f"
done

# start BINARY [PREFIX...]: runs it (its ready file $tmp/ready.N), sets
# $pid once it is up.
nstart=0
start() {
	local bin=$1 i
	shift
	nstart=$((nstart + 1))
	rm -f "$tmp/ready.$nstart"
	"$@" "$bin" "$tmp/ready.$nstart" &
	pid=$!
	pids+=("$pid")
	for ((i = 0; i < 100; i++)); do
		[ -s "$tmp/ready.$nstart" ] && return 0
		sleep 0.05
	done
	fail "$bin did not start"
	return 1
}

vaddr_to_offset() { # FILE VADDR-HEX
	local a=$((16#$2)) t off va pa fsz rest
	while read -r t off va pa fsz rest; do
		[ "$t" = LOAD ] || continue
		if ((a >= va && a < va + fsz)); then
			echo $((a - va + off))
			return
		fi
	done < <(readelf -lW "$1")
}

# addrs PID NAME-IN-MAPS ORIGINAL: for each function of ORIGINAL, a line
# "ABS VADDR OFFSET" (hex) of the process, the address 2 bytes in.
addrs() {
	local p=$1 name=$2 orig=$3 v sz off a s e perm pg rest
	nm -S "$orig" | while read -r v sz t sym; do
		case $t in T | t) ;; *) continue ;; esac
		((16#$sz > 2)) || continue
		v=$(printf '%x' $((16#$v + 2)))
		off=$(vaddr_to_offset "$orig" "$v")
		[ -n "$off" ] || continue
		while read -r range perm pg dev ino path; do
			[ "$path" = "$name" ] || [ "$path" = "$name (deleted)" ] || continue
			s=$((16#${range%-*})) e=$((16#${range#*-})) pg=$((16#$pg))
			if ((off >= pg && off < pg + e - s)); then
				printf '0x%x 0x%s 0x%x\n' $((s + off - pg)) "$v" "$off"
				break
			fi
		done <"/proc/$p/maps"
	done
}

# check_symbolize WHAT PID NAME ORIGINAL [dsostore options]: symbolize
# --pid equals addr2line at the same addresses; normalize's build ID,
# offset and vaddr are readelf's and nm's.
check_symbolize() {
	local what=$1 p=$2 name=$3 orig=$4 bid
	shift 4
	addrs "$p" "$name" "$orig" >"$tmp/a"
	[ -s "$tmp/a" ] || { fail "$what: no addresses of $name in /proc/$p/maps"; return; }
	cut -d' ' -f2 "$tmp/a" | addr2line -f -i -e "$orig" >"$tmp/want"
	cut -d' ' -f1 "$tmp/a" | "$DSOSTORE" symbolize -f -i --pid "$p" --debug-dir "$tmp/dbg" \
		"$@" >"$tmp/got" 2>"$tmp/err" || fail "$what: symbolize exit $?: $(head -3 "$tmp/err")"
	diff "$tmp/want" "$tmp/got" >"$tmp/diff" ||
		fail "$what: symbolize --pid differs from addr2line: $(head -8 "$tmp/diff")"
	bid=$(readelf -n "$orig" | awk '/Build ID/ {print $3}')
	"$DSOSTORE" normalize --pid "$p" "$@" $(cut -d' ' -f1 "$tmp/a") >"$tmp/norm" 2>"$tmp/err" ||
		fail "$what: normalize exit $?: $(head -3 "$tmp/err")"
	while read -r a v o; do
		echo "$a $bid $o $v"
	done <"$tmp/a" >"$tmp/nwant"
	cut -d' ' -f1-4 "$tmp/norm" >"$tmp/ngot"
	diff "$tmp/nwant" "$tmp/ngot" >"$tmp/diff" ||
		fail "$what: normalize differs from readelf/nm: $(head -6 "$tmp/diff")"
}

tl_case "running binary and library"
start "$tmp/run/prog" && {
	check_symbolize "binary" "$pid" "$tmp/run/prog" "$tmp/orig/prog"
	check_symbolize "library" "$pid" "$tmp/run/libpidt.so" "$tmp/orig/libpidt.so"
	# -a prints the address as given (the process's), as addr2line does.
	first=$(head -1 "$tmp/a" | cut -d' ' -f1)
	"$DSOSTORE" symbolize -a -f --pid "$pid" "$first" --debug-dir "$tmp/dbg" >"$tmp/got" 2>&1
	[ "$(head -1 "$tmp/got")" = "$(printf '0x%016x' $((first)))" ] ||
		fail "-a: $(head -1 "$tmp/got"), want $(printf '0x%016x' $((first)))"
	# The maps text parser answers as PROCMAP_QUERY does.
	cut -d' ' -f1 "$tmp/a" >"$tmp/abs"
	"$DSOSTORE" normalize --pid "$pid" <"$tmp/abs" >"$tmp/n1" 2>&1
	"$DSOSTORE" normalize --pid "$pid" --no-procmap-query <"$tmp/abs" >"$tmp/n2" 2>&1
	cmp -s "$tmp/n1" "$tmp/n2" || fail "maps text differs: $(diff "$tmp/n1" "$tmp/n2" | head -4)"
	# Kernel, unmapped and stack addresses are said to be so.
	stk=$(awk '$6 == "[stack]" {split($1, r, "-"); print r[1]}' "/proc/$pid/maps")
	"$DSOSTORE" normalize --pid "$pid" 0xffffffff81000000 0x10 "0x$stk" >"$tmp/norm" 2>&1
	[ "$(awk '{print $NF}' "$tmp/norm" | tr '\n' ' ')" = "kernel unmapped anonymous " ] ||
		fail "reasons: $(cat "$tmp/norm")"
	# The vDSO: its build ID read from the process's memory.
	vd=$(awk '$6 == "[vdso]" {split($1, r, "-"); print r[1]}' "/proc/$pid/maps")
	if [ -n "$vd" ]; then
		"$DSOSTORE" normalize --pid "$pid" "0x$vd" >"$tmp/norm" 2>&1
		dd if="/proc/$pid/mem" bs=4096 skip=$((16#$vd / 4096)) count=2 of="$tmp/vdso.so" \
			2>/dev/null
		vbid=$(readelf -n "$tmp/vdso.so" 2>/dev/null | awk '/Build ID/ {print $3}')
		[ -n "$vbid" ] && [ "$(cut -d' ' -f2 "$tmp/norm")" = "$vbid" ] ||
			fail "vdso: '$(cat "$tmp/norm")', readelf of its image: '$vbid'"
	fi
	kill "$pid"
}
tl_case_end

tl_case "one call over several DSOs, mixed order, one unmapped"
# symbolize --pid hands its addresses to ds_symbolize_pid() at once: the
# program's, its library's and libc's mixed, one repeated, and 0x10 (page
# 0, never mapped).  Expected: addr2line -f on each file at its virtual
# address (libc's qsort from nm -D, its debuginfo found by addr2line as
# by us in /usr/lib/debug, or by neither), "??"/"??:0" for the unmapped one, which stderr says
# is in no mapping of the process (exit 1); in JSON, its Reason.  Then
# without the program's debuginfo: "??" and one line saying why.
start "$tmp/run/prog" && {
	addrs "$pid" "$tmp/run/prog" "$tmp/orig/prog" | head -2 >"$tmp/ap"
	addrs "$pid" "$tmp/run/libpidt.so" "$tmp/orig/libpidt.so" | head -1 >"$tmp/al"
	libc=$(awk '$6 ~ /\/libc[.-][^\/]*so/ {print $6; exit}' "/proc/$pid/maps")
	qv=$(nm -D --defined-only "$libc" | awk '$3 ~ /^qsort(@|$)/ {print $1; exit}')
	qv=$(printf '%x' $((16#$qv + 4)))
	qoff=$(vaddr_to_offset "$libc" "$qv")
	qabs=
	while read -r range perm pg dev ino path; do
		[ "$path" = "$libc" ] || continue
		s=$((16#${range%-*})) e=$((16#${range#*-})) pg=$((16#$pg))
		if ((qoff >= pg && qoff < pg + e - s)); then
			qabs=$(printf '0x%x' $((s + qoff - pg)))
			break
		fi
	done <"/proc/$pid/maps"
	if [ -s "$tmp/ap" ] && [ -s "$tmp/al" ] && [ -n "$qabs" ]; then
		p1=($(sed -n 1p "$tmp/ap")) p2=($(sed -n 2p "$tmp/ap")) l1=($(cat "$tmp/al"))
		# (order: library, program, unmapped, libc, program, library)
		{
			addr2line -f -e "$tmp/orig/libpidt.so" "${l1[1]}"
			addr2line -f -e "$tmp/orig/prog" "${p1[1]}"
			printf '??\n??:0\n'
			addr2line -f -e "$libc" "0x$qv"
			addr2line -f -e "$tmp/orig/prog" "${p2[1]}"
			addr2line -f -e "$tmp/orig/libpidt.so" "${l1[1]}"
		} | sed 's/ (discriminator [0-9]*)//' >"$tmp/want"
		set -- "${l1[0]}" "${p1[0]}" 0x10 "$qabs" "${p2[0]}" "${l1[0]}"
		"$DSOSTORE" symbolize -f --pid "$pid" --debug-dir "$tmp/dbg" --debug-dir /usr/lib/debug "$@" >"$tmp/got" 2>"$tmp/err"
		rc=$?
		sed -i 's/ (discriminator [0-9]*)//' "$tmp/got"
		[ $rc = 1 ] || fail "exit status $rc (an unmapped address: 1): $(head -3 "$tmp/err")"
		diff "$tmp/want" "$tmp/got" >"$tmp/diff" ||
			fail "not addr2line's answers in input order: $(head -12 "$tmp/diff")"
		[ "$(cat "$tmp/err")" = "dsostore: pid:$pid: 0x10: in no mapping of the process" ] ||
			fail "stderr: $(head -3 "$tmp/err")"
		"$DSOSTORE" symbolize --pid "$pid" --debug-dir "$tmp/dbg" --debug-dir /usr/lib/debug --output-style=JSON "$@" \
			>"$tmp/json" 2>/dev/null
		python3 - "$tmp/json" "$tmp/orig/prog" <<'PY' >"$tmp/jcheck" 2>&1 || fail "JSON: $(tail -2 "$tmp/jcheck")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 6, rows
assert rows[2]["Reason"] == "in no mapping of the process" and "Error" in rows[2], rows[2]
assert rows[2]["ModuleName"].startswith("pid:"), rows[2]
for i in (0, 1, 3, 4, 5):
    assert "Reason" not in rows[i] or rows[i]["Reason"] == "no debuginfo", rows[i]
    assert rows[i]["Symbol"][0]["FunctionName"], rows[i]
assert rows[1]["ModuleName"].endswith("/run/prog") and rows[0]["ModuleName"].endswith("libpidt.so"), rows
PY
		# Without the build-ID dir the stripped program has no debuginfo
		# and its .dynsym holds none of its functions (nm -D): "??" for
		# both addresses, one stderr line saying why, exit 0 (a miss).
		nm -D --defined-only "$tmp/run/prog" | grep -qw -e work -e outer &&
			fail "prog exports its functions: the case tests nothing"
		"$DSOSTORE" symbolize -f --pid "$pid" "${p1[0]}" "${p2[0]}" >"$tmp/got" 2>"$tmp/err"
		rc=$?
		[ $rc = 0 ] || fail "no debuginfo: exit status $rc"
		[ "$(cat "$tmp/got")" = "$(printf '??\n??:0\n??\n??:0')" ] || fail "no debuginfo: $(cat "$tmp/got")"
		[ "$(cat "$tmp/err")" = "dsostore: $tmp/run/prog: ${p1[0]}: no symbol here, and no debuginfo (not found)" ] ||
			fail "no debuginfo: stderr $(cat "$tmp/err")"
	else
		fail "no addresses: prog $(wc -l <"$tmp/ap"), lib $(wc -l <"$tmp/al"), libc '$qabs'"
	fi
	kill "$pid"
}
tl_case_end

tl_case "binary deleted while running"
mkdir -p "$tmp/del"
cp "$tmp/run/prog" "$tmp/del/prog"
start "$tmp/del/prog" && {
	rm "$tmp/del/prog"
	grep -q "$tmp/del/prog (deleted)" "/proc/$pid/maps" || fail "not deleted in maps"
	check_symbolize "deleted" "$pid" "$tmp/del/prog" "$tmp/orig/prog"
	kill "$pid"
}
tl_case_end

tl_case "another mount namespace"
if unshare -m true 2>/dev/null || unshare -rm true 2>/dev/null; then
	how="unshare -m"
	unshare -m true 2>/dev/null || how="unshare -rm"
	# The host's $tmp/ns/prog is another program (other code, other build
	# ID); in the namespace, a bind mount puts the real one there.
	mkdir -p "$tmp/ns" "$tmp/nsreal"
	sed 's/s += sq(i)/s += sq(i) + 7/' "$tmp/main.c" >"$tmp/other.c"
	gcc -O2 -g -fPIE -pie -o "$tmp/ns/prog" "$tmp/other.c" -L"$tmp/orig" -lpidt \
		-Wl,-rpath,"$tmp/run" || fail "cannot compile the other program"
	cp "$tmp/run/prog" "$tmp/nsreal/prog"
	cat >"$tmp/nsrun.sh" <<EOF
mount --bind "$tmp/nsreal" "$tmp/ns" || exit 1
exec "\$@"
EOF
	start "$tmp/ns/prog" $how --propagation private bash "$tmp/nsrun.sh" && {
		[ "$(readelf -n "$tmp/ns/prog" | awk '/Build ID/ {print $3}')" != \
			"$(readelf -n "$tmp/orig/prog" | awk '/Build ID/ {print $3}')" ] ||
			fail "the host path holds the same program: the case tests nothing"
		check_symbolize "mount namespace" "$pid" "$tmp/ns/prog" "$tmp/orig/prog"
		kill "$pid"
	}
	tl_case_end
else
	CASE=
	echo "skip another mount namespace: unshare -m and unshare -rm fail for this user"
fi

tl_case "JIT code named by a perf map"
cat >"$tmp/jit.c" <<'EOF'
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	(void)argc;
	unsigned char *code = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	FILE *f;

	if (code == MAP_FAILED)
		return 1;
	code[0] = 0xc3;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	fprintf(f, "%lx 100 jit_first\n", (unsigned long)code);
	fprintf(f, "%lx 80 LazyCompile:*second /srv/app.js:12\n", (unsigned long)code + 0x100);
	fclose(f);
	f = fopen(argv[1], "w");
	fprintf(f, "%lx\n", (unsigned long)code);
	fclose(f);
	for (;;)
		pause();
}
EOF
gcc -O1 -o "$tmp/jit" "$tmp/jit.c" || fail "cannot compile jit.c"
start "$tmp/jit" && {
	tl_also_rm+=("/tmp/perf-$pid.map")
	base=$((16#$(cat "$tmp/ready.$nstart")))
	"$DSOSTORE" symbolize -f --pid "$pid" $(printf '0x%x 0x%x' $((base + 0x10)) $((base + 0x140))) \
		>"$tmp/got" 2>"$tmp/err" || fail "symbolize exit $?: $(cat "$tmp/err")"
	[ "$(sed -n 1p "$tmp/got")" = jit_first ] && \
		[ "$(sed -n 3p "$tmp/got")" = "LazyCompile:*second /srv/app.js:12" ] ||
		fail "JIT names: $(cat "$tmp/got")"
	"$DSOSTORE" normalize --pid "$pid" $(printf '0x%x 0x%x' $((base + 0x10)) $((base + 0x400))) \
		>"$tmp/norm" 2>&1
	grep -q " jit jit_first$" "$tmp/norm" && tail -1 "$tmp/norm" | grep -q " anonymous$" ||
		fail "normalize: $(cat "$tmp/norm")"
	kill "$pid"
	rm -f "/tmp/perf-$pid.map"
}
tl_case_end

# Whose perf map is taken (docs/live.md): one the process's user, you or
# root own, that nobody else may write, within 64 MiB and 1M lines.  Else
# the address stays "anonymous" and a warning says why.  ($1: the map's
# state; the first line of the map names base as jit_first.)
refused() { # NAME WARNING-REGEX
	"$DSOSTORE" normalize --pid "$pid" "$(printf '0x%x' $((base + 0x10)))" >"$tmp/$1.out" 2>"$tmp/$1.err"
	grep -q " anonymous$" "$tmp/$1.out" || fail "$1: used: $(cat "$tmp/$1.out")"
	# (Read through the process's root, its mount namespace's /tmp.)
	grep -Eq "perf map (/proc/$pid/root)?$map: $2; not used" "$tmp/$1.err" ||
		fail "$1: no warning: $(cat "$tmp/$1.err")"
}
tl_case "a perf map another user could have written, or too big: refused"
start "$tmp/jit" && {
	map=/tmp/perf-$pid.map
	tl_also_rm+=("$map")
	base=$((16#$(cat "$tmp/ready.$nstart")))
	cp "$map" "$tmp/map.keep"
	chmod 0666 "$map"
	refused mode0666 "writable by everyone \(mode 0666\)"
	chmod 0620 "$map"
	refused mode0620 "writable by its group \(mode 0620\)"
	chmod 0644 "$map"
	if [ "$(id -u)" = 0 ]; then
		chown nobody "$map"
		refused owner "owned by uid $(id -u nobody), not by you \(uid 0\) or root"
		chown 0 "$map"
	else
		echo "skip another user's map: needs root to chown"
	fi
	rm -f "$map"
	ln -s "$tmp/map.keep" "$map"
	refused symlink "a symbolic link"
	rm -f "$map"
	# One line past 1M lines (6 MB): refused whole, not cut.
	{ cat "$tmp/map.keep"; yes '1 1 filler' | head -n $((1048576 - $(wc -l <"$tmp/map.keep")))
	  echo '2 1 one_too_many'; } >"$map"
	refused lines "more than 1048576 lines"
	# 1 GiB (sparse: no disk) past the 64 MiB: refused before it is read,
	# so the normalizer's peak memory stays far below even the bound.
	cp "$tmp/map.keep" "$map" && truncate -s 1G "$map"
	refused size "1073741824 bytes, more than the 64 MiB read at most"
	rss=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
		"$DSOSTORE" normalize --pid "$pid" "$(printf '0x%x' $((base + 0x10)))")
	[ "${rss:-999999}" -lt 65536 ] || fail "normalize with a 1 GiB map peaked at ${rss:-?} KiB"
	# What is well again is used again (the file changed: read anew).
	cp "$tmp/map.keep" "$map"
	"$DSOSTORE" normalize --pid "$pid" "$(printf '0x%x' $((base + 0x10)))" >"$tmp/again" 2>&1
	grep -q " jit jit_first$" "$tmp/again" || fail "a good map again: $(cat "$tmp/again")"
	kill "$pid"
	rm -f "$map"
}
tl_case_end

# A process of another user writes its own map: that user's map is the
# process's, used when root looks at it.
tl_case "a process's own user's perf map is used"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkdir -p "$tmp/pub" && chmod 1777 "$tmp/pub" && chmod o+x "$tmp" "$tmp/jit"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$tmp/jit" "$tmp/pub/ready" &
	pid=$!
	pids+=("$pid")
	for ((i = 0; i < 100; i++)); do [ -s "$tmp/pub/ready" ] && break; sleep 0.05; done
	map=/tmp/perf-$pid.map
	tl_also_rm+=("$map")
	[ "$(stat -c %U "$map" 2>/dev/null)" = nobody ] || fail "the map is not nobody's: $(ls -l "$map")"
	base=$((16#$(cat "$tmp/pub/ready")))
	"$DSOSTORE" normalize --pid "$pid" "$(printf '0x%x' $((base + 0x10)))" >"$tmp/nobody" 2>&1
	grep -q " jit jit_first$" "$tmp/nobody" || fail "nobody's own map: $(cat "$tmp/nobody")"
	kill "$pid"
	rm -f "$map"
else
	echo "skip a process of another user: needs root and setpriv"
fi
tl_case_end

tl_case "JIT perf map of a process in its own pid and mount namespace"
# The process is pid 1 of a new pid namespace and has a /tmp of its own:
# it writes /tmp/perf-1.map there, which the host sees only through
# /proc/PID/root, under the pid NSpid gives.
if [ "$(id -u)" = 0 ] && unshare -m -p -f true 2>/dev/null; then
	mkdir -p "$tmp/nstmp/${tmp##*/}"
	cat >"$tmp/nsjit.sh" <<EOF
mount --bind "$tmp" "$tmp/nstmp/${tmp##*/}" && mount --rbind "$tmp/nstmp" /tmp || exit 1
exec "\$@"
EOF
	rm -f "$tmp/ready.ns"
	unshare -m -p -f --propagation private bash "$tmp/nsjit.sh" "$tmp/jit" "$tmp/ready.ns" &
	upid=$!
	pids+=("$upid")
	for ((i = 0; i < 100; i++)); do [ -s "$tmp/ready.ns" ] && break; sleep 0.05; done
	pid=$(pgrep -P "$upid" | head -1)
	if [ -n "$pid" ] && [ -s "$tmp/ready.ns" ]; then
		[ -s "$tmp/nstmp/perf-1.map" ] && [ ! -e "/tmp/perf-$pid.map" ] ||
			fail "the perf map is not only in the namespace's /tmp as perf-1.map"
		base=$((16#$(cat "$tmp/ready.ns")))
		"$DSOSTORE" normalize --pid "$pid" "$(printf '0x%x' $((base + 0x110)))" >"$tmp/norm" 2>&1
		grep -q " jit LazyCompile:\*second /srv/app.js:12$" "$tmp/norm" ||
			fail "normalize: $(cat "$tmp/norm")"
	fi
	# (A namespace's init ignores TERM from outside: it has no handler.)
	[ -n "$pid" ] && kill -KILL "$pid"
	if [ -z "$pid" ] || [ ! -s "$tmp/ready.ns" ]; then
		fail "the namespaced JIT did not start"
	fi
	tl_case_end
else
	CASE=
	echo "skip JIT in a pid namespace: needs root and unshare -m -p"
fi

tl_finish symbolize_pid
