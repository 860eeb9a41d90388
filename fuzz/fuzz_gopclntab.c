/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for Go's .gopclntab reader (lib/symbolize/gopclntab.c).  An input is
 * a memory image of a Go binary's read-only segment:
 *
 *   bytes 0..7    its address (little-endian)
 *   bytes 8..15   go.func.*'s address (0: unknown)
 *   bytes 16..19  where the table starts in the image
 *   bytes 20..23  split: when not 0 and at most the table's start, the
 *                 image's first split bytes are go.func.*'s region
 *                 apart (fn_mem, at go.func.*'s address; Go's PIE
 *                 layout), and the image the rest (0 before this field
 *                 was, so the older seeds mean what they meant)
 *   the rest      the image (a heap block of exactly its size)
 *
 * Shorter inputs are a table alone at 0x10000.  The image goes to
 * ds__go_open_image(); on success every unit is built and every scope and
 * line row checked: inside the units' ranges, names and files inside the
 * pool and NUL-terminated, parents in range and holding the child's
 * start.  Then the functions as symbols (ds__go_symbols()), without
 * sections and with one holding half of the code: sorted, disjoint, each
 * inside the units' ranges (and its section) and named.  It must not crash, leak or hang; a refusal is -ENODATA, -E2BIG
 * or -ENOMEM.
 *
 * Seeds: fuzz/gen_gopclntab_corpus.sh (mkgotab.h's layouts, and the
 * segment of a real Go binary when go is installed).  Built with
 * -fsanitize=fuzzer by scripts/fuzz, and linked with fuzz/replay.c for
 * make check.
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

static struct {
	unsigned long inputs, opened, units, scopes, rows, symbols;
} stats;

void fuzz_summary(void)
{
	fprintf(stderr,
		"fuzz_gopclntab: %lu inputs, %lu tables, %lu units, %lu scopes, %lu rows, "
		"%lu symbols\n",
		stats.inputs, stats.opened, stats.units, stats.scopes, stats.rows, stats.symbols);
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static bool pool_str_ok(const struct sym_build *B, uint32_t off)
{
	return !off || (off < B->pool_len && memchr(B->pool + off, 0, B->pool_len - off));
}

static void check_unit(const struct sym_build *B, const struct ds__cu_range *r)
{
	for (size_t i = 0; i < B->nscopes; i++) {
		const struct scope *s = &B->scopes[i];

		if (s->lo >= s->hi || (r && (s->lo < r->lo || s->hi > r->hi)) ||
		    !pool_str_ok(B, s->name) || !pool_str_ok(B, s->call_file) ||
		    (s->parent != NO_PARENT &&
		     (s->parent >= B->nscopes || B->scopes[s->parent].lo > s->lo ||
		      B->scopes[s->parent].hi < s->hi)))
			abort();
	}
	for (size_t i = 0; i < B->nlines; i++) {
		const struct line *l = &B->lines[i];

		if (!pool_str_ok(B, l->file) || (r && (l->addr < r->lo || l->addr > r->hi)) ||
		    (i && l->addr < B->lines[i - 1].addr))
			abort();
	}
}

/* G's functions as symbols of B (holding secs sections first). */
static void check_symbols(const struct ds__go *G, const struct ds__cu_range *r, size_t nr,
			  struct sym_build *B, size_t secs)
{
	int n = ds__go_symbols(G, B);
	size_t first = 0;

	if (n < 0) {
		if (n != -ENOMEM)
			abort();
		return;
	}
	if ((size_t)n != B->nsyms || (!secs && n && B->nsecs != 1) || (secs && B->nsecs != secs))
		abort();
	for (size_t i = 0; i < B->nsyms; i++) {
		const struct symbol *y = &B->syms[i];
		bool inside = false;

		if (!y->size || y->lo + y->size < y->lo || !y->name || !pool_str_ok(B, y->name) ||
		    (i && B->syms[i - 1].lo + B->syms[i - 1].size > y->lo))
			abort();
		while (first < nr && r[first].hi <= y->lo)
			first++;
		for (size_t k = first; k < nr && r[k].lo <= y->lo && !inside; k++)
			inside = y->lo + y->size <= r[k].hi;
		if (!inside || (B->nsecs && (y->lo < B->secs[0].lo || y->lo >= B->secs[0].hi)))
			abort();
	}
	stats.symbols += B->nsyms;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ds__go_image im = { 0 };
	struct ds__go *G = NULL;
	struct ds__cu_range *ranges = NULL;
	struct sym_build B = { 0 };
	unsigned char *mem, *fn = NULL;
	size_t nranges = 0, split = 0;
	int err;

	stats.inputs++;
	if (size >= 24) {
		im.vaddr = le(data, 8);
		im.gofunc = le(data + 8, 8);
		im.tab_off = (size_t)le(data + 16, 4);
		split = (size_t)le(data + 20, 4);
		data += 24;
		size -= 24;
	} else {
		im.vaddr = 0x10000;
	}
	if (split && split <= im.tab_off && split <= size) {
		/* (each region a heap block of exactly its size) */
		if (!(fn = malloc(split)))
			return 0;
		memcpy(fn, data, split);
		im.fn_mem = fn;
		im.fn_size = split;
		im.fn_vaddr = im.gofunc;
		im.vaddr += split;
		im.tab_off -= split;
		data += split;
		size -= split;
	}
	mem = malloc(size ? size : 1);
	if (!mem) {
		free(fn);
		return 0;
	}
	if (size)
		memcpy(mem, data, size);
	im.mem = mem;
	im.size = size;
	err = ds__go_open_image(&im, &G);
	if (err && err != -ENODATA && err != -E2BIG && err != -ENOMEM)
		abort();
	/* The reader copied what it needs: the input may go. */
	memset(mem, 0xa5, size);
	free(mem);
	if (fn) {
		memset(fn, 0xa5, split);
		free(fn);
	}
	if (err)
		return 0;
	stats.opened++;
	if (ds__go_ranges(G, &ranges, &nranges) == 0) {
		for (size_t i = 1; i < nranges; i++)
			if (ranges[i].lo < ranges[i - 1].lo || ranges[i].cu >= ds__go_units(G))
				abort();
		for (size_t k = 0; k < nranges; k++) {
			if (ds__go_build_unit(G, ranges[k].cu, &B))
				continue;
			check_unit(&B, &ranges[k]);
			stats.units++;
			stats.scopes += B.nscopes;
			stats.rows += B.nlines;
		}
		ds__sym_build_reset(&B);
		check_symbols(G, ranges, nranges, &B, 0);
		/* A section over the first half of the code: the functions of
		 * the other half are left out. */
		ds__sym_build_reset(&B);
		if (nranges && !GROW(&B, secs, nsecs, seccap)) {
			uint64_t lo = ranges[0].lo, hi = ranges[nranges - 1].hi;

			B.secs[B.nsecs++] = (struct section){ lo, lo + (hi - lo) / 2 + 1, 7, 0 };
			check_symbols(G, ranges, nranges, &B, 1);
		}
	}
	/* A unit past the end builds nothing. */
	if (ds__go_build_unit(G, ds__go_units(G), &B) || B.nscopes || B.nlines)
		abort();
	free(ranges);
	ds__sym_build_release(&B);
	ds__go_close(G);
	return 0;
}
