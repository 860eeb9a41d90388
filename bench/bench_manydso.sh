#!/usr/bin/env bash
# One stream of addresses over many DSOs, what a profiler of a whole
# machine asks: `dsostore symbolize -a -f -i` on "PATH ADDR" lines beside
# llvm-symbolizer -a -f -i on the same lines and binutils' addr2line -f -i,
# one process per DSO (what perf does), in one run.
#
#   bench/bench_manydso.sh [-q] [-n DSOS] [-a ADDRS] [-r RUNS] [-s SEED] [-k]
#     -q  smoke run: 20 DSOs, 200 addresses each, 1 run
#     -n  DSOs (150): the system's shared libraries, libc, libm and
#         libpython3.11 first (libc6-dbg's debuginfo for libc), the rest
#         drawn at random; most have no debuginfo here (.dynsym only)
#     -a  addresses per DSO (1000), uniform over its executable PT_LOADs;
#         the lines shuffled into one stream
#     -r  timed runs of each tool, in rotated order, median (3)
#     -s  seed of the draws (7)   -k  keep the work directory
#
# Per tool: wall time, CPU time (user + system; what a loaded machine
# distorts least) and peak RSS (addr2line: its largest process, and the
# sum of its CPU), by /usr/bin/time.  Goals: dsostore's CPU
# at least 3x less than llvm-symbolizer's, its RSS at most addr2line's
# largest process.  The answers are compared with addr2line's (GNU
# style is addr2line's), address by address (function names and
# file:line of every frame); the addresses that differ are counted, not
# a failure of the bench (known: PLT stubs, which we name as
# NAME@plt and addr2line does not; glibc lines binutils 2.40 names after
# the wrong file, docs/oracles.md).
set -euo pipefail

src=${DS_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/bench/benchlib.bash"
build=${DS_BUILD:-$src/build}
ndso=150 naddr=1000 runs=3 seed=7 keep=''

while getopts qn:a:r:s:kh opt; do
	case $opt in
	q) ndso=20 naddr=200 runs=1 ;;
	n) ndso=$OPTARG ;;
	a) naddr=$OPTARG ;;
	r) runs=$OPTARG ;;
	s) seed=$OPTARG ;;
	k) keep=1 ;;
	*) bl_usage ;;
	esac
done

bl_need python3 readelf llvm-symbolizer addr2line
[ -x /usr/bin/time ] || die "/usr/bin/time not found (the time package)"
dsostore=${DSOSTORE:-$build/dsostore}
[ -x "$dsostore" ] || die "no $dsostore: run make first"
work=$(mktemp -d "${TMPDIR:-/tmp}/ds-bench-manydso.XXXXXX")
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
# no network, no saved indexes from elsewhere, perf's cache the bench's own
export HOME=$work DEBUGINFOD_URLS= DSOSTORE_SYMINDEX_PATH=$work/symindex

python3 - "$ndso" "$naddr" "$seed" "$work" <<'PY' || die "cannot draw the DSOs"
import glob, os, random, subprocess, sys
ndso, naddr, seed, work = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rnd = random.Random(seed)
libs = []
for p in sorted(glob.glob('/usr/lib/x86_64-linux-gnu/*.so*')):
    if os.path.islink(p) or not os.path.isfile(p):
        continue
    with open(p, 'rb') as f:
        h = f.read(6)
    if h[:4] == b'\x7fELF' and h[4] == 2:
        libs.append(p)
first = [p for p in libs if os.path.basename(p).startswith(('libc.so.', 'libm.so.', 'libpython3.11'))]
rest = [p for p in libs if p not in first]
rnd.shuffle(rest)
lines, per = [], {}
for p in first + rest:
    if len(per) == ndso:
        break
    out = subprocess.run(['readelf', '-lW', p], capture_output=True, text=True).stdout
    segs = []
    for l in out.splitlines():
        f = l.split()
        # LOAD off vaddr paddr filesz memsz FLG align
        if len(f) >= 8 and f[0] == 'LOAD' and 'E' in ''.join(f[6:-1]) and int(f[4], 16):
            segs.append((int(f[2], 16), int(f[4], 16)))
    if not segs:
        continue
    per[p] = []
    for _ in range(naddr):
        v, n = rnd.choice(segs)
        a = v + rnd.randrange(n)
        per[p].append(a)
        lines.append('%s 0x%x' % (p, a))
rnd.shuffle(lines)
open(work + '/stream', 'w').write('\n'.join(lines) + '\n')
with open(work + '/dsos', 'w') as f:
    for i, (p, addrs) in enumerate(per.items()):
        open('%s/a2l.%d' % (work, i), 'w').write(''.join('0x%x\n' % a for a in addrs))
        f.write('%d %s\n' % (i, p))
PY
ndso=$(wc -l <"$work/dsos")
nlines=$(wc -l <"$work/stream")

# one TOOL: a run; "wall_ms cpu_ms rss_kb" appended to $work/t.TOOL.
one() {
	local t=$1 out=$work/out.$1
	case $t in
	dsostore)
		/usr/bin/time -o "$work/time" -f '%e %U %S %M' \
			"$dsostore" symbolize -a -f -i <"$work/stream" >"$out" 2>/dev/null
		awk '{ printf "%.0f %.0f %d\n", $1 * 1000, ($2 + $3) * 1000, $4 }' "$work/time" ;;
	llvm)
		/usr/bin/time -o "$work/time" -f '%e %U %S %M' \
			llvm-symbolizer -a -f -i <"$work/stream" >"$out" 2>/dev/null
		awk '{ printf "%.0f %.0f %d\n", $1 * 1000, ($2 + $3) * 1000, $4 }' "$work/time" ;;
	addr2line)
		# a process per DSO, one after another: wall of them all, CPU
		# summed, RSS the largest
		local t0 t1 i p
		: >"$work/a2l.times"
		t0=$(date +%s%N)
		while read -r i p; do
			/usr/bin/time -a -o "$work/a2l.times" -f '%U %S %M' \
				addr2line -a -f -i -e "$p" <"$work/a2l.$i" >"$work/out.a2l.$i" 2>/dev/null || true
		done <"$work/dsos"
		t1=$(date +%s%N)
		awk -v w=$(((t1 - t0) / 1000000)) '{ c += $1 + $2; if ($3 > m) m = $3 }
			END { printf "%d %.0f %d\n", w, c * 1000, m }' "$work/a2l.times" ;;
	esac >>"$work/t.$t"
}

tools=(dsostore llvm addr2line)
for t in "${tools[@]}"; do one "$t"; done # warm-up: page cache
rm -f "$work"/t.*
for ((r = 0; r < runs; r++)); do
	for ((k = 0; k < ${#tools[@]}; k++)); do
		one "${tools[(r + k) % ${#tools[@]}]}"
	done
done

# Address by address against addr2line's answers (GNU style is
# addr2line's: a stripped library's address past its .dynsym symbol is
# named after it, as addr2line names it; llvm-symbolizer says ??).
differ=$(python3 - "$work" "$nlines" <<'PY'
import re, sys

work, n = sys.argv[1], int(sys.argv[2])

def pos(p):
    """file:line as (file, line), an unknown part as '?' (spelled ??:0,
    ??:?); a discriminator left out."""
    p = re.sub(r' \(discriminator \d+\)$', '', p)
    m = re.match(r'^(.*?):(\d+|\?)$', p)
    f, l = (m.group(1), m.group(2)) if m else (p, '?')
    return (f if f not in ('??', '') else '?', l if l not in ('0', '?') else '?')

def answers(path):
    out = []
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        if line.startswith('0x'):
            out.append((int(line, 16), []))
        elif line and out:
            # names and places alternate
            out[-1][1].append(pos(line) if len(out[-1][1]) % 2 else line)
    return out

want = {}
for line in open(work + '/dsos'):
    i, p = line.split(None, 1)
    for a, fr in answers('%s/out.a2l.%s' % (work, i)):
        want[(p.strip(), a)] = fr
ours = answers(work + '/out.dsostore')
asked = [(l.split()[0], int(l.split()[1], 16)) for l in open(work + '/stream')]
if len(ours) != n or len(want) < len(set(asked)):
    print('? (answers: dsostore %d of %d, addr2line %d)' % (len(ours), n, len(want)))
else:
    print(sum(1 for k, (a, fr) in zip(asked, ours) if a != k[1] or want.get(k) != fr))
PY
)

load=$(cut -d' ' -f1 /proc/loadavg)
printf '%s\n' "many DSOs: $ndso DSOs x $naddr addresses, one stream of $nlines lines; $runs run(s), medians; load $load"
printf '%-34s %9s %9s %9s %9s %9s\n' tool wall_ms cpu_ms rss_MB "cpu/ours" "rss/ours"
dc=$(median_of "$work/t.dsostore" 2) dr=$(median_of "$work/t.dsostore" 3)
for t in "${tools[@]}"; do
	w=$(median_of "$work/t.$t" 1) c=$(median_of "$work/t.$t" 2) m=$(median_of "$work/t.$t" 3)
	case $t in
	dsostore) name="dsostore symbolize -a -f -i" ;;
	llvm) name="llvm-symbolizer -a -f -i ($(llvm-symbolizer --version | awk '/version/ { print $NF; exit }'))" ;;
	addr2line) name="addr2line -a -f -i, a process per DSO" ;;
	esac
	awk -v n="$name" -v w="$w" -v c="$c" -v m="$m" -v dc="$dc" -v dr="$dr" 'BEGIN {
		printf "%-34s %9.0f %9.0f %9.1f %8.2fx %8.2fx\n", n, w, c, m / 1024, c / dc, m / dr }'
done
echo "addresses answered otherwise than addr2line: $differ of $nlines (names and file:line of every frame)"
cpu_ratio=$(awk -v a="$(median_of "$work/t.llvm" 2)" -v b="$dc" 'BEGIN { printf "%.2f", a / b }')
a2l_rss=$(median_of "$work/t.addr2line" 3)
echo "BENCH manydso.cpu value=$dc unit=ms ratio=${cpu_ratio}x goal_min=3 met=$(awk -v r="$cpu_ratio" 'BEGIN { print (r >= 3 ? "yes" : "no") }')"
echo "BENCH manydso.rss value=$dr unit=KB ratio=$(awk -v a="$dr" -v b="$a2l_rss" 'BEGIN { printf "%.2f", a / b }')x goal_max=$a2l_rss met=$(awk -v a="$dr" -v b="$a2l_rss" 'BEGIN { print (a <= b ? "yes" : "no") }')"
