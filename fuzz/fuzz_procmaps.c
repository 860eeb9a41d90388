/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the live-process normalizer's two text readers
 * (lib/live/normalize.c):
 * /proc/PID/maps lines and JIT perf maps (/tmp/perf-PID.map), both
 * untrusted text (a perf map is written by whatever process it names).
 *
 * Each input goes through both parsers; what they accept must hold their
 * contracts: every VMA has start < end and its name inside the input;
 * perf map symbols sorted by start, sizes non-zero and not wrapping, one
 * per start, lookups landing on a symbol that holds the address.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include "live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

static unsigned long vmas, bad_lines, syms;
static const char *in_lo, *in_hi;

void fuzz_summary(void)
{
	fprintf(stderr, "fuzz_procmaps: %lu VMAs, %lu malformed lines, %lu perf map symbols\n",
		vmas, bad_lines, syms);
}

static int on_vma(void *arg, const struct ds__vma *v)
{
	(void)arg;
	if (v->start >= v->end || v->name < in_lo || v->name + v->name_len > in_hi)
		abort();
	vmas++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly its size: a read past it is ASan's. */
	char *buf = malloc(size ? size : 1);
	struct ds__perfmap pm;
	size_t bad = 0;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	in_lo = buf;
	in_hi = buf + size;
	if (ds__procmaps_parse(buf, size, on_vma, NULL, &bad) < 0)
		abort();
	bad_lines += bad;
	if (ds__perfmap_parse(buf, size, &pm, NULL) == 0) {
		for (size_t i = 0; i < pm.n; i++) {
			const struct ds__perfmap_sym *s = &pm.syms[i], *f;

			if (!s->size || s->start + s->size < s->start ||
			    (i && pm.syms[i - 1].start >= s->start))
				abort();
			/* (Overlapping entries: another one that holds it
			 * may answer, or none past the bounded look-back.) */
			f = ds__perfmap_find(&pm, s->start + s->size / 2);
			if (f && (f->start > s->start + s->size / 2 ||
				  s->start + s->size / 2 - f->start >= f->size))
				abort();
			if (i + 1 == pm.n && f != s && s->start + s->size / 2 >= s->start &&
			    !f)
				abort(); /* the last one has nothing after it */
			(void)strlen(s->name);
		}
		syms += pm.n;
		if (ds__perfmap_find(&pm, 0) && ds__perfmap_find(&pm, 0)->start)
			abort();
		ds__perfmap_release(&pm);
	}
	free(buf);
	return 0;
}
