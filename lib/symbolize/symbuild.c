/* SPDX-License-Identifier: MIT */
/* What a reader (dwarf.c, gopclntab.c, symtab.c) fills while it builds a
 * piece of the symbol index: the string pool with its interning table, and
 * resetting or releasing it between pieces.  symindex.c orders and packs
 * what was filled; the readers need only this. */
#define _GNU_SOURCE
#include "symindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- strings */

/* s's len bytes eight at a time (a byte at a time was a twentieth of an
 * index build).  Only the interning table's probe order depends on it:
 * offsets are given in the order strings come, and the table is never
 * saved. */
static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ h >> 29;
}

static int intern_grow(struct sym_build *B)
{
	size_t cap = B->intern_cap ? 2 * B->intern_cap : 1024;
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < B->intern_cap; i++) {
		uint32_t off = B->intern[i];
		size_t j;

		if (!off)
			continue;
		j = str_hash(B->pool + off, strlen(B->pool + off)) & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = off;
	}
	free(B->intern);
	B->intern = t;
	B->intern_cap = cap;
	return 0;
}

/* The pool offset of s (0 for NULL or on allocation failure). */
uint32_t ds__symbols_intern(struct sym_build *B, const char *s)
{
	size_t len, j;

	if (!s)
		return 0;
	if (2 * (B->intern_used + 1) > B->intern_cap && intern_grow(B))
		return 0;
	len = strlen(s) + 1;
	j = str_hash(s, len - 1) & (B->intern_cap - 1);
	for (; B->intern[j]; j = (j + 1) & (B->intern_cap - 1))
		if (!strcmp(B->pool + B->intern[j], s))
			return B->intern[j];
	if (B->pool_len + len + 1 > UINT32_MAX)
		return 0;
	if (B->pool_len + len + 1 > B->pool_cap) {
		size_t cap = (B->pool_len + len + 1) * 2;
		char *p = realloc(B->pool, cap);

		if (!p)
			return 0;
		B->pool = p;
		B->pool_cap = cap;
	}
	if (!B->pool_len)
		B->pool[B->pool_len++] = 0; /* offset 0 means "none" */
	memcpy(B->pool + B->pool_len, s, len);
	B->intern[j] = (uint32_t)B->pool_len;
	B->intern_used++;
	B->pool_len += len;
	return B->intern[j];
}

#define INTERN_HITS 1024 /* entries of sym_build's hits */

uint32_t ds__symbols_intern_stable(struct sym_build *B, const char *s)
{
	struct intern_hit *e;
	uint32_t off;

	if (!s)
		return 0;
	if (!B->hits) {
		B->hits = calloc(INTERN_HITS, sizeof(*B->hits));
		B->hits_gen = 1;
		if (!B->hits)
			return ds__symbols_intern(B, s);
	}
	e = &B->hits[((uintptr_t)s >> 3 ^ (uintptr_t)s >> 13) & (INTERN_HITS - 1)];
	if (e->s == s && e->gen == B->hits_gen)
		return e->off;
	off = ds__symbols_intern(B, s);
	if (off)
		*e = (struct intern_hit){ .s = s, .off = off, .gen = B->hits_gen };
	return off;
}

void ds__sym_build_reset(struct sym_build *B)
{
	/* (A new generation empties the hits; the rare wrap clears them.) */
	if (B->hits && ++B->hits_gen == 0) {
		memset(B->hits, 0, INTERN_HITS * sizeof(*B->hits));
		B->hits_gen = 1;
	}
	B->nscopes = B->nlines = B->nsyms = B->nsecs = B->pool_len = 0;
	if (B->intern_used)
		memset(B->intern, 0, B->intern_cap * sizeof(*B->intern));
	B->intern_used = 0;
	B->partial = false;
}

void ds__sym_build_release(struct sym_build *B)
{
	free(B->scopes);
	free(B->lines);
	free(B->syms);
	free(B->segs);
	free(B->secs);
	free(B->pool);
	free(B->intern);
	free(B->hits);
	memset(B, 0, sizeof(*B));
}

