# SPDX-License-Identifier: MIT
# The seed scenario's workload (issue 25), for tests/cli/prefetch_perf612.sh
# and bench/bench_seed612.sh; run, not sourced:
#
#	bash tests/gen/seedwork.bash NLIB DIR
#
# writes into DIR: bin/w, a program, and bin/libl0.so ... libl<NLIB-1>.so,
# the libraries it is linked with (rpath DIR/bin), all -O1 -g, then
# stripped of every symbol (strip --strip-all); srv/NAME.debug, the
# debuginfo split off each (objcopy --only-keep-debug), for a debuginfod
# server to serve.  Each DSO's own code is one static function, spin (a
# library exports only a pointer to it, l<K>_ops, as data: so no symbol
# the stripped file keeps names code), and the program runs each spin in
# turn for 40 ms of the process's CPU clock: at least one cpu-clock sample
# in each DSO (a floor, whatever the load: 40 ms at perf's default 4000
# Hz), every one of them in code only the debuginfo names.  The program
# also has run() and cpu() (named in its debuginfo too).  Exit status 0,
# or 1 with the compiler's words on stderr.
set -u
nlib=$1 dir=$2
mkdir -p "$dir/bin" "$dir/srv" "$dir/src" || exit 1
cd "$dir/src" || exit 1
for ((k = 0; k < nlib; k++)); do
	cat >"l$k.c" <<EOF
__attribute__((noinline)) static unsigned long spin(unsigned long x)
{
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005UL + $((2 * k + 1))UL;
	return x;
}
unsigned long (*const l${k}_ops)(unsigned long) = spin;
EOF
done
{
	echo '#include <stdio.h>'
	echo '#include <time.h>'
	for ((k = 0; k < nlib; k++)); do
		echo "extern unsigned long (*const l${k}_ops)(unsigned long);"
	done
	cat <<'EOF'
__attribute__((noinline)) static unsigned long spin(unsigned long x)
{
	for (int i = 0; i < 2000; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

static double cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* 40 ms of this process's CPU in f: at least one cpu-clock sample there
 * however loaded the machine is. */
static unsigned long run(unsigned long (*f)(unsigned long), unsigned long h)
{
	double end = cpu() + 0.04;

	while (cpu() < end)
		h = f(h);
	return h;
}

int main(void)
{
	unsigned long h = run(spin, 1);
EOF
	for ((k = 0; k < nlib; k++)); do
		echo "	h = run(l${k}_ops, h);"
	done
	echo '	printf("%lx\n", h);'
	echo '	return 0;'
	echo '}'
} >w.c
libs=()
for ((k = 0; k < nlib; k++)); do
	gcc -O1 -g -fPIC -shared -o "../bin/libl$k.so" "l$k.c" || exit 1
	libs+=("libl$k.so")
done
gcc -O1 -g -o ../bin/w w.c -L../bin $(for ((k = 0; k < nlib; k++)); do printf -- '-ll%d ' $k; done) \
	-Wl,-rpath,"$(cd ../bin && pwd)" || exit 1
for f in w "${libs[@]}"; do
	objcopy --only-keep-debug "../bin/$f" "../srv/$f.debug" && strip --strip-all "../bin/$f" || exit 1
done
