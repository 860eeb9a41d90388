#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `dsostore stack`: backtraces of cores of programs built here that crash
# (SIGSEGV in a stripped shared library called through a stripped
# executable, at the end of a chain of inlined calls; abort() in a second
# thread), their executables stripped and their debuginfo only behind
# dsserver.  Oracles, run on the unstripped originals (at the same paths,
# before stripping): `eu-unstrip -n --core` for the modules (start, build
# ID and its address, path), `eu-stack -i -s --core` for every frame of
# every thread (function and file:line), gdb's `thread apply all bt` for
# the frames in our programs (function and file:line).  Then: one batch
# (requests counted in dsserver's log), a core whose files are gone, one
# whose program's path is now a FIFO, a made-up one naming 40000 files, a
# truncated core, a core with a lying NT_FILE (the path names another
# build), and `stack -p` against `eu-stack -p`.  elfutils 0.192's eu-stack
# (scripts/peers' eu-stack-0.192), when there, is a second oracle for the
# cores' frames and files and for -p.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy
tl_sanitizer_exitcodes
: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc objcopy strip eu-stack eu-unstrip gdb python3
tl_need_dsserver
pattern=$(cat /proc/sys/kernel/core_pattern)
if [ "${pattern:0:1}" = "|" ] || [ "${pattern#*/}" != "$pattern" ]; then
	echo "SKIP: core_pattern is '$pattern': cores do not land in the working directory" >&2
	exit 77
fi
if ! (ulimit -c unlimited) 2>/dev/null; then
	echo "SKIP: ulimit -c unlimited refused (hard limit $(ulimit -Hc))" >&2
	exit 77
fi
tl_tmpdir dsstack
export DEBUGINFOD_CACHE_PATH=$tmp/cache HOME=$tmp/home
mkdir -p "$HOME" "$tmp/bin" "$tmp/src" "$tmp/run" "$tmp/debug"

# ---- programs
cat >"$tmp/src/lib.c" <<'EOF'
int lib_bias = 3;
static inline __attribute__((always_inline)) int level3(int *q)
{
	return *q + lib_bias;
}
static inline __attribute__((always_inline)) int level2(int *q)
{
	return level3(q) * 2;
}
static inline __attribute__((always_inline)) int level1(int *q)
{
	return level2(q) + 1;
}
__attribute__((noinline)) int lib_entry(int *q)
{
	return level1(q) + lib_bias;
}
EOF
cat >"$tmp/src/main.c" <<'EOF'
#include <stdio.h>
#include <unistd.h>
int lib_entry(int *q);
int *volatile nowhere;
__attribute__((noinline)) int call_lib(int n)
{
	int r = lib_entry(nowhere);
	return r + n;
}
int main(int argc, char **argv)
{
	if (argc > 1)
		pause();
	printf("%d\n", call_lib(argc));
	return 0;
}
EOF
cat >"$tmp/src/thr.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
__attribute__((noinline)) void give_up(int why)
{
	if (why)
		abort();
}
static void *worker(void *arg)
{
	give_up(arg != 0);
	return arg;
}
int main(void)
{
	pthread_t t;
	pthread_create(&t, 0, worker, &t);
	pthread_join(t, 0);
	return 0;
}
EOF
(cd "$tmp/src" && gcc -g -O2 -fPIC -shared -o "$tmp/bin/libcrash.so" lib.c &&
	gcc -g -O2 -o "$tmp/bin/segv" main.c -L"$tmp/bin" -lcrash -Wl,-rpath,"$tmp/bin" &&
	gcc -g -O1 -pthread -o "$tmp/bin/thr" thr.c) || { fail "compiling"; tl_finish stack; }
cp "$tmp/bin/libcrash.so" "$tmp/bin/segv" "$tmp/bin/thr" "$tmp/debug/"

crash() { # name program...: its core in $tmp/NAME.core
	local name=$1
	shift
	rm -f "$tmp/run"/core*
	# (the subshell waits for it, so that its report of the crash goes
	# to /dev/null)
	(cd "$tmp/run" && ulimit -c unlimited && "$@" >/dev/null 2>&1; :) 2>/dev/null
	mv "$(ls "$tmp/run"/core* | head -1)" "$tmp/$name.core" 2>/dev/null ||
		{ fail "$name: no core written"; tl_finish stack; }
}
crash segv "$tmp/bin/segv"
crash thr "$tmp/bin/thr"

# ---- oracles on the unstripped files
# (and elfutils 0.192's eu-stack beside the system's, when scripts/peers
# has it: case "eu-stack 0.192")
eustack192=$(tl_peer_or_none eu-stack-0.192)
for c in segv thr; do
	eu-unstrip -n --core "$tmp/$c.core" >"$tmp/$c.unstrip" 2>&1
	eu-stack -i -s -m --core "$tmp/$c.core" >"$tmp/$c.eustack" 2>&1
	[ -z "$eustack192" ] || "$eustack192" -i -s -m --core "$tmp/$c.core" >"$tmp/$c.eustack192" 2>&1
	gdb -nx -batch -ex 'set debuginfod enabled off' -ex 'thread apply all bt' "$tmp/bin/$c" \
		"$tmp/$c.core" >"$tmp/$c.gdb" 2>&1
done

# Strip: what runs has no symbols and no DWARF; the debuginfo is served.
for f in libcrash.so segv thr; do
	strip -s "$tmp/bin/$f"
	objcopy --only-keep-debug "$tmp/debug/$f" "$tmp/debug/$f.debug" && rm "$tmp/debug/$f"
done
# The stripped files too: debuginfod serves the executable artifact.
mkdir -p "$tmp/debug/exe"
cp "$tmp/bin/libcrash.so" "$tmp/bin/segv" "$tmp/bin/thr" "$tmp/debug/exe/"
tl_start_dsserver PORT srv "$tmp/debug" || tl_finish stack
export DEBUGINFOD_URLS=http://127.0.0.1:$PORT

# frames FILE: eu-stack's (and our default) output as "TID func file:line"
# lines, the file by its base name (eu-stack prints the DWARF's name as
# libdw joins it, we as the line table has it: same file).
frames() {
	awk '/^TID /{tid=$2} /^#[0-9]/{if (f) print tid, f, "??"; f=$3; next}
		/^    /{n=split($1, a, ":"); p=a[1]; sub(".*/", "", p); print tid, f, p ":" a[2]; f=""}
		END {if (f) print tid, f, "??"}' "$1"
}
# gdb_frames FILE: gdb's frames that have a file:line, as "func file:line".
gdb_frames() {
	sed -n '/^Thread /,$p' "$1" | sed -n 's/^#[0-9]* *\(0x[0-9a-f]* in \)\{0,1\}\([^ ]*\) (.*) at \([^ ]*\)$/\2 \3/p' |
		awk '{n=split($2, a, ":"); p=a[1]; sub(".*/", "", p); print $1, p ":" a[2]}'
}

# same_frames WANT GOT CORE: the same frames, but for a name where the
# two differ only in which of two aliases (ELF symbols of one address in
# the module's symbol table) they chose: eu-stack takes the first in the
# table (libc's "__clone3"), gdb and we "clone3" (docs/oracles.md).
same_frames() {
	"$DSOSTORE" stack --no-progress -q --list-modules --core "$3" | awk '{print $4}' |
		grep -v '^-$' >"$tmp/symfiles"
	python3 - "$1" "$2" "$tmp/symfiles" <<'EOF'
import subprocess, sys
want = [l.split() for l in open(sys.argv[1])]
got = [l.split() for l in open(sys.argv[2])]
files = [l.strip() for l in open(sys.argv[3]) if l.strip()]
syms = {}
for f in files:
    out = subprocess.run(["eu-readelf", "-s", f], capture_output=True, text=True).stdout
    for line in out.splitlines():
        w = line.split()
        if len(w) >= 8 and w[3] == "FUNC":
            syms.setdefault(w[7].split("@")[0], set()).add(int(w[1], 16))
ok = len(want) == len(got)
for a, b in zip(want, got):
    if a == b:
        continue
    if a[0] == b[0] and a[2] == b[2] and syms.get(a[1], set()) & syms.get(b[1], {None}):
        continue
    print("  eu-stack: %s\n  ours:     %s" % (" ".join(a), " ".join(b)), file=sys.stderr)
    ok = False
if len(want) != len(got):
    print("  %d frames (eu-stack), %d (ours)" % (len(want), len(got)), file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

for c in segv thr; do
	tl_case "$c"
	rc=0
	"$DSOSTORE" stack --no-progress --core "$tmp/$c.core" >"$tmp/$c.out" 2>"$tmp/$c.err" || rc=$?
	[ "$rc" = 0 ] || fail "exit $rc: $(tail -3 "$tmp/$c.err")"
	! grep -qE 'Sanitizer|runtime error' "$tmp/$c.err" || fail "sanitizer: $(head -3 "$tmp/$c.err")"
	frames "$tmp/$c.eustack" >"$tmp/$c.want"
	frames "$tmp/$c.out" >"$tmp/$c.got"
	[ -s "$tmp/$c.want" ] || fail "eu-stack printed no frame: $(head -3 "$tmp/$c.eustack")"
	same_frames "$tmp/$c.want" "$tmp/$c.got" "$tmp/$c.core" || fail "frames differ from eu-stack's"
	# gdb: the crashing thread's frames in our sources, in order, are
	# ours.  (Other threads: gdb unwinds a thread in clone3 further, by
	# its own heuristics, where the CFI ends and libdwfl stops, as
	# eu-stack does: docs/oracles.md.)
	tid=$(awk '/^TID / {sub(":", "", $2); print $2; exit}' "$tmp/$c.out")
	awk -v t="(LWP $tid))" '/^Thread / {keep = index($0, t) > 0} keep' "$tmp/$c.gdb" >"$tmp/$c.gdb1"
	gdb_frames "$tmp/$c.gdb1" | grep -E ' (lib|main|thr)\.c:' >"$tmp/$c.gwant"
	awk -v t="$tid:" '$1 == t && $3 ~ /^(lib|main|thr)\.c:/ {print $2, $3}' "$tmp/$c.got" >"$tmp/$c.ggot"
	[ -s "$tmp/$c.gwant" ] || fail "gdb printed no frame in our sources: $(tail -5 "$tmp/$c.gdb")"
	diff "$tmp/$c.gwant" "$tmp/$c.ggot" >"$tmp/$c.gdiff" || fail "frames differ from gdb's: $(cat "$tmp/$c.gdiff")"
	grep -q "fetched  *[1-9]" "$tmp/$c.err" || fail "nothing fetched: $(cat "$tmp/$c.err")"
	tl_case_end "($(wc -l <"$tmp/$c.got") frames)" || cat "$tmp/$c.out" "$tmp/$c.eustack" >&2
done

tl_case paths
# The files in full, as eu-stack prints them (libdw's dwarf_linesrc: a
# relative directory of the line table not under comp_dir): glibc's
# "./nptl/pthread_create.c" of start_thread, on every thread's stack, and
# "../sysdeps/...", where addr2line joins "./nptl/./nptl/pthread_create.c"
# (gdb prints eu-stack's).  Names aside (aliases: above).
full_files() {
	awk '/^TID /{tid=$2} /^    /{n=split($1, a, ":"); print tid, a[1] ":" a[2]}' "$1"
}
for c in thr segv; do
	full_files "$tmp/$c.eustack" >"$tmp/$c.fwant"
	full_files "$tmp/$c.out" >"$tmp/$c.fgot"
	diff "$tmp/$c.fwant" "$tmp/$c.fgot" >"$tmp/$c.fdiff" ||
		fail "$c: files differ from eu-stack's: $(head -20 "$tmp/$c.fdiff")"
done
if grep -q ' \./nptl/' "$tmp/thr.fwant"; then
	grep -q ' \./nptl/pthread_create\.c:' "$tmp/thr.fgot" ||
		fail "no ./nptl/pthread_create.c frame: $(cat "$tmp/thr.fgot")"
	grep -q '^#[0-9].* start_thread (.* at \./nptl/pthread_create\.c:[0-9]*$' "$tmp/thr.gdb" ||
		fail "gdb's start_thread is not at ./nptl/pthread_create.c: $(grep start_thread "$tmp/thr.gdb")"
else
	echo "  (no libc line table here: libc6-dbg not installed)"
fi
tl_case_end

tl_case segv-first
# The crash: the innermost frames, the signal, in the crashing thread.
grep -q "terminated with signal SIGSEGV" "$tmp/segv.out" || fail "no signal line: $(head -3 "$tmp/segv.out")"
head -4 "$tmp/segv.got" | awk '{print $2}' | tr '\n' ' ' | grep -q '^level3 level2 level1 lib_entry ' ||
	fail "inline chain: $(head -4 "$tmp/segv.got")"
grep -q "terminated with signal SIGABRT" "$tmp/thr.out" || fail "thr: no SIGABRT line"
crash_tid=$(awk '/in thread/ {sub(/\.$/, "", $NF); print $NF}' "$tmp/thr.out")
first_tid=$(awk '/^TID / {sub(":", "", $2); print $2; exit}' "$tmp/thr.out")
[ -n "$crash_tid" ] && [ "$crash_tid" = "$first_tid" ] || fail "crashing thread $crash_tid is not first ($first_tid)"
grep -q "give_up" <(awk -v t="$first_tid:" '$1 == t' "$tmp/thr.got") || fail "give_up not in the crashing thread"
tl_case_end

tl_case modules
# eu-unstrip's modules: start, build ID@address, by path.
rm -rf "$tmp/cache"
"$DSOSTORE" stack --no-progress -q --core "$tmp/segv.core" --list-modules >"$tmp/mods" 2>"$tmp/mods.err" ||
	fail "list-modules: $(cat "$tmp/mods.err")"
# eu-unstrip's path is its FILE column where it found one, else its NAME;
# for libc and ld.so it is the link_map's name, ours NT_FILE's: compared
# as real paths.  The vDSO has no path.
while read -r range bid file debug name; do
	start=${range%+*}
	read -r mine mpath < <(awk -v s="$start" '$1 ~ "^" s "\\+" {print $2, $5}' "$tmp/mods")
	[ "${mine:-}" = "$bid" ] || fail "module at $start: $bid (eu-unstrip), ${mine:-none} (ours)"
	case $name in linux-vdso*) continue ;; esac
	[ "$file" != . ] && [ "$file" != - ] || file=$name
	[ "$(realpath "$file")" = "$(realpath "${mpath:-/nonexistent}")" ] ||
		fail "module at $start: $file (eu-unstrip), ${mpath:-none} (ours)"
done <"$tmp/segv.unstrip"
[ "$(wc -l <"$tmp/mods")" = "$(wc -l <"$tmp/segv.unstrip")" ] || fail "module count differs"
# Our own: the stripped files are at their paths, the debuginfo fetched.
grep -q " $tmp/bin/libcrash.so $tmp/cache/.*/debuginfo $tmp/bin/libcrash.so$" "$tmp/mods" ||
	fail "libcrash.so: $(grep libcrash "$tmp/mods")"
"$DSOSTORE" stack --no-progress -q --core "$tmp/segv.core" --list-modules --json >"$tmp/mods.json" ||
	fail "--json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["modules"]) > 3' "$tmp/mods.json" ||
	fail "bad JSON"
tl_case_end

tl_case batch
# Cold cache: every debuginfo in one batch, each once; the JSON has every frame.
rm -rf "$tmp/cache"
: >"$tmp/srv.log"
"$DSOSTORE" stack --no-progress --json --core "$tmp/thr.core" >"$tmp/thr.json" 2>"$tmp/thr.jerr" ||
	fail "json: $(cat "$tmp/thr.jerr")"
n=$(grep -c '/buildid/' "$tmp/srv.log")
u=$(grep -o '/buildid/[0-9a-f]*/[a-z]*' "$tmp/srv.log" | sort -u | wc -l)
[ "$n" = "$u" ] || fail "$n requests for $u artifacts"
python3 - "$tmp/thr.json" "$tmp/thr.got" <<'EOF' || fail "JSON frames differ from the text"
import json, sys, os
d = json.load(open(sys.argv[1]))
got = [l.split() for l in open(sys.argv[2])]
js = []
for t in d["threads"]:
    for f in t["frames"]:
        loc = "??" if not f["file"] else os.path.basename(f["file"]) + ":" + str(f["line"])
        js.append(["%d:" % t["tid"], f["function"] or "??", loc])
assert js == got, (js[:5], got[:5])
assert d["signal"]["name"] == "SIGABRT" and d["threads"][0]["crashed"]
EOF
tl_case_end

tl_case gdb-format
"$DSOSTORE" stack --no-progress -q --format=gdb --core "$tmp/segv.core" >"$tmp/segv.gdbfmt" ||
	fail "--format=gdb"
gdb_frames "$tmp/segv.gdbfmt" | grep -E ' (lib|main)\.c:' >"$tmp/segv.g2"
diff <(gdb_frames "$tmp/segv.gdb" | grep -E ' (lib|main)\.c:') "$tmp/segv.g2" >/dev/null ||
	fail "gdb format: $(diff <(gdb_frames "$tmp/segv.gdb") "$tmp/segv.g2")"
tl_case_end

tl_case lying-nt-file
# NT_FILE names, for libcrash.so, a file of another build (same length
# path): its build ID in memory wins; the executable is fetched.
cp "$tmp/bin/thr" "$tmp/bin/libcrash.sx"
python3 - "$tmp/segv.core" "$tmp/lie.core" "$tmp/bin/libcrash.so" "$tmp/bin/libcrash.sx" <<'EOF'
import sys
b = open(sys.argv[1], "rb").read()
old, new = sys.argv[3].encode() + b"\0", sys.argv[4].encode() + b"\0"
assert b.count(old) >= 1
open(sys.argv[2], "wb").write(b.replace(old, new))
EOF
rc=0
"$DSOSTORE" stack --no-progress --core "$tmp/lie.core" >"$tmp/lie.out" 2>"$tmp/lie.err" || rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(cat "$tmp/lie.err")"
grep -q "executables found    1" "$tmp/lie.err" || fail "no executable fetched: $(cat "$tmp/lie.err")"
diff <(frames "$tmp/segv.out") <(frames "$tmp/lie.out") >/dev/null || fail "frames changed: $(head "$tmp/lie.out")"
tl_case_end

tl_case nt-file-malformed
# NT_FILE whose count says more files than the note holds, and one whose
# last name runs to the end of the note unterminated: an error naming
# NT_FILE (exit 2), never a crash.
python3 - "$tmp/segv.core" "$tmp" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
phoff, = struct.unpack_from("<Q", b, 32)
phnum, = struct.unpack_from("<H", b, 56)
for i in range(phnum):
    t, fl, off, va, pa, fs, ms, al = struct.unpack_from("<IIQQQQQQ", b, phoff + 56 * i)
    if t != 4:
        continue
    pos = off
    while pos < off + fs:
        nsz, dsz, typ = struct.unpack_from("<III", b, pos)
        d = pos + 12 + ((nsz + 3) & ~3)
        if typ == 0x46494C45:
            big = bytearray(b)
            struct.pack_into("<Q", big, d, 1 << 40)
            open(sys.argv[2] + "/ntcount.core", "wb").write(big)
            unterm = bytearray(b)
            end = d + dsz
            while unterm[end - 1] == 0:
                unterm[end - 1] = ord("x")
                end -= 1
            open(sys.argv[2] + "/ntname.core", "wb").write(unterm)
        pos = d + ((dsz + 3) & ~3)
EOF
for bad in ntcount ntname; do
	rc=0
	"$DSOSTORE" stack --no-progress --core "$tmp/$bad.core" >"$tmp/$bad.out" 2>"$tmp/$bad.err" || rc=$?
	[ "$rc" = 2 ] || fail "$bad: exit $rc (want 2)"
	grep -q "dsostore: .*$bad.core: NT_FILE" "$tmp/$bad.err" || fail "$bad: $(cat "$tmp/$bad.err")"
done
tl_case_end

tl_case exe-moved
# The program is no longer at its path; its debuginfo is in a .build-id
# directory, no server: missing without --exe (exit 1), the backtrace
# whole with --exe naming where it went.
mkdir -p "$tmp/moved" "$tmp/dbg"
for f in libcrash.so segv thr; do
	b=$(tl_build_id "$tmp/debug/$f.debug")
	mkdir -p "$tmp/dbg/.build-id/${b:0:2}"
	cp "$tmp/debug/$f.debug" "$tmp/dbg/.build-id/${b:0:2}/${b:2}.debug"
done
mv "$tmp/bin/segv" "$tmp/moved/segv"
rc=0
DEBUGINFOD_URLS= "$DSOSTORE" stack --no-progress --debug-dir /usr/lib/debug --debug-dir "$tmp/dbg" --core "$tmp/segv.core" \
	>"$tmp/moved.out" 2>"$tmp/moved.err" || rc=$?
[ "$rc" = 1 ] || fail "without --exe: exit $rc (want 1)"
grep -q "^missing .*bin/segv: executable" "$tmp/moved.err" || fail "segv not named: $(cat "$tmp/moved.err")"
rc=0
DEBUGINFOD_URLS= "$DSOSTORE" stack --no-progress --debug-dir /usr/lib/debug --debug-dir "$tmp/dbg" --core "$tmp/segv.core" \
	--exe "$tmp/moved/segv" >"$tmp/moved.out" 2>"$tmp/moved.err" || rc=$?
[ "$rc" = 0 ] || fail "with --exe: exit $rc: $(cat "$tmp/moved.err")"
diff <(frames "$tmp/segv.out") <(frames "$tmp/moved.out") >/dev/null ||
	fail "frames with --exe: $(head -12 "$tmp/moved.out")"
rc=0
"$DSOSTORE" stack --no-progress --core "$tmp/segv.core" --exe "$tmp/bin/thr" >/dev/null 2>"$tmp/moved.err" || rc=$?
[ "$rc" = 2 ] && grep -q "none of the core's modules" "$tmp/moved.err" || fail "--exe of another program: exit $rc"
mv "$tmp/moved/segv" "$tmp/bin/segv"
tl_case_end

tl_case files-gone
# No server, no files: the modules are named, exit 1, no crash.
rm -rf "$tmp/cache"
mkdir -p "$tmp/gone"
cp "$tmp/segv.core" "$tmp/gone.core"
mv "$tmp/bin/libcrash.so" "$tmp/gone/"
rc=0
DEBUGINFOD_URLS= "$DSOSTORE" stack --no-progress --core "$tmp/gone.core" >"$tmp/gone.out" 2>"$tmp/gone.err" || rc=$?
[ "$rc" = 1 ] || fail "exit $rc (want 1)"
grep -q "^missing .*libcrash.so" "$tmp/gone.err" || fail "libcrash.so not named: $(cat "$tmp/gone.err")"
! grep -qE 'Sanitizer|runtime error' "$tmp/gone.err" || fail "sanitizer"
mv "$tmp/gone/libcrash.so" "$tmp/bin/"
tl_case_end

tl_case fifo-at-path
# The program ran from a copy of its binary, which is then replaced by a
# FIFO at the same path (no writer: an open() of it blocks for ever, as
# eu-stack's does, libdwfl opening NT_FILE's path itself).  The FIFO is
# never opened: a warning names it, the executable comes from the server
# by build ID, and the frames are those of the same crash run from
# bin/.  (timeout: a hang guard, not a measure.)
mkdir -p "$tmp/fifo"
cp "$tmp/bin/segv" "$tmp/fifo/segv"
crash fifo "$tmp/fifo/segv"
rm "$tmp/fifo/segv"
mkfifo "$tmp/fifo/segv"
rm -rf "$tmp/cache"
rc=0
timeout 60 "$DSOSTORE" stack --no-progress --core "$tmp/fifo.core" >"$tmp/fifo.out" 2>"$tmp/fifo.err" || rc=$?
[ "$rc" != 124 ] || fail "hung (killed after 60 s)"
[ "$rc" = 0 ] || fail "exit $rc: $(cat "$tmp/fifo.err")"
grep -q "^dsostore: $tmp/fifo/segv: a FIFO, not the file that was mapped: not opened$" "$tmp/fifo.err" ||
	fail "no warning naming the FIFO: $(cat "$tmp/fifo.err")"
grep -q "executables found    1" "$tmp/fifo.err" || fail "executable not fetched: $(cat "$tmp/fifo.err")"
diff <(frames "$tmp/segv.out" | cut -d' ' -f2-) <(frames "$tmp/fifo.out" | cut -d' ' -f2-) >"$tmp/fifo.diff" ||
	fail "frames differ from the same crash's: $(cat "$tmp/fifo.diff")"
! grep -qE 'Sanitizer|runtime error' "$tmp/fifo.err" || fail "sanitizer"
rm "$tmp/fifo/segv"
tl_case_end

tl_case many-files
# A made-up core naming 40000 NT_FILE entries (20000 files, two mappings
# and two PT_LOADs each, as the kernel writes a library's): every module,
# its extent (both mappings), build ID and its address, as the generator
# laid them out.  How the time grows with the entries is
# bench/bench_core_files.sh's to measure (timeout: a hang guard only).
python3 "$DS_SRC/tests/gen/ntfile_core.py" 40000 "$tmp/many.core" "$tmp/many.want"
rc=0
DEBUGINFOD_URLS= timeout 300 "$DSOSTORE" stack --no-progress -q --list-modules --core "$tmp/many.core" \
	>"$tmp/many.got" 2>"$tmp/many.err" || rc=$?
[ "$rc" = 1 ] || fail "exit $rc (want 1: every module missing): $(tail -3 "$tmp/many.err")"
[ "$(wc -l <"$tmp/many.got")" = 20000 ] || fail "$(wc -l <"$tmp/many.got") modules (want 20000)"
cmp -s "$tmp/many.want" "$tmp/many.got" ||
	fail "modules differ: $(diff "$tmp/many.want" "$tmp/many.got" | head -5)"
! grep -qE 'Sanitizer|runtime error' "$tmp/many.err" || fail "sanitizer"
rm -f "$tmp/many.core"
tl_case_end

tl_case truncated
for cut in 100 1000 $(($(stat -c %s "$tmp/segv.core") / 2)); do
	head -c "$cut" "$tmp/segv.core" >"$tmp/cut.core"
	rc=0
	"$DSOSTORE" stack --no-progress --core "$tmp/cut.core" >"$tmp/cut.out" 2>"$tmp/cut.err" || rc=$?
	# Cut in its notes: an error (2); cut in its memory: what is left is
	# unwound, with a warning that says so.
	if [ "$cut" -le 1000 ]; then
		[ "$rc" = 2 ] || fail "cut at $cut: exit $rc"
		grep -q "dsostore: .*cut.core: .*truncated" "$tmp/cut.err" ||
			fail "cut at $cut: $(cat "$tmp/cut.err")"
	else
		grep -q "dsostore: .*cut.core: truncated: .* bytes of memory missing" "$tmp/cut.err" ||
			fail "cut at $cut: no warning: $(head -3 "$tmp/cut.err")"
	fi
	! grep -qE 'Sanitizer|runtime error' "$tmp/cut.err" || fail "cut at $cut: sanitizer"
done
tl_case_end

tl_case "eu-stack 0.192"
# The newest eu-stack on the same cores: every frame and file is ours too.
if [ -z "$eustack192" ]; then
	echo "  (skipped: no eu-stack-0.192; scripts/peers unpacks it)"
else
	for c in segv thr; do
		frames "$tmp/$c.eustack192" >"$tmp/$c.want192"
		[ -s "$tmp/$c.want192" ] || fail "$c: eu-stack 0.192 printed no frame: $(head -3 "$tmp/$c.eustack192")"
		same_frames "$tmp/$c.want192" "$tmp/$c.got" "$tmp/$c.core" || fail "$c: frames differ from eu-stack 0.192's"
		full_files "$tmp/$c.eustack192" >"$tmp/$c.fwant192"
		diff "$tmp/$c.fwant192" "$tmp/$c.fgot" >"$tmp/$c.fdiff192" ||
			fail "$c: files differ from eu-stack 0.192's: $(head -20 "$tmp/$c.fdiff192")"
	done
fi
tl_case_end

tl_case pid
# A live process, against eu-stack -p (both attach with ptrace).
"$tmp/bin/segv" wait >/dev/null &
live=$!
pids+=("$live")
sleep 0.3
if ! eu-stack -i -s -m -p "$live" >"$tmp/pid.eustack" 2>&1; then
	echo "  (skipped: eu-stack -p was refused: $(head -1 "$tmp/pid.eustack"); ptrace_scope" \
		"$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo absent))"
else
	rc=0
	"$DSOSTORE" stack --no-progress -p "$live" >"$tmp/pid.out" 2>"$tmp/pid.err" || rc=$?
	[ "$rc" = 0 ] || fail "exit $rc: $(cat "$tmp/pid.err")"
	frames "$tmp/pid.eustack" >"$tmp/pid.want"
	frames "$tmp/pid.out" >"$tmp/pid.got"
	[ -s "$tmp/pid.want" ] || fail "eu-stack -p printed no frame"
	same_frames "$tmp/pid.want" "$tmp/pid.got" "$tmp/segv.core" || fail "frames differ from eu-stack -p's"
	if [ -n "$eustack192" ]; then
		"$eustack192" -i -s -m -p "$live" >"$tmp/pid.eustack192" 2>&1 || fail "eu-stack 0.192 -p: $(head -3 "$tmp/pid.eustack192")"
		frames "$tmp/pid.eustack192" >"$tmp/pid.want192"
		same_frames "$tmp/pid.want192" "$tmp/pid.got" "$tmp/segv.core" || fail "frames differ from eu-stack 0.192 -p's"
	fi
	state=$(awk '{print $3}' "/proc/$live/stat")
	[ "$state" = S ] || fail "process left in state $state (not detached?)"
fi
kill "$live" 2>/dev/null
tl_case_end

tl_case ctrl-c
# Ctrl-C while the batch waits for a slow server: cancelled, exit 130, the
# process not left stopped.
"$tmp/bin/segv" wait >/dev/null &
live=$!
pids+=("$live")
tl_start_dsserver SLOW slow --fault '*:latency=5000' "$tmp/debug" || tl_finish stack
rm -rf "$tmp/cache"
DEBUGINFOD_URLS=http://127.0.0.1:$SLOW "$DSOSTORE" stack --no-progress -p "$live" >"$tmp/int.out" 2>"$tmp/int.err" &
st=$!
sleep 1
kill -INT "$st"
t0=$SECONDS rc=0
wait "$st" || rc=$?
[ "$rc" = 130 ] || fail "exit $rc (want 130): $(cat "$tmp/int.err")"
[ $((SECONDS - t0)) -lt 3 ] || fail "took $((SECONDS - t0)) s to stop"
state=$(awk '{print $3}' "/proc/$live/stat")
[ "$state" = S ] || fail "process left in state $state"
kill "$live" 2>/dev/null
tl_case_end

tl_finish stack
