#!/usr/bin/env bash
# Crash backtrace benchmark: the core of a process whose stack
# runs through 40 shared libraries (lib00 calls lib01 ... lib39 crashes),
# every file stripped, their debuginfo (and executables) only behind
# dsserver with 50 ms added per request, cold cache each run:
#   A  dsostore stack --core CORE               (one parallel batch)
#   B  gdb -batch -ex 'thread apply all bt'      (DEBUGINFOD_URLS, debuginfod on)
#   C  eu-stack -i -s --core CORE                (DEBUGINFOD_URLS)
# Reports wall time (median), requests the server saw, and whether the
# backtraces agree: every frame's function and file:line, A against C
# (frame for frame) and against B (B's frames that have a file:line).
#
#   bench/bench_stack.sh [-q] [-n LIBS] [-l MS] [-r RUNS] [-k]
#     -q  smoke run: 8 libraries, 1 run      -n  libraries (40)
#     -l  latency added per request, ms (50) -r  runs of each, median (3)
#     -k  keep the work directory
set -euo pipefail

src=${DS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/bench/benchlib.bash"
build=${DS_BUILD:-$src/build}
dsostore=${DSOSTORE:-$build/dsostore}
dsserver=${DSSERVER:-$build/dsserver}
n=40 latency=50 runs=3 keep=''

while getopts qn:l:r:kh opt; do
	case $opt in
	q) n=8 runs=1 ;;
	n) n=$OPTARG ;;
	l) latency=$OPTARG ;;
	r) runs=$OPTARG ;;
	k) keep=1 ;;
	*)
		bl_usage
		;;
	esac
done

bl_need gcc strip objcopy gdb eu-stack python3
[ -x "$dsserver" ] || die "no $dsserver: run make first"
"$dsostore" stack --help >/dev/null 2>&1 || die "$dsostore has no stack command"
pattern=$(cat /proc/sys/kernel/core_pattern)
use_gcore=''
if [ "${pattern:0:1}" = "|" ] || [ "${pattern#*/}" != "$pattern" ]; then
	use_gcore=1 # cores go elsewhere: gdb's gcore of the stopped process
fi

work=$(mktemp -d "${DS_BENCH_TMPDIR:-${TMPDIR:-/tmp}}/dsbenchstack.XXXXXX")
server_pid=''
cleanup() {
	[ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
	wait 2>/dev/null || true
	[ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
export HOME=$work/home
mkdir -p "$HOME" "$work/src" "$work/bin" "$work/srv/debug" "$work/srv/exe" "$work/run"

# ---- the program: a chain through n libraries, the last one crashes
last=$((n - 1))
for ((i = 0; i < n; i++)); do
	name=$(printf 'lib%02d' "$i")
	next=$(printf 'lib%02d' $((i + 1)))
	{
		if [ "$i" = "$last" ]; then
			echo "int *volatile ${name}_null;"
			echo "__attribute__((noinline)) int ${name}_step(int x) { return *${name}_null + x; }"
		else
			echo "int ${next}_step(int x);"
			echo "__attribute__((noinline)) int ${name}_step(int x) { int r = ${next}_step(x + 1); return r * 3 + x; }"
		fi
	} >"$work/src/$name.c"
done
# Back to front: each library links against the next.
for ((i = last; i >= 0; i--)); do
	name=$(printf 'lib%02d' "$i")
	next=$(printf 'lib%02d' $((i + 1)))
	(cd "$work/src" && gcc -g -O1 -fPIC -shared -o "$work/bin/lib$name.so" "$name.c" \
		$([ "$i" = "$last" ] || echo "-L$work/bin -l$next") -Wl,-rpath,"$work/bin") ||
		die "compiling $name"
done
cat >"$work/src/main.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int lib00_step(int x);
int main(int argc, char **argv)
{
	if (argc > 1)
		raise(SIGSTOP); /* for gcore */
	printf("%d\n", lib00_step(argc));
	return 0;
}
EOF
(cd "$work/src" && gcc -g -O1 -o "$work/bin/crash" main.c -L"$work/bin" -llib00 -Wl,-rpath,"$work/bin") ||
	die "compiling main"
for f in "$work/bin"/*; do
	b=${f##*/}
	objcopy --only-keep-debug "$f" "$work/srv/debug/$b.debug"
	strip -s "$f"
	cp "$f" "$work/srv/exe/$b"
done

# ---- the core
if [ -z "$use_gcore" ]; then
	(cd "$work/run" && ulimit -c unlimited && exec "$work/bin/crash") >/dev/null 2>&1 || true
	core=$(ls "$work/run"/core* 2>/dev/null | head -1 || true)
else
	# gcore cannot make a core of the crash itself: it stops the process
	# under gdb at the fault (gdb -ex run), and writes it there.
	gdb -nx -batch -iex 'set debuginfod enabled off' -ex run -ex "gcore $work/run/core" \
		"$work/bin/crash" >/dev/null 2>&1 || true
	core=$work/run/core
fi
[ -s "$core" ] || die "no core (core_pattern: $pattern)"

# ---- the server
"$dsserver" --port-file "$work/port" --log "$work/server.log" --die-with-parent --max-runtime 1800 \
	--fault "*:latency=$latency" "$work/srv" >"$work/server.err" 2>&1 &
server_pid=$!
for ((i = 0; i < 200; i++)); do
	[ -s "$work/port" ] && break
	kill -0 "$server_pid" 2>/dev/null || die "dsserver died: $(head -3 "$work/server.err")"
	sleep 0.05
done
[ -s "$work/port" ] || die "dsserver did not start"
export DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$work/port")
export DEBUGINFOD_PROGRESS=
unset DEBUGINFOD_VERBOSE

run() { # name command...: one cold run; prints "ms requests"
	local name=$1 t0 t1 before after
	shift
	rm -rf "$work/cache" "$HOME/.cache"
	export DEBUGINFOD_CACHE_PATH=$work/cache
	before=$(wc -l <"$work/server.log")
	t0=$(date +%s.%N)
	"$@" >"$work/out.$name" 2>"$work/err.$name" || true
	t1=$(date +%s.%N)
	after=$(wc -l <"$work/server.log")
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }') $((after - before))"
}

for ((r = 0; r < runs; r++)); do
	run A "$dsostore" stack --no-progress --core "$core" >>"$work/t.A"
	run B gdb -nx -batch -iex 'set debuginfod enabled on' -ex 'thread apply all bt' \
		"$work/bin/crash" "$core" >>"$work/t.B"
	run C eu-stack -i -s -m --core "$core" >>"$work/t.C"
done

# ---- agreement
frames() { # eu-stack-style output: "func file:line" per frame
	awk '/^#[0-9]/{if (f) print f, "??"; f=$3; next}
		/^    /{split($1, a, ":"); p=a[1]; sub(".*/", "", p); print f, p ":" a[2]; f=""}
		END {if (f) print f, "??"}' "$1"
}
frames "$work/out.A" >"$work/f.A"
frames "$work/out.C" >"$work/f.C"
sed -n '/^Thread /,$p' "$work/out.B" |
	sed -n 's/^#[0-9]* *\(0x[0-9a-f]* in \)\{0,1\}\([^ ]*\) (.*) at \([^ ]*\)$/\2 \3/p' |
	awk '{split($2, a, ":"); p=a[1]; sub(".*/", "", p); print $1, p ":" a[2]}' >"$work/f.B"
grep -E '^lib[0-9]+_step|^main ' "$work/f.A" | grep -v '??' >"$work/f.Aown"
grep -E '^lib[0-9]+_step|^main ' "$work/f.B" >"$work/f.Bown"
agree_c=no agree_b=no
cmp -s "$work/f.A" "$work/f.C" && agree_c=yes
cmp -s "$work/f.Aown" "$work/f.Bown" && agree_b=yes
own=$(wc -l <"$work/f.Aown")
[ "$own" -ge "$n" ] || echo "bench_stack: only $own of our $((n + 1)) frames named by dsostore" >&2

a=$(median_of "$work/t.A" 1) b=$(median_of "$work/t.B" 1) c=$(median_of "$work/t.C" 1)
ra=$(median_of "$work/t.A" 2) rb=$(median_of "$work/t.B" 2) rc=$(median_of "$work/t.C" 2)
printf 'dsostore stack benchmark: a core through %d stripped libraries, debuginfo behind dsserver with %d ms per request, cold cache; %d CPUs, load %s; median of %d runs\n\n' \
	"$n" "$latency" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)" "$runs"
printf '%-44s %9s %9s %9s  %s\n' name "wall ms" requests "vs A" "backtrace agrees with A"
printf '%-44s %9s %9s %9s  %s\n' "A dsostore stack --core" "$a" "$ra" "1.0x" "-"
printf '%-44s %9s %9s %9s  %s\n' "B gdb -batch thread apply all bt" "$b" "$rb" \
	"$(awk -v x="$b" -v y="$a" 'BEGIN { printf "%.1fx", x / y }')" "$agree_b ($own frames in our libraries)"
printf '%-44s %9s %9s %9s  %s\n' "C eu-stack -i -s --core" "$c" "$rc" \
	"$(awk -v x="$c" -v y="$a" 'BEGIN { printf "%.1fx", x / y }')" "$agree_c (every frame)"
echo
echo "BENCH stack.dsostore value=$a unit=ms ratio=1.0x goal_max=- met=- requests=$ra"
echo "BENCH stack.gdb value=$b unit=ms ratio=$(awk -v x="$b" -v y="$a" 'BEGIN { printf "%.1fx", x / y }') goal_min=10x met=$(awk -v x="$b" -v y="$a" 'BEGIN { print (x / y >= 10) ? "yes" : "no" }') requests=$rb agrees=$agree_b"
echo "BENCH stack.eu_stack value=$c unit=ms ratio=$(awk -v x="$c" -v y="$a" 'BEGIN { printf "%.1fx", x / y }') goal_max=- met=- requests=$rc agrees=$agree_c"
[ "$agree_b" = yes ] && [ "$agree_c" = yes ] || {
	echo "bench_stack: backtraces disagree (-k keeps $work)" >&2
	exit 1
}
