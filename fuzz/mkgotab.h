/* SPDX-License-Identifier: MIT */
/*
 * Hand-built Go symbol tables (.gopclntab) for the tests and the fuzz
 * corpus: Go 1.19 builds only its own layout, so the 1.2, 1.16 and 1.20
 * layouts, big-endian and 32-bit tables are written here from the
 * description of the format (lib/symbolize/gopclntab.c's header comment, Go's
 * runtime/symtab.go and debug/gosym), with every answer known in advance.
 * Header-only, for tests/unit/test_gopclntab.c and fuzz/mkgotab.c.
 *
 * The "program" (text at MKGO_TEXT, quantum-aligned pcs):
 *   main.outer    [0x00, 0x40)  a.go; inlines main.mid at a.go:11, which
 *                               inlines main.leaf at b.go:21
 *       [0x00,0x08) a.go:10   [0x08,0x10) a.go:11 (mid's call site)
 *       [0x10,0x14) b.go:21 in mid (leaf's call site)
 *       [0x14,0x18) b.go:20 in mid   [0x18,0x20) b.go:30 in leaf
 *       [0x20,0x40) a.go:12
 *   main.(*T).M   [0x40, 0x60)  b.go:40
 *   main.Map[...] [0x60, 0x80)  c.go:50, in a CU of its own (>= 1.16)
 * The image is one segment at MKGO_VADDR: the inline tree first (where
 * go.func.* is, >= 1.18), then the table.
 */
#ifndef DS_MKGOTAB_H
#define DS_MKGOTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MKGO_VADDR 0x10000u
#define MKGO_TEXT 0x401000u
#define MKGO_MAX 4096

struct mkgo_variant {
	const char *name;
	int ver; /* 12, 116, 118, 120 */
	bool be;
	unsigned ptrsize, quantum;
};

static const struct mkgo_variant mkgo_variants[] = {
	{ "go12-le64", 12, false, 8, 1 },   { "go12-be32", 12, true, 4, 4 },
	{ "go116-le64", 116, false, 8, 1 }, { "go116-be64", 116, true, 8, 4 },
	{ "go118-le64", 118, false, 8, 1 }, { "go118-le32", 118, false, 4, 1 },
	{ "go118-be64", 118, true, 8, 2 },  { "go120-le64", 120, false, 8, 1 },
	{ "go120-be32", 120, true, 4, 4 },  { "go120-le32q2", 120, false, 4, 2 },
};

struct mkgo_buf {
	unsigned char *p;
	size_t len, cap;
	bool be, bad;
};

static void mkgo_put(struct mkgo_buf *b, size_t at, uint64_t v, unsigned n)
{
	if (at + n > b->cap) {
		b->bad = true;
		return;
	}
	for (unsigned i = 0; i < n; i++)
		b->p[at + i] = (unsigned char)(v >> (8 * (b->be ? n - 1 - i : i)));
	if (at + n > b->len)
		b->len = at + n;
}

static size_t mkgo_add(struct mkgo_buf *b, uint64_t v, unsigned n)
{
	size_t at = b->len;

	mkgo_put(b, at, v, n);
	return at;
}

static void mkgo_align(struct mkgo_buf *b, size_t a)
{
	while (b->len % a && b->len < b->cap)
		b->p[b->len++] = 0;
}

static size_t mkgo_str(struct mkgo_buf *b, const char *s)
{
	size_t at = b->len, n = strlen(s) + 1;

	if (at + n > b->cap) {
		b->bad = true;
		return at;
	}
	memcpy(b->p + at, s, n);
	b->len += n;
	return at;
}

static void mkgo_uvarint(struct mkgo_buf *b, uint32_t v)
{
	do {
		unsigned char c = v & 0x7f;

		v >>= 7;
		if (v)
			c |= 0x80;
		mkgo_add(b, c, 1);
	} while (v);
}

/* A pc-value table of n (value, pc bytes) steps, from value -1. */
static size_t mkgo_pcvalue(struct mkgo_buf *b, size_t base, const int32_t *val,
			   const uint32_t *len, size_t n, unsigned quantum)
{
	size_t at = b->len - base;
	int32_t prev = -1;

	/* A step per change of value: a zero value delta ends the table. */
	for (size_t i = 0; i < n; i++) {
		int32_t d = val[i] - prev;
		uint32_t bytes = len[i];

		while (i + 1 < n && val[i + 1] == val[i])
			bytes += len[++i];
		mkgo_uvarint(b, d < 0 ? ((uint32_t)~d << 1) | 1 : (uint32_t)d << 1);
		mkgo_uvarint(b, bytes / quantum);
		prev = val[i];
	}
	mkgo_add(b, 0, 1);
	return at;
}

/* The variant's image into buf (MKGO_MAX bytes); its size, 0 on
 * overflow.  *tab_off: where the table starts, *gofunc: go.func.*. */
static size_t mkgo_write(const struct mkgo_variant *v, unsigned char *buf, size_t *tab_off,
			 uint64_t *gofunc)
{
	struct mkgo_buf b = { buf, 0, MKGO_MAX, v->be, false };
	const unsigned ps = v->ptrsize, q = v->quantum;
	const bool new_entries = v->ver >= 118, cu = v->ver >= 116;
	const unsigned fs = new_entries ? 4 : ps; /* functab field */
	const char *names[3] = { "main.outer", "main.(*T).M", "main.Map[...]" };
	const char *files[3] = { "/src/a.go", "/src/b.go", "/src/c.go" };
	const uint32_t entry[4] = { 0x00, 0x40, 0x60, 0x80 };
	/* File numbers as pc-file values: global (1.2: 1..3) or by CU. */
	const int32_t fa = cu ? 0 : 1, fb = cu ? 1 : 2, fc = cu ? 0 : 3;
	size_t tree, tab, funcnames = 0, cutab = 0, filetab = 0, pctab = 0, funcs = 0, functab = 0;
	size_t hdr_words = 0, nameoff[3], fileoff[3], funcoff[3], pcfile[3], pcln[3], inl;
	size_t inl_nameoff[2];

	memset(buf, 0, MKGO_MAX);
	/* The inline tree (go.func.*): mid (0), leaf (1).  Names and files
	 * are filled once their offsets are known. */
	tree = b.len;
	b.len += v->ver == 120 ? 32 : 40;
	mkgo_align(&b, 8);
	tab = b.len;
	*tab_off = tab;
	*gofunc = MKGO_VADDR + tree;
	mkgo_add(&b, v->ver == 12 ? 0xfffffffb : v->ver == 116 ? 0xfffffffa
						 : v->ver == 118 ? 0xfffffff0
								 : 0xfffffff1,
		 4);
	mkgo_add(&b, 0, 2);
	mkgo_add(&b, q, 1);
	mkgo_add(&b, ps, 1);
	if (v->ver == 12) {
		mkgo_add(&b, 3, ps);
		functab = b.len;
		b.len += (2 * 3 + 1) * ps + 4; /* functab, then the file table's offset */
		mkgo_align(&b, 8);
	} else {
		hdr_words = b.len;
		b.len += (new_entries ? 8 : 7) * ps;
		funcnames = b.len;
	}
	for (int i = 0; i < 3; i++)
		nameoff[i] = mkgo_str(&b, names[i]) - (v->ver == 12 ? tab : funcnames);
	inl_nameoff[0] = mkgo_str(&b, "main.mid") - (v->ver == 12 ? tab : funcnames);
	inl_nameoff[1] = mkgo_str(&b, "main.leaf") - (v->ver == 12 ? tab : funcnames);
	if (cu) {
		mkgo_align(&b, 4);
		cutab = b.len;
		b.len += 4 * 4; /* CU 0: a, b, c; CU 1 (at 3): c */
		filetab = b.len;
		for (int i = 0; i < 3; i++)
			fileoff[i] = mkgo_str(&b, files[i]) - filetab;
		mkgo_put(&b, cutab, fileoff[0], 4);
		mkgo_put(&b, cutab + 4, fileoff[1], 4);
		mkgo_put(&b, cutab + 8, fileoff[2], 4);
		mkgo_put(&b, cutab + 12, fileoff[2], 4);
		pctab = b.len;
		mkgo_add(&b, 0, 1); /* offset 0 is "no table" */
	} else {
		for (int i = 0; i < 3; i++)
			fileoff[i] = mkgo_str(&b, files[i]) - tab;
		pctab = tab;
	}
	/* pc-value tables */
	{
		static const uint32_t l0[] = { 0x08, 0x08, 0x04, 0x04, 0x08, 0x20 };
		const int32_t f0[] = { fa, fa, fb, fb, fb, fa };
		static const int32_t n0[] = { 10, 11, 21, 20, 30, 12 };
		static const int32_t i0[] = { -1, -1, 0, 0, 1, -1 };
		static const uint32_t l1[] = { 0x20 };
		const int32_t f1[] = { fb }, f2[] = { fc };
		static const int32_t n1[] = { 40 }, n2[] = { 50 };

		pcfile[0] = mkgo_pcvalue(&b, pctab, f0, l0, 6, q);
		pcln[0] = mkgo_pcvalue(&b, pctab, n0, l0, 6, q);
		inl = mkgo_pcvalue(&b, pctab, i0, l0, 6, q);
		pcfile[1] = mkgo_pcvalue(&b, pctab, f1, l1, 1, q);
		pcln[1] = mkgo_pcvalue(&b, pctab, n1, l1, 1, q);
		pcfile[2] = mkgo_pcvalue(&b, pctab, f2, l1, 1, q);
		pcln[2] = mkgo_pcvalue(&b, pctab, n2, l1, 1, q);
	}
	if (v->ver == 12) {
		mkgo_align(&b, 4);
		mkgo_put(&b, functab + (2 * 3 + 1) * ps, b.len - tab, 4);
		mkgo_add(&b, 4, 4); /* entries, 0 unused */
		for (int i = 0; i < 3; i++)
			mkgo_add(&b, fileoff[i], 4);
	}
	mkgo_align(&b, 8);
	if (v->ver != 12) {
		funcs = b.len;
		functab = b.len;
		b.len += (2 * 3 + 1) * fs;
		mkgo_align(&b, 8);
	} else {
		funcs = tab;
	}
	for (int i = 0; i < 3; i++) {
		size_t at, sz0 = new_entries ? 4 : ps;

		mkgo_align(&b, 8);
		at = b.len;
		funcoff[i] = at - funcs;
		mkgo_add(&b, new_entries ? entry[i] : MKGO_TEXT + entry[i], (unsigned)sz0);
		mkgo_add(&b, nameoff[i], 4);
		mkgo_add(&b, 0, 4); /* args */
		mkgo_add(&b, 0, 4); /* deferreturn */
		mkgo_add(&b, 0, 4); /* pcsp */
		mkgo_add(&b, pcfile[i], 4);
		mkgo_add(&b, pcln[i], 4);
		mkgo_add(&b, 3, 4); /* npcdata */
		if (cu)
			mkgo_add(&b, i == 2 ? 3 : 0, 4); /* cuOffset */
		if (v->ver == 120)
			mkgo_add(&b, 0, 4); /* startLine */
		mkgo_add(&b, 0, 3); /* funcID, flag, pad */
		mkgo_add(&b, i == 0 ? 4 : 0, 1); /* nfuncdata */
		mkgo_add(&b, 0, 4); /* pcdata: stack maps, */
		mkgo_add(&b, 0, 4);
		mkgo_add(&b, i == 0 ? inl : 0, 4); /* the inline index */
		if (i != 0)
			continue;
		if (new_entries) {
			for (int k = 0; k < 3; k++)
				mkgo_add(&b, 0xffffffffu, 4);
			mkgo_add(&b, 0, 4); /* the tree: go.func.* + 0 */
		} else {
			/* Pointers, aligned in memory. */
			if (ps == 8 && ((MKGO_VADDR + b.len) & 4))
				mkgo_add(&b, 0, 4);
			for (int k = 0; k < 3; k++)
				mkgo_add(&b, 0, ps);
			mkgo_add(&b, MKGO_VADDR + tree, ps);
		}
	}
	/* The functab and header, now that offsets are known. */
	for (int i = 0; i < 4; i++) {
		uint64_t pc = new_entries ? entry[i] : MKGO_TEXT + entry[i];

		mkgo_put(&b, functab + 2 * (size_t)i * fs, pc, fs);
		if (i < 3)
			mkgo_put(&b, functab + (2 * (size_t)i + 1) * fs, funcoff[i], fs);
	}
	if (v->ver != 12) {
		size_t w = hdr_words;
		uint64_t vals[8];
		unsigned n = 0;

		vals[n++] = 3;
		vals[n++] = 4;
		if (new_entries)
			vals[n++] = MKGO_TEXT;
		vals[n++] = funcnames - tab;
		vals[n++] = cutab - tab;
		vals[n++] = filetab - tab;
		vals[n++] = pctab - tab;
		vals[n++] = funcs - tab;
		for (unsigned k = 0; k < n; k++)
			mkgo_put(&b, w + k * ps, vals[k], ps);
	}
	/* The inline tree: mid called from a.go:11 (pc 0x08), leaf from
	 * b.go:21 (pc 0x10) inside mid. */
	if (v->ver == 120) {
		mkgo_put(&b, tree + 4, inl_nameoff[0], 4);
		mkgo_put(&b, tree + 8, 0x08, 4);
		mkgo_put(&b, tree + 12, 1, 4);
		mkgo_put(&b, tree + 16 + 4, inl_nameoff[1], 4);
		mkgo_put(&b, tree + 16 + 8, 0x10, 4);
		mkgo_put(&b, tree + 16 + 12, 1, 4);
	} else {
		mkgo_put(&b, tree, 0xffff, 2);
		mkgo_put(&b, tree + 4, (uint32_t)fa, 4);
		mkgo_put(&b, tree + 8, 11, 4);
		mkgo_put(&b, tree + 12, inl_nameoff[0], 4);
		mkgo_put(&b, tree + 16, 0x08, 4);
		mkgo_put(&b, tree + 20, 0, 2);
		mkgo_put(&b, tree + 24, (uint32_t)fb, 4);
		mkgo_put(&b, tree + 28, 21, 4);
		mkgo_put(&b, tree + 32, inl_nameoff[1], 4);
		mkgo_put(&b, tree + 36, 0x10, 4);
	}
	return b.bad ? 0 : b.len;
}

#endif
