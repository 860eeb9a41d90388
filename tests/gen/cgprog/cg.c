/* SPDX-License-Identifier: MIT */
/* The program of tests/cli/report_callgraph.sh (frame pointers: -DCG_FRAME)
 * and tests/cli/report_dwarf.sh (--call-graph dwarf): known call paths into
 * hot() (three callers, a recursion, a call back from a library), and a
 * loop of the library's own.  Each test builds its library (lib_step,
 * lib_burn) itself. */
#include <stdio.h>
/* CG_FRAME: hot() keeps a frame even with -fno-omit-frame-pointer (gcc
 * omits a leaf's, and its caller then drops out of every frame-pointer
 * chain through it); without it the code has none to lean on, for
 * --call-graph dwarf.  CG_ITERS: rounds of main's loop. */
#ifdef CG_FRAME
#define FRAME __asm__ volatile("" ::"r"(__builtin_frame_address(0)))
#else
#define FRAME
#endif
#ifndef CG_ITERS
#define CG_ITERS 3000
#endif
#define KEEP(x) __asm__ volatile("" : "+r"(x))
unsigned long lib_step(unsigned long n, unsigned long x,
		       unsigned long (*fn)(unsigned long, unsigned long));
unsigned long lib_burn(unsigned long n, unsigned long x);

__attribute__((noinline)) unsigned long hot(unsigned long n, unsigned long x)
{
	FRAME;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		KEEP(x);
	}
	return x;
}

/* KEEP after the call: no tail calls, every caller keeps its frame. */
__attribute__((noinline)) unsigned long caller_a(unsigned long x) { x = hot(30000, x); KEEP(x); return x + 1; }
__attribute__((noinline)) unsigned long caller_b(unsigned long x) { x = hot(10000, x); KEEP(x); return x + 2; }
__attribute__((noinline)) unsigned long caller_c(unsigned long x) { x = hot(3000, x); KEEP(x); return x + 3; }

__attribute__((noinline)) unsigned long rec(int d, unsigned long x)
{
	if (!d)
		return hot(4000, x);
	x = rec(d - 1, x);
	KEEP(x);
	return x + (unsigned long)d;
}

int main(void)
{
	unsigned long x = 1;

	for (int i = 0; i < CG_ITERS; i++) {
		x = caller_a(x);
		x = caller_b(x);
		x = caller_c(x);
		x = rec(i % 4 + 1, x);
		x = lib_step(8000, x, hot);
		x = lib_burn(6000, x);
	}
	printf("%lx\n", x);
	return 0;
}
