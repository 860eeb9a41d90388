// SPDX-License-Identifier: MIT
/* The program of the flame graph tests (tests/cli/folded.sh,
 * tests/cli/flamegraph_browser.sh), built by build.sh with gcc -O2 -g
 * -fno-omit-frame-pointer.  Call paths and their work (n units each):
 *   main > top_a > mid_b > leaf_spin     3
 *   main > top_a > mid_c > leaf_mix      2 (mix inlined)
 *   main > top_d > leaf_spin             1
 *   main > lib_burn (libfgl.so)          1
 * Work after each call: no tail calls. */
#include <stdio.h>
#include <stdlib.h>

unsigned long lib_burn(unsigned long n, unsigned long x);

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	x ^= x << 13; x ^= x >> 7; x ^= x << 17;
	return x;
}

#define WORK(x) __asm__ volatile("" : "+r"(x))

/* Called by the leaves, so that they are no leaf functions: gcc 12 sets up
 * no frame pointer in a leaf, even with -fno-omit-frame-pointer, and a
 * frame-pointer walk from a sample in one skips its caller. */
__attribute__((noinline, noclone)) void tick(void)
{
	__asm__ volatile("");
}

__attribute__((noinline, noclone)) unsigned long leaf_spin(unsigned long n, unsigned long x)
{
	tick();
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		WORK(x);
	}
	return x ^ n;
}

__attribute__((noinline, noclone)) unsigned long leaf_mix(unsigned long n, unsigned long x)
{
	tick();
	for (unsigned long i = 0; i < n; i++) {
		x = mix(x);
		WORK(x);
	}
	return x ^ n;
}

__attribute__((noinline, noclone)) unsigned long mid_b(unsigned long n, unsigned long x)
{
	x = leaf_spin(n, x);
	WORK(x);
	return x ^ n;
}

__attribute__((noinline, noclone)) unsigned long mid_c(unsigned long n, unsigned long x)
{
	x = leaf_mix(n, x);
	WORK(x);
	return x ^ n;
}

__attribute__((noinline, noclone)) unsigned long top_a(unsigned long n, unsigned long x)
{
	x = mid_b(3 * n, x);
	x = mid_c(2 * n, x);
	WORK(x);
	return x ^ n;
}

__attribute__((noinline, noclone)) unsigned long top_d(unsigned long n, unsigned long x)
{
	x = leaf_spin(n, x);
	WORK(x);
	return x ^ n;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 8000000, x = 1;

	x = top_a(n, x);
	x = top_d(n, x);
	x = lib_burn(n, x);
	printf("%lx\n", x);
	return 0;
}
