/* SPDX-License-Identifier: MIT */
/*
 * Go's own symbol table, .gopclntab, for Go binaries without DWARF (`go
 * build -ldflags=-s -w`, as vendors ship Go tools): every function's name,
 * entry and end, its file:line by pc-value tables, and the inline tree of
 * the calls the compiler inlined.  Four layouts, told apart by the magic:
 *
 *   0xfffffffb  Go 1.2 to 1.15: absolute entries, offsets from the table's
 *               start, one file table for the whole binary;
 *   0xfffffffa  Go 1.16, 1.17: a header of region offsets (function names,
 *               CU file indexes, file names, pc-value tables, functions);
 *               pc-file values index the function's CU in the cutab;
 *   0xfffffff0  Go 1.18, 1.19: entries as offsets from textStart, 32-bit;
 *               funcdata (the inline tree) as offsets from go.func.*;
 *   0xfffffff1  Go 1.20 on: _func gains startLine, and an inlined call
 *               names its caller only by a pc (parentPc) whose position
 *               and inline index are the caller's.
 * The pointer size, the instruction quantum and the byte order come from
 * the header.  Learnt from the Go sources (debug/gosym/pclntab.go,
 * runtime/symtab.go, runtime2.go's _func, cmd/link's pcln.go); written
 * from their description, nothing copied.
 *
 * The table is found by its section, or when section headers are gone by
 * scanning the loaded segments for a header that parses and whose first
 * function lies in code.  go.func.* (where inline trees live since 1.18)
 * is found through runtime.firstmoduledata, whose first word points at the
 * table.  What lookups need is copied (the table, and the read-only
 * segment part that holds the inline trees), so the ELF need not stay
 * open: the index lets the copy go when every unit is built.
 *
 * For the index the function table is cut into units of FUNCS_PER_UNIT
 * functions, built lazily like DWARF CUs (ds__go_build_unit(): scopes for
 * functions and inlined calls, line rows).  Every offset, count and varint
 * is bounded by the copy: a malformed function is skipped, a malformed
 * pc-value table ends where it goes wrong, an inline chain with a bad
 * entry is dropped.
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#define FUNCS_PER_UNIT 256
#define COPY_MAX (512ull << 20) /* bytes of a binary we copy */
#define FUNCS_MAX (1u << 26)
#define INL_CHAIN_MAX 64 /* inlined calls nested in one another that we follow */
#define FUNCDATA_INLTREE 3
#define PCDATA_INLTREEINDEX 2
#define MODULEDATA_WORDS 41 /* runtime.moduledata words we look at */

enum { GO12, GO116, GO118, GO120 };

struct ds__go {
	unsigned char *mem; /* a copy of [vaddr, vaddr + size) of the binary */
	size_t size;
	uint64_t vaddr;
	size_t tab, end; /* the table: [tab, end) in mem */
	int ver;
	bool be;
	unsigned quantum, ptrsize;
	uint64_t text; /* base of entry offsets (>= 1.18) */
	uint64_t gofunc; /* go.func.*, base of funcdata offsets (>= 1.18); 0: unknown */
	/* A copy of go.func.* on, when mem does not hold it (else NULL). */
	unsigned char *fmem;
	size_t fsize;
	uint64_t fvaddr;
	/* Regions, as offsets in mem (each ends with the table). */
	size_t funcnames, cutab, filetab, pctab, funcs, functab;
	uint64_t nfiles; /* GO12: entries of the file table */
	size_t nfunc; /* functions whose entries are in order */
	size_t nunits;
	struct ds__cu_range *ranges;
	size_t nranges;
};

/* ------------------------------------------------------------- reading */

static bool in_tab(const struct ds__go *G, uint64_t off, uint64_t n)
{
	return off >= G->tab && off <= G->end && n <= G->end - off;
}

static uint64_t get(const unsigned char *p, unsigned n, bool be)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[be ? i : n - 1 - i] << (8 * (n - 1 - i));
	return v;
}

/* n bytes at off of the table (0 outside it: *ok false). */
static uint64_t rd(const struct ds__go *G, uint64_t off, unsigned n, bool *ok)
{
	if (!in_tab(G, off, n)) {
		*ok = false;
		return 0;
	}
	return get(G->mem + off, n, G->be);
}

/* n bytes at address va of the copies (inline trees lie outside the
 * table, perhaps in another segment). */
static uint64_t rd_va(const struct ds__go *G, uint64_t va, unsigned n, bool *ok)
{
	if (va >= G->vaddr && va - G->vaddr <= G->size && n <= G->size - (va - G->vaddr))
		return get(G->mem + (va - G->vaddr), n, G->be);
	if (G->fmem && va >= G->fvaddr && va - G->fvaddr <= G->fsize &&
	    n <= G->fsize - (va - G->fvaddr))
		return get(G->fmem + (va - G->fvaddr), n, G->be);
	*ok = false;
	return 0;
}

/* A NUL-terminated string at region + off, inside the table. */
static const char *cstr(const struct ds__go *G, size_t region, uint64_t off)
{
	const char *s;

	if (region > G->end || off >= G->end - region)
		return NULL;
	s = (const char *)G->mem + region + off;
	return memchr(s, 0, G->end - region - off) ? s : NULL;
}

/* -------------------------------------------------------------- header */

/* The layout a magic names, or -1. */
static int layout(uint32_t magic)
{
	switch (magic) {
	case 0xfffffffb:
		return GO12;
	case 0xfffffffa:
		return GO116;
	case 0xfffffff0:
		return GO118;
	case 0xfffffff1:
		return GO120;
	default:
		return -1;
	}
}

/* Parse the header at G->mem + G->tab (the table ends at G->end): the
 * layout, regions and function count.  false: not a table we can read. */
static bool parse_header(struct ds__go *G)
{
	const unsigned char *h = G->mem + G->tab;
	uint32_t le, be;
	size_t fs, words[8];
	bool ok = true;
	unsigned nw;

	if (G->end - G->tab < 16 || h[4] || h[5] || (h[6] != 1 && h[6] != 2 && h[6] != 4) ||
	    (h[7] != 4 && h[7] != 8))
		return false;
	le = (uint32_t)get(h, 4, false);
	be = (uint32_t)get(h, 4, true);
	G->be = layout(le) < 0;
	G->ver = layout(G->be ? be : le);
	if (G->ver < 0)
		return false;
	G->quantum = h[6];
	G->ptrsize = h[7];
	fs = G->ver >= GO118 ? 4 : G->ptrsize;
	if (G->ver == GO12) {
		uint64_t n = rd(G, G->tab + 8, G->ptrsize, &ok), fileoff;

		if (!ok || !n || n > FUNCS_MAX)
			return false;
		G->nfunc = (size_t)n;
		G->functab = G->tab + 8 + G->ptrsize;
		G->funcs = G->funcnames = G->pctab = G->tab;
		fileoff = rd(G, G->functab + (2 * n + 1) * fs, 4, &ok);
		G->filetab = G->tab + fileoff;
		G->nfiles = rd(G, G->filetab, 4, &ok);
		return ok && in_tab(G, G->filetab, 4);
	}
	nw = G->ver == GO116 ? 7 : 8;
	for (unsigned i = 0; i < nw; i++) {
		uint64_t w = rd(G, G->tab + 8 + (uint64_t)i * G->ptrsize, G->ptrsize, &ok);

		/* (Counts, then textStart, then offsets inside the table.) */
		if (i >= nw - 5 && w >= G->end - G->tab)
			ok = false;
		words[i] = (size_t)(i >= nw - 5 ? w : w > SIZE_MAX ? SIZE_MAX : w);
		if (i == 2 && nw == 8)
			G->text = w;
	}
	if (!ok || !words[0] || words[0] > FUNCS_MAX)
		return false;
	G->nfunc = words[0];
	G->funcnames = G->tab + words[nw - 5];
	G->cutab = G->tab + words[nw - 4];
	G->filetab = G->tab + words[nw - 3];
	G->pctab = G->tab + words[nw - 2];
	G->funcs = G->functab = G->tab + words[nw - 1];
	return true;
}

static size_t fieldsize(const struct ds__go *G)
{
	return G->ver >= GO118 ? 4 : G->ptrsize;
}

/* Entry of function i (i == nfunc: the end of the last one). */
static uint64_t func_pc(const struct ds__go *G, size_t i, bool *ok)
{
	size_t fs = fieldsize(G);
	uint64_t v = rd(G, G->functab + 2 * (uint64_t)i * fs, (unsigned)fs, ok);

	return G->ver >= GO118 ? G->text + v : v;
}

/* The functab fits, and its entries are in order up to nfunc (cut there
 * otherwise). */
static bool check_functab(struct ds__go *G)
{
	size_t fs = fieldsize(G), n;
	bool ok = true;
	uint64_t prev;

	if (!in_tab(G, G->functab, ((uint64_t)G->nfunc * 2 + 1) * fs))
		return false;
	prev = func_pc(G, 0, &ok);
	for (n = 1; n <= G->nfunc; n++) {
		uint64_t pc = func_pc(G, n, &ok);

		if (pc < prev)
			break;
		prev = pc;
	}
	G->nfunc = n - 1;
	return ok && G->nfunc;
}

/* ------------------------------------------------------------ functions */

struct gofn {
	uint64_t entry, end;
	uint32_t nameoff, pcsp, pcfile, pcln, npcdata, cuoff;
	unsigned nfuncdata;
	size_t pcdata; /* offsets in mem */
	size_t funcdata;
};

static bool func_read(const struct ds__go *G, size_t i, struct gofn *f)
{
	size_t fs = fieldsize(G), sz0 = G->ver >= GO118 ? 4 : G->ptrsize;
	unsigned nfields = G->ver == GO12 ? 8 : G->ver == GO120 ? 10 : 9;
	uint64_t at, fixed = sz0 + 4 * (uint64_t)nfields;
	bool ok = true;

	f->entry = func_pc(G, i, &ok);
	f->end = func_pc(G, i + 1, &ok);
	at = G->funcs + rd(G, G->functab + (2 * (uint64_t)i + 1) * fs, (unsigned)fs, &ok);
	if (!ok || !in_tab(G, at, fixed))
		return false;
#define FIELD(n) ((uint32_t)rd(G, at + sz0 + 4 * ((n) - 1), 4, &ok))
	f->nameoff = FIELD(1);
	f->pcsp = FIELD(4);
	f->pcfile = FIELD(5);
	f->pcln = FIELD(6);
	f->npcdata = FIELD(7);
	f->cuoff = G->ver == GO12 ? 0 : FIELD(8);
#undef FIELD
	/* (The last field is bytes: funcID, flag, pad, nfuncdata.) */
	f->nfuncdata = G->mem[at + fixed - 1];
	f->pcdata = (size_t)(at + fixed);
	if (!in_tab(G, f->pcdata, 4 * (uint64_t)f->npcdata))
		return false;
	f->funcdata = f->pcdata + 4 * (size_t)f->npcdata;
	/* Before 1.18 funcdata are pointers, aligned in memory. */
	if (G->ver < GO118 && G->ptrsize == 8 && ((G->vaddr + f->funcdata) & 4))
		f->funcdata += 4;
	return ok;
}

static const char *func_name(const struct ds__go *G, uint64_t nameoff)
{
	return cstr(G, G->funcnames, nameoff);
}

/* The file of pc-file value fno in f's CU; NULL: none. */
static const char *file_name(const struct ds__go *G, const struct gofn *f, int32_t fno)
{
	bool ok = true;
	uint64_t off;

	if (G->ver == GO12) {
		if (fno <= 0 || (uint64_t)fno >= G->nfiles)
			return NULL;
		off = rd(G, G->filetab + 4 * (uint64_t)fno, 4, &ok);
		return ok ? cstr(G, G->tab, off) : NULL;
	}
	if (fno < 0 || f->cuoff == UINT32_MAX)
		return NULL;
	off = rd(G, G->cutab + 4 * ((uint64_t)f->cuoff + (uint64_t)fno), 4, &ok);
	return ok && off != UINT32_MAX ? cstr(G, G->filetab, off) : NULL;
}

/* The address of f's inline tree; false: none (or outside the copies). */
static bool inl_tree(const struct ds__go *G, const struct gofn *f, uint64_t *at)
{
	bool ok = true;
	uint64_t a;

	if (f->nfuncdata <= FUNCDATA_INLTREE || f->npcdata <= PCDATA_INLTREEINDEX)
		return false;
	if (G->ver >= GO118) {
		uint64_t off = rd(G, f->funcdata + 4 * FUNCDATA_INLTREE, 4, &ok);

		if (!ok || off == UINT32_MAX || !G->gofunc)
			return false;
		a = G->gofunc + off;
	} else {
		a = rd(G, f->funcdata + (uint64_t)G->ptrsize * FUNCDATA_INLTREE, G->ptrsize, &ok);
		if (!ok || !a)
			return false;
	}
	if ((a < G->vaddr || a - G->vaddr >= G->size) &&
	    (!G->fmem || a < G->fvaddr || a - G->fvaddr >= G->fsize))
		return false;
	*at = a;
	return true;
}

/* ------------------------------------------------------ pc-value tables */

struct run {
	uint64_t lo, hi;
	int32_t val;
};

struct runs {
	struct run *v;
	size_t n, cap;
};

static bool uvarint(const struct ds__go *G, size_t *p, uint32_t *out)
{
	uint32_t v = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		unsigned char b;

		if (*p >= G->end)
			return false;
		b = G->mem[(*p)++];
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false; /* more than 5 bytes: not a uint32 */
}

/* The runs of the pc-value table at off (of the pc-value region) over
 * [entry, end): each value holds from its pc to the next.  A table that
 * ends early, runs past end or is malformed gives what it gave so far.
 * Values start at -1, as Go's do.  -ENOMEM or 0. */
static int pcvalue_runs(const struct ds__go *G, uint32_t off, uint64_t entry, uint64_t end,
			struct runs *R)
{
	size_t p = G->pctab + off;
	uint64_t pc = entry;
	uint32_t val = (uint32_t)-1;
	bool first = true;

	R->n = 0;
	if (!off || G->pctab > G->end || off >= G->end - G->pctab)
		return 0;
	while (pc < end) {
		uint32_t uv, pd;
		uint64_t step;

		if (!uvarint(G, &p, &uv) || (!uv && !first) || !uvarint(G, &p, &pd) || !pd)
			break;
		first = false;
		/* Zig-zag: the low bit is the sign. */
		val += (uv & 1) ? ~(uv >> 1) : uv >> 1;
		step = (uint64_t)pd * G->quantum;
		if (R->n == R->cap) {
			size_t cap = R->cap ? 2 * R->cap : 64;
			struct run *v = realloc(R->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			R->v = v;
			R->cap = cap;
		}
		R->v[R->n++] = (struct run){ pc, step > end - pc ? end : pc + step,
					     (int32_t)(val > INT32_MAX ? -(int64_t)(~val) - 1 : val) };
		pc = R->v[R->n - 1].hi;
	}
	return 0;
}

/* The value at pc of runs; false: not covered. */
static bool run_at(const struct runs *R, uint64_t pc, int32_t *val)
{
	size_t lo = 0, hi = R->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (R->v[mid].hi <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= R->n || pc < R->v[lo].lo)
		return false;
	*val = R->v[lo].val;
	return true;
}

/* -------------------------------------------------------------- building */

struct scratch {
	struct runs file, line, inl;
};

static int add_row(struct sym_build *B, uint64_t addr, uint32_t file, uint32_t line, bool end)
{
	if (GROW(B, lines, nlines, lcap))
		return -ENOMEM;
	B->lines[B->nlines++] = (struct line){ .addr = addr, .file = file, .line = line, .end = end };
	return 0;
}

/* f's rows: where the (file, line) pair changes, and an end where the
 * tables stop or hold no position. */
static int func_lines(const struct ds__go *G, const struct gofn *f, struct scratch *X,
		      struct sym_build *B)
{
	const struct runs *F = &X->file, *L = &X->line;
	size_t i = 0, j = 0;
	uint64_t pc = f->entry;
	uint32_t last_file = 0, last_line = 0, pool = 0;
	int32_t cached = -1;
	bool open = false;
	int err;

	if ((err = pcvalue_runs(G, f->pcfile, f->entry, f->end, &X->file)) ||
	    (err = pcvalue_runs(G, f->pcln, f->entry, f->end, &X->line)))
		return err;
	while (i < F->n && j < L->n) {
		uint64_t hi = F->v[i].hi < L->v[j].hi ? F->v[i].hi : L->v[j].hi;
		int32_t fno = F->v[i].val, line = L->v[j].val;

		if (fno != cached) {
			const char *name = file_name(G, f, fno);

			pool = name ? ds__symbols_intern(B, name) : 0;
			cached = fno;
		}
		if (pool && line > 0) {
			if (!open || pool != last_file || (uint32_t)line != last_line) {
				if ((err = add_row(B, pc, pool, (uint32_t)line, false)))
					return err;
				last_file = pool;
				last_line = (uint32_t)line;
				open = true;
			}
		} else if (open) {
			if ((err = add_row(B, pc, 0, 0, true)))
				return err;
			open = false;
		}
		pc = hi;
		if (F->v[i].hi == hi)
			i++;
		if (L->v[j].hi == hi)
			j++;
	}
	return open ? add_row(B, pc, 0, 0, true) : 0;
}

struct inl_call {
	int32_t ix;
	uint32_t name, call_file, call_line;
};

/* The chain of inlined calls at inline index ix, innermost first, into c;
 * how many (0: a bad entry somewhere, so none). */
static size_t inl_chain(const struct ds__go *G, const struct gofn *f, uint64_t tree, int32_t ix,
			struct scratch *X, struct sym_build *B, struct inl_call *c)
{
	size_t n = 0;

	while (ix >= 0 && n < INL_CHAIN_MAX) {
		bool ok = true;
		const char *name, *file;
		int32_t fno, line;

		if (G->ver == GO120) {
			uint64_t at = tree + 16 * (uint64_t)ix, ppc;

			name = func_name(G, rd_va(G, at + 4, 4, &ok));
			ppc = f->entry + (uint32_t)rd_va(G, at + 8, 4, &ok);
			/* The caller's position is that of parentPc, and so is
			 * its own inline index. */
			if (!ok || !name || ppc >= f->end || !run_at(&X->file, ppc, &fno) ||
			    !run_at(&X->line, ppc, &line))
				return 0;
			c[n].ix = ix;
			if (!run_at(&X->inl, ppc, &ix))
				ix = -1;
		} else {
			uint64_t at = tree + 20 * (uint64_t)ix;

			c[n].ix = ix;
			ix = (int16_t)rd_va(G, at, 2, &ok);
			fno = (int32_t)rd_va(G, at + 4, 4, &ok);
			line = (int32_t)rd_va(G, at + 8, 4, &ok);
			name = func_name(G, rd_va(G, at + 12, 4, &ok));
			if (!ok || !name)
				return 0;
		}
		file = file_name(G, f, fno);
		c[n].name = ds__symbols_intern(B, name);
		c[n].call_file = file ? ds__symbols_intern(B, file) : 0;
		c[n].call_line = line > 0 ? (uint32_t)line : 0;
		n++;
	}
	return ix >= 0 ? 0 : n; /* deeper than we follow, or a cycle */
}

/* Scopes for f's inlined calls: one per call and run of pcs, a run
 * continuing the previous one extending the scopes the two share. */
static int func_inlines(const struct ds__go *G, const struct gofn *f, uint32_t fscope,
			struct scratch *X, struct sym_build *B)
{
	struct inl_call c[INL_CHAIN_MAX];
	struct {
		int32_t ix;
		uint32_t scope;
	} open[INL_CHAIN_MAX];
	size_t nopen = 0;
	uint64_t open_hi = 0, tree;
	bool ok = true;
	uint32_t off;
	int err;

	if (!inl_tree(G, f, &tree))
		return 0;
	off = (uint32_t)rd(G, f->pcdata + 4 * PCDATA_INLTREEINDEX, 4, &ok);
	if (!ok || (err = pcvalue_runs(G, off, f->entry, f->end, &X->inl)))
		return ok ? err : 0;
	for (size_t r = 0; r < X->inl.n; r++) {
		const struct run *run = &X->inl.v[r];
		size_t n = run->val >= 0 ? inl_chain(G, f, tree, run->val, X, B, c) : 0, k = 0;

		if (nopen && run->lo == open_hi)
			while (k < nopen && k < n && open[k].ix == c[n - 1 - k].ix)
				k++;
		for (size_t j = 0; j < k; j++)
			B->scopes[open[j].scope].hi = run->hi;
		for (size_t j = k; j < n; j++) {
			const struct inl_call *ic = &c[n - 1 - j]; /* outer first */

			if (GROW(B, scopes, nscopes, scap))
				return -ENOMEM;
			B->scopes[B->nscopes] = (struct scope){
				.lo = run->lo,
				.hi = run->hi,
				.parent = j ? open[j - 1].scope : fscope,
				.name = ic->name,
				.call_file = ic->call_file,
				.call_line = ic->call_line,
				.inlined = 1,
				.depth = (uint8_t)(j + 1),
				.is_linkage = 1,
			};
			open[j].ix = ic->ix;
			open[j].scope = (uint32_t)B->nscopes++;
		}
		nopen = n;
		open_hi = run->hi;
	}
	return 0;
}

static int func_build(const struct ds__go *G, size_t i, struct scratch *X, struct sym_build *B)
{
	struct gofn f;
	const char *name;
	uint32_t fscope;
	int err;

	if (!func_read(G, i, &f) || f.entry >= f.end)
		return 0;
	name = func_name(G, f.nameoff);
	if (GROW(B, scopes, nscopes, scap))
		return -ENOMEM;
	fscope = (uint32_t)B->nscopes;
	/* Go names are what Go prints (no mangling): linkage names. */
	B->scopes[B->nscopes++] = (struct scope){ .lo = f.entry,
						  .hi = f.end,
						  .parent = NO_PARENT,
						  .name = ds__symbols_intern(B, name),
						  .is_linkage = 1 };
	err = func_lines(G, &f, X, B);
	if (!err)
		err = func_inlines(G, &f, fscope, X, B);
	return err;
}

int ds__go_build_unit(struct ds__go *G, size_t unit, struct sym_build *B)
{
	struct scratch X;
	size_t first = unit * FUNCS_PER_UNIT, last;
	int err = 0;

	memset(&X, 0, sizeof(X));
	ds__sym_build_reset(B);
	if (unit >= G->nunits)
		return 0;
	last = first + FUNCS_PER_UNIT < G->nfunc ? first + FUNCS_PER_UNIT : G->nfunc;
	for (size_t i = first; i < last && !err; i++)
		err = func_build(G, i, &X, B);
	free(X.file.v);
	free(X.line.v);
	free(X.inl.v);
	return err;
}

/* -------------------------------------------------------------- symbols */

/* Where f's code ends, into *end: where its pc-value tables end (the
 * compiler writes each up to the function's size, not over the padding
 * up to the next entry), pcsp's else pcln's; the next entry when neither
 * decodes.  0 or -ENOMEM. */
static int func_code_end(const struct ds__go *G, const struct gofn *f, struct runs *R,
			 uint64_t *end)
{
	uint32_t tables[2] = { f->pcsp, f->pcln };

	*end = f->end;
	for (unsigned t = 0; t < 2; t++) {
		int err = pcvalue_runs(G, tables[t], f->entry, f->end, R);

		if (err)
			return err;
		if (R->n) {
			*end = R->v[R->n - 1].hi;
			break;
		}
	}
	return 0;
}

/* The section of B holding addr (*hint: the last one found); false:
 * none. */
static bool section_of(const struct sym_build *B, uint64_t addr, size_t *hint, uint32_t *shndx)
{
	for (size_t k = 0; k <= B->nsecs; k++) {
		size_t i = k ? k - 1 : *hint;

		if (i < B->nsecs && B->secs[i].lo <= addr && addr < B->secs[i].hi) {
			*hint = i;
			*shndx = B->secs[i].shndx;
			return true;
		}
	}
	return false;
}

int ds__go_symbols(const struct ds__go *G, struct sym_build *B)
{
	struct runs R = { 0 };
	size_t hint = 0;
	bool ok = true, own_section = !B->nsecs;
	int added = 0, err = 0;

	for (size_t i = 0; i < G->nfunc && !err; i++) {
		struct gofn f;
		const char *name;
		uint64_t end;
		uint32_t shndx = 0;

		if (!func_read(G, i, &f) || f.entry >= f.end || !(name = func_name(G, f.nameoff)) ||
		    !*name || (!own_section && !section_of(B, f.entry, &hint, &shndx)))
			continue;
		if ((err = func_code_end(G, &f, &R, &end)) || (err = GROW(B, syms, nsyms, symcap)))
			break;
		B->syms[B->nsyms] = (struct symbol){
			.lo = f.entry,
			.size = end - f.entry,
			.name = ds__symbols_intern(B, name),
			.shndx = shndx,
			.order = (uint32_t)B->nsyms & ((1u << 30) - 1),
			.bind = SYM_GLOBAL,
		};
		if (!B->syms[B->nsyms++].name)
			err = -ENOMEM;
		added++;
	}
	/* No section headers: the functions' span is their section. */
	if (!err && added && own_section) {
		if (GROW(B, secs, nsecs, seccap))
			err = -ENOMEM;
		else
			B->secs[B->nsecs++] = (struct section){ func_pc(G, 0, &ok),
								func_pc(G, G->nfunc, &ok), 0, 0 };
	}
	free(R.v);
	return err ? err : added;
}

/* ------------------------------------------------------------- opening */

static int make_units(struct ds__go *G)
{
	bool ok = true;

	G->nunits = (G->nfunc + FUNCS_PER_UNIT - 1) / FUNCS_PER_UNIT;
	G->ranges = calloc(G->nunits ? G->nunits : 1, sizeof(*G->ranges));
	if (!G->ranges)
		return -ENOMEM;
	for (size_t u = 0; u < G->nunits; u++) {
		size_t first = u * FUNCS_PER_UNIT;
		size_t last = first + FUNCS_PER_UNIT < G->nfunc ? first + FUNCS_PER_UNIT : G->nfunc;
		uint64_t lo = func_pc(G, first, &ok), hi = func_pc(G, last, &ok);

		if (lo < hi)
			G->ranges[G->nranges++] = (struct ds__cu_range){ lo, hi, (uint32_t)u, 0 };
	}
	return ok ? 0 : -EINVAL;
}

/* The table of im, parsed (over im's bytes, nothing copied: G->mem is
 * borrowed).  false: none there. */
static bool parse_image(const struct ds__go_image *im, struct ds__go *G)
{
	memset(G, 0, sizeof(*G));
	if (im->tab_off >= im->size)
		return false;
	G->mem = (unsigned char *)im->mem;
	G->size = im->size;
	G->vaddr = im->vaddr;
	G->tab = im->tab_off;
	G->end = im->tab_size && im->tab_size <= im->size - im->tab_off ? im->tab_off + im->tab_size
									 : im->size;
	G->gofunc = im->gofunc;
	if (!parse_header(G))
		return false;
	/* A zero textStart: relocated at run time (PIE), ours is .text's. */
	if (G->ver >= GO118 && !G->text)
		G->text = im->text;
	if (!check_functab(G))
		return false;
	if (im->code_hi) { /* the first function must be code */
		bool ok = true;
		uint64_t pc = func_pc(G, 0, &ok);

		if (pc < im->code_lo || pc >= im->code_hi)
			return false;
	}
	return true;
}

int ds__go_open_image(const struct ds__go_image *im, struct ds__go **out)
{
	struct ds__go tmp, *G;
	size_t from;
	int err;

	*out = NULL;
	if (!parse_image(im, &tmp))
		return -ENODATA;
	/* Copy from go.func.* (>= 1.18) or the segment's start (before,
	 * inline trees may be anywhere in it) to its end; the table alone
	 * when that is too much. */
	from = 0;
	if (tmp.ver >= GO118 && tmp.gofunc >= im->vaddr && tmp.gofunc - im->vaddr < im->size)
		from = (size_t)(tmp.gofunc - im->vaddr) < im->tab_off
			       ? (size_t)(tmp.gofunc - im->vaddr)
			       : im->tab_off;
	else if (tmp.ver >= GO118)
		from = im->tab_off;
	if (im->size - from > COPY_MAX)
		from = im->tab_off;
	if (tmp.end - from > COPY_MAX)
		return -E2BIG;
	G = calloc(1, sizeof(*G));
	if (!G)
		return -ENOMEM;
	*G = tmp;
	G->ranges = NULL;
	G->size = (from == im->tab_off ? tmp.end : im->size) - from;
	G->mem = malloc(G->size ? G->size : 1);
	if (!G->mem) {
		free(G);
		return -ENOMEM;
	}
	memcpy(G->mem, im->mem + from, G->size);
	G->vaddr = im->vaddr + from;
	G->fmem = NULL;
	G->fsize = 0;
	if (tmp.ver >= GO118 && im->fn_mem && im->fn_size && tmp.gofunc == im->fn_vaddr &&
	    (tmp.gofunc < im->vaddr || tmp.gofunc - im->vaddr >= im->size)) {
		G->fsize = im->fn_size < COPY_MAX ? im->fn_size : COPY_MAX;
		if (!(G->fmem = malloc(G->fsize))) {
			free(G->mem);
			free(G);
			return -ENOMEM;
		}
		memcpy(G->fmem, im->fn_mem, G->fsize);
		G->fvaddr = im->fn_vaddr;
	}
	/* Every region moves with the copy. */
	G->tab -= from;
	G->end -= from;
	G->funcnames -= from;
	G->cutab -= from;
	G->filetab -= from;
	G->pctab -= from;
	G->funcs -= from;
	G->functab -= from;
	err = make_units(G);
	if (err) {
		ds__go_close(G);
		return err;
	}
	*out = G;
	return 0;
}

struct seg {
	uint64_t vaddr, off, filesz;
	bool exec;
};

/* The PT_LOAD segments of elf (with bytes in the file), up to 16. */
static size_t segments(Elf *elf, size_t fsize, struct seg *v)
{
	size_t phnum, n = 0;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return 0;
	for (size_t i = 0; i < phnum && n < 16; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz ||
		    ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset)
			continue;
		v[n++] = (struct seg){ ph.p_vaddr, ph.p_offset, ph.p_filesz, (ph.p_flags & PF_X) != 0 };
	}
	return n;
}

/* The fields of runtime.firstmoduledata we use, from its words w:
 * go.func.* in the table's segment, or (Go's PIE link) in another one of
 * the file's, whose part from there on the image names. */
static void moduledata_fields(const uint64_t *w, const struct ds__go *T, const unsigned char *file,
			      const struct seg *sg, size_t nseg, struct ds__go_image *im)
{
	/* text at word 22 in 1.16 to 1.2x; gofunc after rodata: word 38 up
	 * to 1.19, 40 after (coverage counters came before them in 1.20). */
	if (!im->text)
		im->text = w[22];
	for (int k = T->ver == GO120 ? 40 : 38, tries = 0; tries < 2; tries++, k = k == 38 ? 40 : 38) {
		if (!w[k - 1] || w[k - 1] > w[k])
			continue;
		if (w[k] >= im->vaddr && w[k] - im->vaddr < im->size) {
			im->gofunc = w[k];
			return;
		}
		for (size_t s = 0; s < nseg; s++)
			if (w[k] >= sg[s].vaddr && w[k] - sg[s].vaddr < sg[s].filesz) {
				im->gofunc = im->fn_vaddr = w[k];
				im->fn_mem = file + sg[s].off + (w[k] - sg[s].vaddr);
				im->fn_size = (size_t)(sg[s].filesz - (w[k] - sg[s].vaddr));
				return;
			}
	}
}

/* A position-independent binary's relative relocations, as (place,
 * value) sorted by place: where the file holds 0 for a pointer (RELA),
 * the loader writes the addend plus the load address. */
struct relword {
	uint64_t at, val;
};

static int cmp_relword(const void *a, const void *b)
{
	const struct relword *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/* The file offset of [vaddr, vaddr + n) when one segment holds it. */
static bool vaddr_off(const struct seg *sg, size_t nseg, uint64_t vaddr, uint64_t n, uint64_t *off)
{
	for (size_t s = 0; s < nseg; s++)
		if (vaddr >= sg[s].vaddr && vaddr - sg[s].vaddr <= sg[s].filesz &&
		    n <= sg[s].filesz - (vaddr - sg[s].vaddr)) {
			*off = sg[s].off + (vaddr - sg[s].vaddr);
			return true;
		}
	return false;
}

/* The relative relocations of elf's DT_RELA table (64-bit, little-endian
 * x86-64 and arm64: Go's PIE targets among ours); NULL and *n 0 when
 * there are none, or no memory. */
static struct relword *relative_relocs(Elf *elf, const unsigned char *file, size_t fsize,
				       const struct seg *sg, size_t nseg, size_t *n)
{
	GElf_Ehdr eh;
	size_t phnum;
	uint64_t rela = 0, relasz = 0, relaent = 0, rel_type;
	struct relword *v;

	*n = 0;
	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || elf_getphdrnum(elf, &phnum) != 0)
		return NULL;
	rel_type = eh.e_machine == EM_X86_64 ? 8 /* R_X86_64_RELATIVE */
		   : eh.e_machine == EM_AARCH64 ? 1027 /* R_AARCH64_RELATIVE */
						: 0;
	if (!rel_type)
		return NULL;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_DYNAMIC ||
		    ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset)
			continue;
		for (uint64_t o = 0; o + 16 <= ph.p_filesz; o += 16) {
			uint64_t tag = get(file + ph.p_offset + o, 8, false);
			uint64_t val = get(file + ph.p_offset + o + 8, 8, false);

			if (tag == DT_NULL)
				break;
			if (tag == DT_RELA)
				rela = val;
			else if (tag == DT_RELASZ)
				relasz = val;
			else if (tag == DT_RELAENT)
				relaent = val;
		}
		break;
	}
	if (!rela || relaent != 24 || !relasz || relasz / 24 > fsize / 24 ||
	    !vaddr_off(sg, nseg, rela, relasz, &rela))
		return NULL;
	if (!(v = malloc((size_t)(relasz / 24) * sizeof(*v))))
		return NULL;
	for (uint64_t o = 0; o + 24 <= relasz; o += 24) {
		const unsigned char *r = file + rela + o;

		if ((get(r + 8, 8, false) & 0xffffffff) == rel_type)
			v[(*n)++] = (struct relword){ get(r, 8, false), get(r + 16, 8, false) };
	}
	qsort(v, *n, sizeof(*v), cmp_relword);
	return v;
}

static const struct relword *reloc_at(const struct relword *v, size_t n, uint64_t at)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].at < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].at == at ? &v[lo] : NULL;
}

/* runtime.firstmoduledata: its first word is the table's address, the
 * next the function names' (a slice).  From it, go.func.* and text.  In a
 * position-independent binary of a RELA target those words are 0 in the
 * file and their values are relocations' addends: found there. */
static void find_moduledata(Elf *elf, const unsigned char *file, size_t fsize,
			    const struct seg *sg, size_t nseg, const struct ds__go *T,
			    uint64_t tab_vaddr, struct ds__go_image *im)
{
	unsigned ps = T->ptrsize;
	uint64_t names = tab_vaddr + (T->funcnames - T->tab);
	struct relword *rv;
	size_t nr;

	if (ps != 4 && ps != 8)
		return;
	for (size_t s = 0; s < nseg; s++) {
		const unsigned char *p = file + sg[s].off;

		for (uint64_t o = 0; o + (uint64_t)MODULEDATA_WORDS * ps <= sg[s].filesz; o += ps) {
			uint64_t w[MODULEDATA_WORDS];

			if (get(p + o, ps, T->be) != tab_vaddr || get(p + o + ps, ps, T->be) != names)
				continue;
			for (unsigned k = 0; k < MODULEDATA_WORDS; k++)
				w[k] = get(p + o + (uint64_t)k * ps, ps, T->be);
			moduledata_fields(w, T, file, sg, nseg, im);
			return;
		}
	}
	if (!(rv = relative_relocs(elf, file, fsize, sg, nseg, &nr)))
		return;
	for (size_t i = 0; i + 1 < nr; i++) {
		uint64_t w[MODULEDATA_WORDS], off;

		if (rv[i].val != tab_vaddr || rv[i + 1].at != rv[i].at + 8 || rv[i + 1].val != names ||
		    !vaddr_off(sg, nseg, rv[i].at, (uint64_t)MODULEDATA_WORDS * 8, &off))
			continue;
		for (unsigned k = 0; k < MODULEDATA_WORDS; k++) {
			const struct relword *r = reloc_at(rv, nr, rv[i].at + 8ull * k);

			w[k] = r ? r->val : get(file + off + 8ull * k, 8, false);
		}
		moduledata_fields(w, T, file, sg, nseg, im);
		break;
	}
	free(rv);
}

/* The table by its header's pattern, in any loaded segment. */
static bool scan_segments(const unsigned char *file, const struct seg *sg, size_t nseg,
			  struct ds__go_image *im, unsigned ptrsize, struct ds__go *T)
{
	for (size_t s = 0; s < nseg; s++) {
		const unsigned char *p = file + sg[s].off;

		for (uint64_t o = 0; o + 16 <= sg[s].filesz; o += 4) {
			uint32_t m = (uint32_t)get(p + o, 4, false);

			if (p[o + 4] || p[o + 5] || p[o + 7] != ptrsize ||
			    (layout(m) < 0 && layout(__builtin_bswap32(m)) < 0))
				continue;
			im->mem = p;
			im->size = (size_t)sg[s].filesz;
			im->vaddr = sg[s].vaddr;
			im->tab_off = (size_t)o;
			im->tab_size = 0;
			if (parse_image(im, T))
				return true;
		}
	}
	return false;
}

int ds__go_open(struct ds_context *ctx, Elf *elf, const char *name, struct ds__go **out)
{
	struct ds__go_image im = { 0 };
	struct seg sg[16];
	size_t fsize = 0, nseg, shstrndx, shnum = 0;
	const unsigned char *file;
	const char *ident;
	Elf_Scn *scn = NULL;
	struct ds__go T;
	bool found = false;
	unsigned ptrsize;
	int err;

	*out = NULL;
	if (!elf || !(file = (const unsigned char *)elf_rawfile(elf, &fsize)) ||
	    !(ident = elf_getident(elf, NULL)))
		return -ENODATA;
	ptrsize = ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	nseg = segments(elf, fsize, sg);
	for (size_t s = 0; s < nseg; s++)
		if (sg[s].exec && (!im.code_hi || sg[s].vaddr + sg[s].filesz > im.code_hi)) {
			im.code_lo = im.code_hi ? im.code_lo : sg[s].vaddr;
			im.code_hi = sg[s].vaddr + sg[s].filesz;
		}
	/* Whether the segments are worth a scan: a file with section headers
	 * has its table as a section (.gopclntab), or is no Go program at
	 * all, unless Go's linker left the table in another section (PIE and
	 * external links put it in .data.rel.ro): such a file has Go's build
	 * ID note (.note.go.buildid, Go 1.7 and later; none when linked with
	 * -buildid=) or its build information (.go.buildinfo, Go 1.13 and
	 * later).  Without section headers (stripped by sstrip, or a core's
	 * image) or their names, only a scan can tell.  Every C library of a
	 * process is thus opened for nothing but its section headers:
	 * reading all of its segments for a table cost a stream over many
	 * DSOs a third of its time. */
	bool may_be_go = elf_getshdrnum(elf, &shnum) != 0 || shnum <= 1;

	/* By its section, inside its segment when there is one. */
	if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
		may_be_go = true;
	} else {
		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *sn;

			if (!gelf_getshdr(scn, &sh) || !(sn = elf_strptr(elf, shstrndx, sh.sh_name)))
				continue;
			if (!strcmp(sn, ".note.go.buildid") || !strcmp(sn, ".go.buildinfo"))
				may_be_go = true;
			if (sh.sh_type != SHT_PROGBITS)
				continue;
			if (!strcmp(sn, ".text") && !im.text)
				im.text = sh.sh_addr;
			/* (.data.rel.ro.gopclntab: Go's own PIE link) */
			if ((strcmp(sn, ".gopclntab") && strcmp(sn, ".data.rel.ro.gopclntab")) ||
			    sh.sh_offset > fsize ||
			    sh.sh_size > fsize - sh.sh_offset || !sh.sh_size)
				continue;
			im.mem = file + sh.sh_offset;
			im.size = (size_t)sh.sh_size;
			im.vaddr = sh.sh_addr;
			im.tab_off = 0;
			im.tab_size = (size_t)sh.sh_size;
			for (size_t s = 0; s < nseg; s++)
				if (sh.sh_addr >= sg[s].vaddr &&
				    sh.sh_addr - sg[s].vaddr < sg[s].filesz &&
				    sh.sh_offset == sg[s].off + (sh.sh_addr - sg[s].vaddr) &&
				    sh.sh_size <= sg[s].filesz - (sh.sh_addr - sg[s].vaddr)) {
					im.mem = file + sg[s].off;
					im.size = (size_t)sg[s].filesz;
					im.vaddr = sg[s].vaddr;
					im.tab_off = (size_t)(sh.sh_addr - sg[s].vaddr);
				}
			found = parse_image(&im, &T);
		}
	}
	if (!found && may_be_go)
		found = scan_segments(file, sg, nseg, &im, ptrsize, &T);
	if (!found)
		return -ENODATA;
	if (T.ver >= GO118)
		find_moduledata(elf, file, fsize, sg, nseg, &T, im.vaddr + im.tab_off, &im);
	err = ds__go_open_image(&im, out);
	if (!err)
		ds_debug(ctx, "%s: .gopclntab (magic %s) at 0x%llx: %zu functions%s", name,
			 T.ver == GO12 ? "1.2" : T.ver == GO116 ? "1.16" : T.ver == GO118 ? "1.18" : "1.20",
			 (unsigned long long)(im.vaddr + im.tab_off), (*out)->nfunc,
			 T.ver >= GO118 && !im.gofunc ? " (go.func.* not found: no inline frames)" : "");
	return err;
}

void ds__go_close(struct ds__go *G)
{
	if (!G)
		return;
	free(G->mem);
	free(G->fmem);
	free(G->ranges);
	free(G);
}

size_t ds__go_units(const struct ds__go *G)
{
	return G ? G->nunits : 0;
}

int ds__go_ranges(struct ds__go *G, struct ds__cu_range **ranges, size_t *n)
{
	*ranges = malloc((G->nranges ? G->nranges : 1) * sizeof(**ranges));
	if (!*ranges)
		return -ENOMEM;
	if (G->nranges)
		memcpy(*ranges, G->ranges, G->nranges * sizeof(**ranges));
	*n = G->nranges;
	return 0;
}

uint64_t ds__go_bytes(const struct ds__go *G)
{
	return G ? sizeof(*G) + G->size + G->fsize + G->nunits * sizeof(*G->ranges) : 0;
}
