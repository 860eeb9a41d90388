/* SPDX-License-Identifier: MIT */
/*
 * The symbol index of a DSO, built when it is first asked.  The DWARF is
 * read once (dwarf.c); what we keep is our own index, independent of libdw
 * afterwards (its strings are copied into one pool), so the Dwarf is
 * closed right after the build:
 *   - scopes: one entry per address range of every function and inlined
 *     instance, sorted by start, each knowing its enclosing scope.  Ranges
 *     nest, so the innermost scope of an address is the last range that
 *     starts at or below it, or the first of its ancestors that contains
 *     it;
 *   - lines: every line-table row of every CU, sorted by address;
 *   - symbols: ELF symbols (.symtab, else .gnu_debugdata's, else .dynsym;
 *     symtab.c) for addresses no DWARF function covers.
 * Here: the string pool and its interning, the build from dwarf.c and
 * symtab.c, the ordering, the bytes accounting and freeing.  The
 * structures are in symindex.h; the queries in symbolize.c.
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- strings */

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

static int intern_grow(struct ds_symbols *S)
{
	size_t cap = S->intern_cap ? 2 * S->intern_cap : 4096;
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < S->intern_cap; i++) {
		uint32_t off = S->intern[i];
		size_t j;

		if (!off)
			continue;
		j = str_hash(S->pool + off) & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = off;
	}
	free(S->intern);
	S->intern = t;
	S->intern_cap = cap;
	return 0;
}

/* The pool offset of s (0 for NULL or on allocation failure). */
uint32_t ds__symbols_intern(struct ds_symbols *S, const char *s)
{
	size_t len, j;

	if (!s)
		return 0;
	if (2 * (S->intern_used + 1) > S->intern_cap && intern_grow(S))
		return 0;
	j = str_hash(s) & (S->intern_cap - 1);
	for (; S->intern[j]; j = (j + 1) & (S->intern_cap - 1))
		if (!strcmp(S->pool + S->intern[j], s))
			return S->intern[j];
	len = strlen(s) + 1;
	if (S->pool_len + len > UINT32_MAX)
		return 0;
	if (S->pool_len + len > S->pool_cap) {
		size_t cap = (S->pool_len + len) * 2;
		char *p = realloc(S->pool, cap);

		if (!p)
			return 0;
		S->pool = p;
		S->pool_cap = cap;
	}
	if (!S->pool_len)
		S->pool[S->pool_len++] = 0; /* offset 0 means "none" */
	memcpy(S->pool + S->pool_len, s, len);
	S->intern[j] = (uint32_t)S->pool_len;
	S->intern_used++;
	S->pool_len += len;
	return S->intern[j];
}

/* ---------------------------------------------------------------- build */

static int cmp_scope(const void *a, const void *b)
{
	const struct scope *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (int)x->depth - (int)y->depth; /* outer first: inner wins */
}

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->end != y->end)
		return x->end ? -1 : 1; /* a sequence's end before another's start */
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_sec(const void *a, const void *b)
{
	const struct section *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int cmp_scope_idx(const void *a, const void *b, void *keys)
{
	const struct scope *k = keys;

	return cmp_scope(&k[*(const uint32_t *)a], &k[*(const uint32_t *)b]);
}

/* CUs usually come in address order, each with its rows sorted: then
 * there is nothing to sort. */
static bool sorted(const void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *p = base;

	for (size_t i = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0)
			return false;
	return true;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;

	/* An empty sequence (a lone end) before one starting there. */
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Each sequence (rows up to and including an end row) is a sorted run;
 * sequences of different functions do not overlap.  Ordering the (few
 * hundred) sequences orders the (hundreds of thousands of) rows without
 * moving them.  -EAGAIN when they overlap after all: the caller sorts the
 * rows and makes them one sequence. */
static int order_sequences(struct ds_symbols *S)
{
	struct seq *v = NULL;
	size_t n = 0, cap = 0, start = 0;

	for (size_t i = 0; i < S->nlines; i++) {
		if (!S->lines[i].end && i + 1 < S->nlines)
			continue;
		if (n == cap) {
			struct seq *nv = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = (struct seq){ start, i + 1 - start, S->lines[start].addr, S->lines[i].addr };
		start = i + 1;
	}
	qsort(v, n, sizeof(*v), cmp_seq);
	for (size_t i = 0; i < n; i++) {
		/* Rows of a sequence in address order, sequences apart. */
		bool ok = i == 0 || v[i - 1].hi <= v[i].lo;

		for (size_t k = v[i].first + 1; ok && k < v[i].first + v[i].n; k++)
			ok = S->lines[k - 1].addr <= S->lines[k].addr;
		if (!ok) {
			free(v);
			return -EAGAIN;
		}
	}
	S->seqs = v;
	S->nseqs = n;
	return 0;
}

static int one_sequence(struct ds_symbols *S)
{
	S->seqs = malloc(sizeof(*S->seqs));
	if (!S->seqs)
		return -ENOMEM;
	S->seqs[0] = (struct seq){ 0, S->nlines, S->nlines ? S->lines[0].addr : 0,
				   S->nlines ? S->lines[S->nlines - 1].addr : 0 };
	S->nseqs = 1;
	return 0;
}

/* qsort() loses the parents' indexes: sort (index, key) pairs instead and
 * remap. */
static int sort_scopes(struct ds_symbols *S)
{
	uint32_t *perm, *inv;
	struct scope *sorted;

	if (!S->nscopes)
		return 0;
	perm = malloc(S->nscopes * sizeof(*perm));
	inv = malloc(S->nscopes * sizeof(*inv));
	sorted = malloc(S->nscopes * sizeof(*sorted));
	if (!perm || !inv || !sorted) {
		free(perm);
		free(inv);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < S->nscopes; i++)
		perm[i] = (uint32_t)i;
	qsort_r(perm, S->nscopes, sizeof(*perm), cmp_scope_idx, S->scopes);
	for (size_t i = 0; i < S->nscopes; i++) {
		inv[perm[i]] = (uint32_t)i;
		sorted[i] = S->scopes[perm[i]];
	}
	for (size_t i = 0; i < S->nscopes; i++)
		if (sorted[i].parent != NO_PARENT)
			sorted[i].parent = inv[sorted[i].parent];
	free(S->scopes);
	S->scopes = sorted;
	S->scap = S->nscopes;
	free(perm);
	free(inv);
	return 0;
}

void ds__symbols_free(struct ds_symbols *S)
{
	if (!S)
		return;
	free(S->scopes);
	free(S->lines);
	free(S->syms);
	free(S->segs);
	free(S->secs);
	free(S->line_keys);
	free(S->scope_keys);
	free(S->seqs);
	free(S->pool);
	free(S->intern);
	free(S);
}

uint64_t ds__symbols_bytes(const struct ds_symbols *S)
{
	return S ? S->bytes : 0;
}

bool ds__symbols_full(const struct ds_symbols *S)
{
	return S && S->full;
}

bool ds__symbols_read_dwarf(const struct ds_symbols *S)
{
	return S && S->read_dwarf;
}

/* Build the index from a debuginfo ELF (may be NULL) and the binary itself
 * (may be NULL); their names (paths) are for messages.  Neither is kept:
 * the index copies what it needs.  Without dwarf, the ELF symbols are
 * exactly those of a full build (same sources, same order), so a
 * names-only answer is the same from either tier. */
int ds__symbols_build(struct ds_context *ctx, Elf *debug, const char *debug_name, Elf *binary,
		      const char *binary_name, bool dwarf, struct ds_symbols **out)
{
	struct ds_symbols *S = calloc(1, sizeof(*S));
	int err = 0;

	if (!S)
		return -ENOMEM;
	if (!debug_name)
		debug_name = "debuginfo";
	if (!binary_name)
		binary_name = "binary";
	S->full = dwarf || !debug;
	S->read_dwarf = dwarf && debug;
	if (debug) {
		if (dwarf)
			err = ds__dwarf_index(ctx, debug, debug_name, S);
		if (!err && ds__symtab_add(ctx, debug_name, S, debug, SHT_SYMTAB) < 0)
			err = -ENOMEM;
	}
	/* Segments from the binary when there is one: objcopy
	 * --only-keep-debug rewrites the debug file's offsets, and file
	 * offsets (perf's) are the binary's. */
	if (!err && binary)
		err = ds__symtab_read_segments(S, binary);
	if (!err && debug && !S->nsegs)
		err = ds__symtab_read_segments(S, debug);
	if (!err && binary) {
		if (!S->nsyms)
			err = ds__symtab_add(ctx, binary_name, S, binary, SHT_SYMTAB) < 0 ? -ENOMEM
											  : 0;
		if (!err && !S->nsyms)
			err = ds__symtab_add_minidebuginfo(ctx, binary_name, S, binary) < 0
				  ? -ENOMEM
				  : 0;
		if (!err && !S->nsyms)
			err = ds__symtab_add(ctx, binary_name, S, binary, SHT_DYNSYM) < 0 ? -ENOMEM
											  : 0;
	}
	if (!err)
		err = sort_scopes(S);
	if (err) {
		ds__symbols_free(S);
		return err;
	}
	/* (qsort() of zero elements at NULL is undefined: UBSan says so.) */
	if (S->nlines && !sorted(S->lines, S->nlines, sizeof(*S->lines), cmp_line) &&
	    order_sequences(S) != 0)
		qsort(S->lines, S->nlines, sizeof(*S->lines), cmp_line);
	if (!S->seqs && one_sequence(S)) {
		ds__symbols_free(S);
		return -ENOMEM;
	}
	if (S->nsyms)
		qsort(S->syms, S->nsyms, sizeof(*S->syms), cmp_sym);
	if (S->nsecs)
		qsort(S->secs, S->nsecs, sizeof(*S->secs), cmp_sec);
	/* The interning table is only needed while building. */
	free(S->intern);
	S->intern = NULL;
	S->line_keys = malloc((S->nlines / BLOCK + 1) * sizeof(*S->line_keys));
	S->scope_keys = malloc((S->nscopes / BLOCK + 1) * sizeof(*S->scope_keys));
	if (!S->line_keys || !S->scope_keys) {
		ds__symbols_free(S);
		return -ENOMEM;
	}
	for (size_t i = 0; i < S->nlines; i += BLOCK)
		S->line_keys[i / BLOCK] = S->lines[i].addr;
	for (size_t i = 0; i < S->nscopes; i += BLOCK)
		S->scope_keys[i / BLOCK] = S->scopes[i].lo;
	S->bytes = sizeof(*S) + S->nscopes * sizeof(*S->scopes) +
		   S->nlines * sizeof(*S->lines) + S->nsyms * sizeof(*S->syms) + S->pool_cap +
		   S->nsegs * sizeof(*S->segs) + S->nsecs * sizeof(*S->secs) +
		   (S->nlines / BLOCK + S->nscopes / BLOCK + 2) * sizeof(uint64_t) +
		   S->nseqs * sizeof(*S->seqs);
	if (!S->nscopes && !S->nlines && !S->nsyms) {
		ds__symbols_free(S);
		return -ENOENT;
	}
	*out = S;
	return 0;
}

/* -------------------------------------------------------------- lookup */

static const char *str(const struct ds_symbols *S, uint32_t off)
{
	return off ? S->pool + off : NULL;
}


int ds__symbols_vaddr(const struct ds_symbols *S, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < S->nsegs; i++) {
		const struct segment *sg = &S->segs[i];

		if (offset >= sg->offset && offset - sg->offset < sg->filesz) {
			*vaddr = offset - sg->offset + sg->vaddr;
			return 0;
		}
	}
	return -ERANGE;
}

/* Last entry with key <= addr, or -1. */
#define UPPER(arr, n, field, addr)                                 \
	({                                                         \
		size_t _lo = 0, _hi = (n);                         \
		while (_lo < _hi) {                                \
			size_t _mid = _lo + (_hi - _lo) / 2;       \
			if ((arr)[_mid].field <= (addr))           \
				_lo = _mid + 1;                    \
			else                                       \
				_hi = _mid;                        \
		}                                                  \
		(ptrdiff_t)_lo - 1;                                \
	})

/* Last element with key <= addr, through the sampled keys. */
#define UPPER2(arr, n, keys, field, addr)                                          \
	({                                                                         \
		size_t _lo = 0, _hi = ((n) + BLOCK - 1) / BLOCK, _b, _end;         \
		while (_lo < _hi) {                                                \
			size_t _mid = _lo + (_hi - _lo) / 2;                       \
			if ((keys)[_mid] <= (addr))                                \
				_lo = _mid + 1;                                    \
			else                                                       \
				_hi = _mid;                                        \
		}                                                                  \
		_b = _lo ? (_lo - 1) * BLOCK : 0;                                  \
		_end = _lo ? (_b + BLOCK < (n) ? _b + BLOCK : (n)) : 0;            \
		_lo = _b;                                                          \
		_hi = _end;                                                        \
		while (_lo < _hi) {                                                \
			size_t _mid = _lo + (_hi - _lo) / 2;                       \
			if ((arr)[_mid].field <= (addr))                           \
				_lo = _mid + 1;                                    \
			else                                                       \
				_hi = _mid;                                        \
		}                                                                  \
		(ptrdiff_t)_lo - 1;                                                \
	})

static const struct scope *innermost(const struct ds_symbols *S, uint64_t addr)
{
	ptrdiff_t i = UPPER2(S->scopes, S->nscopes, S->scope_keys, lo, addr);

	/* Ranges nest: if the last one starting at or below addr does not
	 * hold it, any range that does holds that one's start too, so it is
	 * among its ancestors. */
	for (int steps = 0; i >= 0 && steps < MAX_DEPTH; steps++) {
		const struct scope *sc = &S->scopes[i];

		if (addr < sc->hi)
			return sc;
		if (sc->parent == NO_PARENT)
			return NULL;
		i = sc->parent;
	}
	return NULL;
}

/* The last row at or below addr among rows [f, e), which are sorted: the
 * sampled keys of the blocks inside the range first, then one block. */
static ptrdiff_t rows_upper(const struct ds_symbols *S, size_t f, size_t e, uint64_t addr)
{
	size_t kb = (f + BLOCK - 1) / BLOCK, ke = e ? (e - 1) / BLOCK + 1 : 0, lo, hi;

	lo = kb;
	hi = ke > kb ? ke : kb;
	while (lo < hi) { /* last block start in the range with key <= addr */
		size_t mid = lo + (hi - lo) / 2;

		if (S->line_keys[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > kb) { /* within block lo - 1 */
		size_t b = (lo - 1) * BLOCK;

		lo = b;
		hi = b + BLOCK < e ? b + BLOCK : e;
	} else { /* before the first block start of the range */
		lo = f;
		hi = kb * BLOCK < e ? kb * BLOCK : e;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (S->lines[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

static const struct line *line_at(const struct ds_symbols *S, uint64_t addr)
{
	ptrdiff_t q = UPPER(S->seqs, S->nseqs, lo, addr), i;
	const struct seq *sq;

	if (q < 0)
		return NULL;
	sq = &S->seqs[q];
	i = rows_upper(S, sq->first, sq->first + sq->n, addr);
	if (i < (ptrdiff_t)sq->first || S->lines[i].end)
		return NULL;
	/* Several rows at one address: binutils takes the last of them. */
	return &S->lines[i];
}

static const struct section *section_at(const struct ds_symbols *S, uint64_t addr)
{
	ptrdiff_t i = UPPER(S->secs, S->nsecs, lo, addr);

	return i >= 0 && addr < S->secs[i].hi ? &S->secs[i] : NULL;
}

/* binutils: the closest symbol at or below addr in addr's section, its
 * size notwithstanding (so padding after a function is named after it);
 * among symbols at one address, the largest. */
static const struct symbol *symbol_at(const struct ds_symbols *S, uint64_t addr)
{
	const struct section *sec = section_at(S, addr);
	const struct symbol *best = NULL;
	ptrdiff_t i = UPPER(S->syms, S->nsyms, lo, addr);

	if (!sec)
		return NULL;
	for (; i >= 0 && S->syms[i].lo >= sec->lo; i--) {
		const struct symbol *sym = &S->syms[i];

		if (sym->shndx != sec->shndx)
			continue;
		if (best && sym->lo != best->lo)
			break;
		if (!best || sym->size >= best->size)
			best = sym;
	}
	return best;
}

static size_t leading_underscores(const char *name)
{
	size_t n = 0;

	while (name[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol() (tools/perf/util/symbol.c): of two symbols
 * at one address, the one with a size, then not weak, then global, then
 * with fewer leading underscores, then with the longer name; else the one
 * first in the symbol table. */
static bool perf_prefers(const struct ds_symbols *S, const struct symbol *a,
			 const struct symbol *b)
{
	const char *na = str(S, a->name), *nb = str(S, b->name);
	size_t ua, ub, la, lb;

	if (!a->size != !b->size)
		return a->size != 0;
	if ((a->bind == SYM_WEAK) != (b->bind == SYM_WEAK))
		return a->bind != SYM_WEAK;
	if ((a->bind == SYM_GLOBAL) != (b->bind == SYM_GLOBAL))
		return a->bind == SYM_GLOBAL;
	ua = leading_underscores(na);
	ub = leading_underscores(nb);
	if (ua != ub)
		return ua < ub;
	la = strlen(na);
	lb = strlen(nb);
	if (la != lb)
		return la > lb;
	return a->order < b->order;
}

/* The symbol perf report names an address after: of the symbols at the
 * greatest start at or below addr, perf's choice, which holds addr up to
 * its size or, when it has none, up to the next symbol (the last one: to
 * the page after its own; perf's symbols__fixup_end). */
static const struct symbol *perf_symbol_at(const struct ds_symbols *S, uint64_t addr)
{
	ptrdiff_t i = UPPER(S->syms, S->nsyms, lo, addr), j;
	const struct symbol *best;
	uint64_t end;

	if (i < 0)
		return NULL;
	best = &S->syms[i];
	for (j = i - 1; j >= 0 && S->syms[j].lo == best->lo; j--)
		if (perf_prefers(S, &S->syms[j], best))
			best = &S->syms[j];
	if (best->size)
		end = best->lo + best->size;
	else if ((size_t)i + 1 < S->nsyms)
		end = S->syms[i + 1].lo;
	else /* the last one: to the end of its page, and one more */
		end = ((best->lo + 4095) & ~(uint64_t)4095) + 4096;
	return addr < end ? best : NULL;
}

/* The frames of addr, innermost first, through emit; see symindex.h. */
int ds__symbols_find(struct ds_symbols *S, uint64_t addr, unsigned flags, bool *from_symtab,
		     ds__frame_fn emit, void *arg)
{
	const struct scope *sc;
	const struct line *ln;
	int err = 0;

	*from_symtab = false;
	if (flags & DS_SYM_NO_LINES) {
		/* ELF symbols alone, whichever tier S is, so the answer does
		 * not depend on what an earlier query built. */
		const struct symbol *sym =
		    (flags & DS_SYM_ELF_NAMES) ? perf_symbol_at(S, addr) : symbol_at(S, addr);

		if (!sym)
			return 0;
		*from_symtab = true;
		return emit(arg, &(struct ds__raw_frame){ .function = str(S, sym->name),
							  .function_start = sym->lo });
	}
	sc = innermost(S, addr);
	ln = line_at(S, addr);
	if (sc) {
		struct ds__raw_frame f = {
			.file = ln ? str(S, ln->file) : NULL,
			.line = ln ? ln->line : 0,
			.column = ln ? ln->column : 0,
			.discriminator = ln ? ln->discriminator : 0,
		};

		/* Innermost first; each inlined scope's call site is where
		 * its caller (the next frame) is. */
		for (int depth = 0; sc && depth < MAX_DEPTH && !err; depth++) {
			const struct scope *up =
				sc->parent != NO_PARENT ? &S->scopes[sc->parent] : NULL;

			f.function = str(S, sc->name);
			/* binutils: an innermost function whose DWARF name is not
			 * a linkage name (C++ DW_AT_name only) is named after
			 * the ELF symbol that holds the address. */
			if (!depth && !sc->is_linkage && (flags & DS_SYM_BINUTILS)) {
				const struct symbol *sym = symbol_at(S, addr);

				if (sym)
					f.function = str(S, sym->name);
			}
			/* perf: the function holding the address is named after
			 * its ELF symbol. */
			if ((flags & DS_SYM_ELF_NAMES) && !(sc->inlined && up)) {
				const struct symbol *sym = perf_symbol_at(S, addr);

				if (sym)
					f.function = str(S, sym->name);
			}
			f.function_start = sc->lo;
			f.inlined = sc->inlined && up;
			err = emit(arg, &f);
			if (!sc->inlined || !(flags & DS_SYM_INLINES) || !up)
				break;
			f.file = str(S, sc->call_file);
			f.line = sc->call_line;
			f.column = sc->call_column;
			f.discriminator = sc->call_discriminator;
			sc = up;
		}
		return err;
	}
	const struct symbol *sym =
	    (flags & DS_SYM_ELF_NAMES) ? perf_symbol_at(S, addr) : symbol_at(S, addr);

	if (!sym && !ln)
		return 0;
	*from_symtab = sym != NULL;
	return emit(arg, &(struct ds__raw_frame){
				 .function = sym ? str(S, sym->name) : NULL,
				 .function_start = sym ? sym->lo : 0,
				 .file = ln ? str(S, ln->file) : sym ? str(S, sym->file) : NULL,
				 .line = ln ? ln->line : 0,
				 .column = ln ? ln->column : 0,
				 .discriminator = ln ? ln->discriminator : 0,
			 });
}

int ds__symbols_prepare(struct ds_symbols *S, const uint64_t *vaddrs, size_t n)
{
	(void)S;
	(void)vaddrs;
	(void)n;
	return 0; /* the index is built whole today */
}

int ds__symbols_parts(struct ds_symbols *S, struct ds__symbols_parts *out)
{
	(void)S;
	memset(out, 0, sizeof(*out));
	return -ENOSYS; /* not yet: the per-CU index comes next */
}

int ds__symbols_from_parts(const struct ds__symbols_parts *parts, void (*release)(void *),
			   void *arg, struct ds_symbols **out)
{
	(void)parts;
	(void)release;
	(void)arg;
	*out = NULL;
	return -ENOSYS;
}
