// SPDX-License-Identifier: MIT
/* lib_burn, in a shared library of its own (see fg.c). */
__attribute__((noinline, noclone)) void lib_tick(void)
{
	__asm__ volatile("");
}

__attribute__((noinline, noclone)) unsigned long lib_burn(unsigned long n, unsigned long x)
{
	lib_tick();
	for (unsigned long i = 0; i < n; i++) {
		x = x * 2862933555777941757UL + 3037000493UL;
		__asm__ volatile("" : "+r"(x));
	}
	return x ^ n;
}
