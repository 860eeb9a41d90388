/* SPDX-License-Identifier: MIT */
/* Go's .gopclntab reader (lib/symbolize/gopclntab.c) on tables built from first
 * principles by fuzz/mkgotab.h: the Go 1.2, 1.16, 1.18 and 1.20 layouts,
 * both byte orders, 4- and 8-byte pointers, quanta 1, 2 and 4 (Go 1.19,
 * the Go here, writes only its own layout: tests/cli/go.sh checks that one
 * against go tool addr2line on real binaries).  For each variant the
 * frames of chosen addresses (functions, file:line, inlined calls two
 * deep, a CU-relative file) must be the ones mkgotab.h describes; then
 * every truncation of the image and every byte of it set to 0x00, 0x80
 * and 0xff must open and build without a crash or a leak (ASan), with
 * every scope and row inside the table's functions. */
#define _GNU_SOURCE
#include "symindex.h"
#include "testutil.h"
#include "../fuzz/mkgotab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond, ...)                                        \
	do {                                                     \
		if (!(cond)) {                                   \
			fprintf(stderr, "FAIL %s: ", variant);   \
			fprintf(stderr, __VA_ARGS__);            \
			fputc('\n', stderr);                     \
			failures++;                              \
		}                                                \
	} while (0)

static const char *variant;

/* The frames at addr as the index gives them ("name@file:line|..."),
 * from a built unit: the deepest scope holding addr, its parents, the
 * last row at or below addr. */
static void frames(const struct sym_build *B, uint64_t addr, char *out, size_t cap)
{
	const struct scope *sc = NULL;
	const struct line *ln = NULL;
	const char *file;
	unsigned line;
	size_t len = 0;

	out[0] = 0;
	for (size_t i = 0; i < B->nscopes; i++) {
		const struct scope *s = &B->scopes[i];

		if (s->lo <= addr && addr < s->hi && (!sc || s->depth > sc->depth))
			sc = s;
	}
	for (size_t i = 0; i < B->nlines; i++)
		if (B->lines[i].addr <= addr)
			ln = &B->lines[i];
	file = ln && !ln->end ? B->pool + ln->file : "??";
	line = ln && !ln->end ? ln->line : 0;
	for (int depth = 0; sc && depth < 8; depth++) {
		len += (size_t)snprintf(out + len, cap - len, "%s%s@%s:%u", depth ? "|" : "",
					sc->name ? B->pool + sc->name : "??", file, line);
		if (!sc->inlined || sc->parent == NO_PARENT)
			break;
		file = sc->call_file ? B->pool + sc->call_file : "??";
		line = sc->call_line;
		sc = &B->scopes[sc->parent];
	}
}

static void check_answers(const struct mkgo_variant *v)
{
	static const struct {
		uint32_t off;
		const char *want;
	} cases[] = {
		{ 0x00, "main.outer@/src/a.go:10" },
		{ 0x0c, "main.outer@/src/a.go:11" },
		{ 0x11, "main.mid@/src/b.go:21|main.outer@/src/a.go:11" },
		{ 0x15, "main.mid@/src/b.go:20|main.outer@/src/a.go:11" },
		{ 0x1a, "main.leaf@/src/b.go:30|main.mid@/src/b.go:21|main.outer@/src/a.go:11" },
		{ 0x20, "main.outer@/src/a.go:12" },
		{ 0x3f, "main.outer@/src/a.go:12" },
		{ 0x40, "main.(*T).M@/src/b.go:40" },
		{ 0x7f, "main.Map[...]@/src/c.go:50" },
	};
	unsigned char buf[MKGO_MAX];
	size_t tab_off, size;
	uint64_t gofunc;
	struct ds__go *G = NULL;
	struct ds__cu_range *r = NULL;
	struct sym_build B = { 0 };
	size_t nr = 0;
	char got[512];

	size = mkgo_write(v, buf, &tab_off, &gofunc);
	EXPECT(size, "mkgotab overflowed");
	struct ds__go_image im = { .mem = buf, .size = size, .vaddr = MKGO_VADDR, .tab_off = tab_off, .gofunc = gofunc };

	EXPECT(ds__go_open_image(&im, &G) == 0, "not opened");
	if (!G)
		return;
	EXPECT(ds__go_units(G) == 1, "%zu units", ds__go_units(G));
	EXPECT(ds__go_ranges(G, &r, &nr) == 0 && nr == 1 && r[0].lo == MKGO_TEXT &&
		       r[0].hi == MKGO_TEXT + 0x80,
	       "ranges");
	EXPECT(ds__go_build_unit(G, 0, &B) == 0, "build");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		frames(&B, MKGO_TEXT + cases[i].off, got, sizeof(got));
		EXPECT(!strcmp(got, cases[i].want), "0x%x: %s, want %s", cases[i].off, got,
		       cases[i].want);
	}
	/* The functions as symbols: names, entries, sizes (the pc-value
	 * tables' extent), without section headers in a section of their
	 * span; with sections, in the one holding them. */
	ds__sym_build_reset(&B);
	EXPECT(ds__go_symbols(G, &B) == 3 && B.nsecs == 1 && B.secs[0].lo == MKGO_TEXT &&
		       B.secs[0].hi == MKGO_TEXT + 0x80,
	       "symbols: %zu, %zu sections", B.nsyms, B.nsecs);
	for (size_t i = 0; i < B.nsyms && i < 3; i++) {
		static const char *const names[] = { "main.outer", "main.(*T).M", "main.Map[...]" };
		static const uint32_t lo[] = { 0, 0x40, 0x60 }, len[] = { 0x40, 0x20, 0x20 };

		EXPECT(B.syms[i].lo == MKGO_TEXT + lo[i] && B.syms[i].size == len[i] &&
			       !strcmp(B.pool + B.syms[i].name, names[i]) && !B.syms[i].shndx,
		       "symbol %zu: 0x%llx+%llu %s", i, (unsigned long long)B.syms[i].lo,
		       (unsigned long long)B.syms[i].size, B.pool + B.syms[i].name);
	}
	ds__sym_build_reset(&B);
	B.secs[B.nsecs++] = (struct section){ MKGO_TEXT + 0x40, MKGO_TEXT + 0x1000, 5, 0 };
	EXPECT(ds__go_symbols(G, &B) == 2 && B.nsecs == 1 && B.syms[0].lo == MKGO_TEXT + 0x40 &&
		       B.syms[0].shndx == 5,
	       "symbols in a section: %zu", B.nsyms);
	/* Without go.func.* (>= 1.18: the tree is not found), no inline
	 * frames, the rest the same. */
	if (v->ver >= 118) {
		struct ds__go *G2 = NULL;

		im.gofunc = 0;
		EXPECT(ds__go_open_image(&im, &G2) == 0 && ds__go_build_unit(G2, 0, &B) == 0,
		       "without go.func.*");
		frames(&B, MKGO_TEXT + 0x1a, got, sizeof(got));
		EXPECT(!strcmp(got, "main.outer@/src/b.go:30"), "no gofunc: %s", got);
		ds__go_close(G2);
		/* go.func.* in a region of its own (Go's PIE link puts the
		 * table and the trees in two segments): the same chains. */
		struct ds__go_image split = { .mem = buf + tab_off,
					      .size = size - tab_off,
					      .vaddr = MKGO_VADDR + tab_off,
					      .gofunc = gofunc,
					      .fn_mem = buf,
					      .fn_size = tab_off,
					      .fn_vaddr = gofunc };

		G2 = NULL;
		ds__sym_build_reset(&B);
		EXPECT(gofunc == MKGO_VADDR && ds__go_open_image(&split, &G2) == 0 &&
			       ds__go_build_unit(G2, 0, &B) == 0,
		       "go.func.* apart");
		frames(&B, MKGO_TEXT + 0x1a, got, sizeof(got));
		EXPECT(!strcmp(got, cases[4].want), "go.func.* apart: %s", got);
		ds__go_close(G2);
		/* ... and not when the trees' region is too short for them */
		split.fn_size = 8;
		G2 = NULL;
		ds__sym_build_reset(&B);
		EXPECT(ds__go_open_image(&split, &G2) == 0 && ds__go_build_unit(G2, 0, &B) == 0,
		       "go.func.* cut");
		frames(&B, MKGO_TEXT + 0x1a, got, sizeof(got));
		EXPECT(!strcmp(got, "main.outer@/src/b.go:30"), "go.func.* cut: %s", got);
		ds__go_close(G2);
	}
	free(r);
	ds__sym_build_release(&B);
	ds__go_close(G);
}

/* Whatever G makes of a damaged table stays inside its functions. */
static void build_damaged(const unsigned char *img, size_t size, size_t tab_off,
			  uint64_t gofunc, struct sym_build *B)
{
	struct ds__go_image im = { .mem = img, .size = size, .vaddr = MKGO_VADDR, .tab_off = tab_off, .gofunc = gofunc };
	struct ds__go *G = NULL;
	struct ds__cu_range *r = NULL;
	size_t nr = 0;

	if (ds__go_open_image(&im, &G))
		return;
	if (ds__go_ranges(G, &r, &nr) == 0) {
		for (size_t u = 0; u < ds__go_units(G); u++) {
			if (ds__go_build_unit(G, u, B))
				continue;
			for (size_t i = 0; i < B->nscopes; i++) {
				const struct scope *s = &B->scopes[i];

				EXPECT(s->name < B->pool_len || !s->name, "name outside the pool");
				EXPECT(s->parent == NO_PARENT || s->parent < B->nscopes, "parent");
				EXPECT(s->lo < s->hi, "empty scope");
			}
			for (size_t i = 0; i < B->nlines; i++)
				EXPECT(B->lines[i].file < B->pool_len || !B->lines[i].file,
				       "file outside the pool");
		}
	}
	free(r);
	ds__go_close(G);
}

static void check_damage(const struct mkgo_variant *v)
{
	unsigned char buf[MKGO_MAX], *copy;
	size_t tab_off, size;
	uint64_t gofunc;
	struct sym_build B = { 0 };
	static const unsigned char bytes[] = { 0x00, 0x80, 0xff };

	size = mkgo_write(v, buf, &tab_off, &gofunc);
	copy = malloc(size);
	if (!copy)
		return;
	/* Truncations: a heap block of exactly that size each (ASan). */
	for (size_t n = tab_off; n < size; n++) {
		unsigned char *cut = malloc(n ? n : 1);

		if (!cut)
			break;
		memcpy(cut, buf, n);
		build_damaged(cut, n, tab_off, gofunc, &B);
		free(cut);
	}
	for (size_t at = 0; at < size; at++)
		for (size_t k = 0; k < sizeof(bytes); k++) {
			memcpy(copy, buf, size);
			copy[at] = bytes[k];
			build_damaged(copy, size, tab_off, gofunc, &B);
		}
	free(copy);
	ds__sym_build_release(&B);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(mkgo_variants) / sizeof(mkgo_variants[0]); i++) {
		variant = mkgo_variants[i].name;
		check_answers(&mkgo_variants[i]);
		check_damage(&mkgo_variants[i]);
	}
	/* Not a table: no header, a bad magic, a header alone. */
	variant = "not a table";
	{
		static const unsigned char junk[64] = { 0xfb, 0xff, 0xff, 0xff, 0, 0, 3, 8 };
		struct ds__go_image im = { .mem = junk, .size = sizeof(junk), .vaddr = MKGO_VADDR };
		struct ds__go *G = NULL;

		EXPECT(ds__go_open_image(&im, &G) == -ENODATA, "quantum 3 accepted");
		im.size = 8;
		EXPECT(ds__go_open_image(&im, &G) == -ENODATA, "8 bytes accepted");
		ds__go_close(G);
	}
	if (failures) {
		fprintf(stderr, "test_gopclntab: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_gopclntab: %zu layouts ok\n", sizeof(mkgo_variants) / sizeof(mkgo_variants[0]));
	return 0;
}
