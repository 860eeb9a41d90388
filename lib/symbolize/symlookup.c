/* SPDX-License-Identifier: MIT */
/*
 * Queries on the symbol index: a file offset to a virtual address, an
 * address to its ELF symbol, section, and (from the CU that holds it,
 * built on first use by symindex.c) its scopes and line row; and a batch's
 * CUs built ahead, on all cores.
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define CANDIDATES DS__FIND_CANDIDATES

/* -------------------------------------------------------------- lookup */

/* ---- reading a piece
 *
 * A saved piece (P->ck) is checked as it is read, chunk by chunk: a search
 * checks the span of entries it compares against (a block the sampled
 * keys chose, a gallop's last step) before it reads them, a walk up the
 * scopes each scope it visits and the parent it follows; and the strings
 * of an answer up to their NULs, with every pool offset against the pool,
 * before the answer is emitted (frames_ok()).  A search over a span that
 * fails its check still reads only entries of the piece (its indexes come
 * from bounds checked with the head), and sets *dmg: the caller drops what
 * it found and asks again of the CU built from the DWARF.  A built piece
 * has no ck, and costs a test of it. */

static const struct scope bad_scope = { .lo = UINT64_MAX, .parent = NO_PARENT };

/* Entries [lo, hi) of an array of P, each size bytes: checked. */
static inline void guard(const struct piece *P, const void *arr, size_t lo, size_t hi,
			 size_t size, bool *dmg)
{
	if (P->ck && hi > lo &&
	    !ds__chunks_have(P->ck, (const char *)arr + lo * size, (hi - lo) * size))
		*dmg = true;
}

static inline const struct scope *scope_get(const struct piece *P, size_t i, bool *dmg)
{
	const struct scope *sc = &P->scopes[i];

	/* (A good chunk's scopes have parents in the piece.) */
	if (P->ck && !ds__chunks_have(P->ck, sc, sizeof(*sc))) {
		*dmg = true;
		return &bad_scope;
	}
	return sc;
}

/* An entry a search compares against alone (a gallop's step), checked;
 * read all the same (it is in the piece) when its chunk is damaged. */
static inline const void *probe(const struct piece *P, const void *e, size_t size, bool *dmg)
{
	if (P->ck && !ds__chunks_have(P->ck, e, size))
		*dmg = true;
	return e;
}

static const char *str(const char *pool, uint32_t off)
{
	return off ? pool + off : NULL;
}

/* Can P's string at off (0: none) be read, up to its NUL and back to the
 * NUL before it? */
static inline bool str_ok(const struct piece *P, uint32_t off)
{
	return !off || !P->ck || (off < P->pool_len && ds__chunks_have(P->ck, P->pool + off, 1));
}

/* A file name of the line table or of a call site (dwarf_line.c): from
 * the offset, elfutils' path; from the start of the string it is in,
 * binutils'.  (The pool's first byte is NUL, and a saved piece's pool
 * offsets and chunks were checked, back to the NUL before the offset:
 * str_ok().) */
static const char *file_of(const char *pool, uint32_t off, unsigned flags)
{
	if (!off)
		return NULL;
	if (!(flags & DS_SYM_ELFUTILS)) {
		/* Back to the NUL before it, a vector of bytes a step
		 * (memrchr()); the pool's first byte is one. */
		size_t span = off < 128 ? off : 128;
		const char *nul;

		while (!(nul = memrchr(pool + off - span, 0, span))) {
			off -= (uint32_t)span;
			span = off < 4096 ? off : 4096;
			if (!span)
				return pool;
		}
		return nul + 1;
	}
	return pool + off;
}

/* Searches: K is PLAIN for an array read as it is (checked whole, or
 * built here), SCOPE or LINE for a piece's scopes or rows (arr is then the
 * piece, and dmg names the caller's flag): RAW_K reads an entry, PROBE_K
 * reads one checked, GUARD_K checks a span of them. */
#define RAW_PLAIN(arr, i) ((arr)[i])
#define RAW_SCOPE(P, i) ((P)->scopes[i])
#define RAW_LINE(P, i) ((P)->lines[i])
#define PROBE_PLAIN(arr, i) ((arr)[i])
#define PROBE_SCOPE(P, i) \
	(*(const struct scope *)probe((P), &(P)->scopes[i], sizeof(struct scope), dmg))
#define PROBE_LINE(P, i) (*(const struct line *)probe((P), &(P)->lines[i], sizeof(struct line), dmg))
#define GUARD_PLAIN(arr, lo, hi) ((void)0)
#define GUARD_SCOPE(P, lo, hi) guard((P), (P)->scopes, (lo), (hi), sizeof(struct scope), dmg)
#define GUARD_LINE(P, lo, hi) guard((P), (P)->lines, (lo), (hi), sizeof(struct line), dmg)

int ds__symbols_vaddr(const struct ds_symbols *S, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < S->elf.nsegs; i++) {
		const struct segment *sg = &S->elf.segs[i];

		if (offset >= sg->offset && offset - sg->offset < sg->filesz) {
			*vaddr = offset - sg->offset + sg->vaddr;
			return 0;
		}
	}
	return -ERANGE;
}

/* Last entry of [lo, hi) with key <= addr, or lo - 1; unchecked. */
#define UPPER_RAW(K, arr, lo, hi, field, addr)                 \
	({                                                     \
		size_t _rl = (lo), _rh = (hi);                 \
		while (_rl < _rh) {                            \
			size_t _rm = _rl + (_rh - _rl) / 2;    \
			if (RAW_##K(arr, _rm).field <= (addr)) \
				_rl = _rm + 1;                 \
			else                                   \
				_rh = _rm;                     \
		}                                              \
		(ptrdiff_t)_rl - 1;                            \
	})

/* The same, the span checked first. */
#define UPPER_IN(K, arr, lo, hi, field, addr)             \
	({                                                \
		size_t _l0 = (lo), _h0 = (hi);            \
		GUARD_##K(arr, _l0, _h0);                 \
		UPPER_RAW(K, arr, _l0, _h0, field, addr); \
	})

/* Last entry with key <= addr, or -1. */
#define UPPER(arr, n, field, addr) UPPER_RAW(PLAIN, arr, 0, n, field, addr)

/* Last element with key <= addr, through the sampled keys (checked with
 * the head): one block of the array, checked, searched. */
#define UPPER2(K, arr, n, keys, field, addr)                               \
	({                                                                 \
		size_t _kl = 0, _kh = ((n) + BLOCK - 1) / BLOCK, _b, _end; \
		while (_kl < _kh) {                                        \
			size_t _km = _kl + (_kh - _kl) / 2;                \
			if ((keys)[_km] <= (addr))                         \
				_kl = _km + 1;                             \
			else                                               \
				_kh = _km;                                 \
		}                                                          \
		_b = _kl ? (_kl - 1) * BLOCK : 0;                          \
		_end = _kl ? (_b + BLOCK < (n) ? _b + BLOCK : (n)) : 0;    \
		UPPER_IN(K, arr, _b, _end, field, addr);                   \
	})

/* UPPER, from a guess h: the entries a caller's sorted lookups land on
 * move forward, usually by little, so a search gallops ahead from the last
 * answer (steps 1, 2, 4, ...) and ends with a binary search of the last
 * step; where h is past addr (unsorted lookups), a whole search.  Each
 * step's entry is checked, and the last step's span. */
#define GALLOP(K, arr, n, field, addr, h, whole)                                                \
	({                                                                                      \
		size_t _n = (n), _g = (h);                                                      \
		ptrdiff_t _r;                                                                   \
		if (_g >= _n || PROBE_##K(arr, _g).field > (addr)) {                            \
			_r = (whole);                                                           \
		} else {                                                                        \
			size_t _step = 1, _end;                                                 \
			while (_g + _step < _n && PROBE_##K(arr, _g + _step).field <= (addr)) { \
				_g += _step;                                                    \
				_step *= 2;                                                     \
			}                                                                       \
			_end = _g + _step < _n ? _g + _step : _n;                               \
			_r = UPPER_IN(K, arr, _g, _end, field, addr);                           \
		}                                                                               \
		_r;                                                                             \
	})

/* Rows (24 bytes) and scopes (48) ahead of a guess that a scan reads one
 * after the other before a search takes over: a sorted batch's next
 * address is most often that close, and reading in order lets the
 * hardware's prefetch run ahead where a gallop's and a binary search's
 * probes each wait for the one before. */
#define SCAN_ROWS 32
#define SCAN_SCOPES 16

/* The last scope starting at or below addr, from the guess h as
 * rows_from() does: a scan, then a gallop; -1 when scope h is past addr. */
static ptrdiff_t scopes_from(const struct piece *P, size_t h, uint64_t addr, bool *dmg)
{
	size_t n = P->nscopes, end = h + SCAN_SCOPES < n ? h + SCAN_SCOPES : n, i;

	GUARD_SCOPE(P, h, end);
	if (P->scopes[h].lo > addr)
		return -1;
	for (i = h + 1; i < end && P->scopes[i].lo <= addr; i++)
		;
	if (i < end || end == n)
		return (ptrdiff_t)i - 1;
	return GALLOP(SCOPE, P, n, lo, addr, end - 1, -1);
}

static const struct scope *innermost(const struct piece *P, uint64_t addr, size_t *hint,
				     bool *dmg)
{
	ptrdiff_t i = *hint < P->nscopes ? scopes_from(P, *hint, addr, dmg) : -1;

	if (i < 0)
		i = UPPER2(SCOPE, P, P->nscopes, P->scope_keys, lo, addr);

	if (i >= 0)
		*hint = (size_t)i;

	/* Ranges nest: if the last one starting at or below addr does not
	 * hold it, any range that does holds that one's start too, so it is
	 * among its ancestors. */
	for (int steps = 0; i >= 0 && steps < MAX_DEPTH && !*dmg; steps++) {
		const struct scope *sc = scope_get(P, (size_t)i, dmg);

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
static ptrdiff_t rows_upper(const struct piece *P, size_t f, size_t e, uint64_t addr, bool *dmg)
{
	size_t kb = (f + BLOCK - 1) / BLOCK, ke = e ? (e - 1) / BLOCK + 1 : 0, lo, hi;

	lo = kb;
	hi = ke > kb ? ke : kb;
	while (lo < hi) { /* last block start in the range with key <= addr */
		size_t mid = lo + (hi - lo) / 2;

		if (P->line_keys[mid] <= addr)
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
	return UPPER_IN(LINE, P, lo, hi, addr, addr);
}

/* The last row at or below addr among rows [h, e) of one sequence, from
 * the guess h (the row of the address before, in a sorted batch): -1 when
 * row h is past addr.  Rows are read in order for SCAN_ROWS (a sorted
 * neighbour is most often that close), then found through the keys. */
static ptrdiff_t rows_from(const struct piece *P, size_t h, size_t e, uint64_t addr, bool *dmg)
{
	size_t end = h + SCAN_ROWS < e ? h + SCAN_ROWS : e, i;

	GUARD_LINE(P, h, end);
	if (P->lines[h].addr > addr)
		return -1;
	/* (Four rows a step while the fourth is at or below addr: sorted,
	 * so are the three before it.) */
	for (i = h + 1; i + 4 <= end && P->lines[i + 3].addr <= addr; i += 4)
		;
	for (; i < end && P->lines[i].addr <= addr; i++)
		;
	if (i < end || end == e)
		return (ptrdiff_t)i - 1;
	return rows_upper(P, end - 1, e, addr, dmg);
}

static const struct line *line_at(const struct piece *P, uint64_t addr, size_t *seq_hint,
				  size_t *hint, bool *dmg)
{
	size_t h = *seq_hint;
	/* (Most often the sequence of the address before.) */
	ptrdiff_t q = h < P->nseqs && P->seqs[h].lo <= addr &&
				      (h + 1 == P->nseqs || P->seqs[h + 1].lo > addr)
			      ? (ptrdiff_t)h
			      : GALLOP(PLAIN, P->seqs, P->nseqs, lo, addr, h,
				       UPPER(P->seqs, P->nseqs, lo, addr)),
		  i;
	const struct line *ln;
	const struct seq *sq;
	size_t f, e;

	if (q < 0)
		return NULL;
	*seq_hint = (size_t)q;
	sq = &P->seqs[q];
	f = sq->first;
	e = f + sq->n;
	/* (The guess only within this sequence: rows are sorted per
	 * sequence.) */
	i = *hint >= f && *hint < e ? rows_from(P, *hint, e, addr, dmg) : -1;
	if (i < (ptrdiff_t)f)
		i = rows_upper(P, f, e, addr, dmg);
	/* (Row i lies in the span the search checked.) */
	if (i < (ptrdiff_t)f || (ln = &P->lines[i])->end)
		return NULL;
	*hint = (size_t)i;
	/* Several rows at one address: binutils takes the last of them. */
	return ln;
}

static const struct section *section_at(const struct elf_piece *E, uint64_t addr)
{
	ptrdiff_t i = UPPER(E->secs, E->nsecs, lo, addr);

	return i >= 0 && addr < E->secs[i].hi ? &E->secs[i] : NULL;
}

/* binutils: the closest symbol at or below addr in addr's section, its
 * size notwithstanding (so padding after a function is named after it);
 * among symbols at one address, the largest.  With held (elfutils): that
 * symbol only if it holds addr, as eu-stack and gdb (and llvm-symbolizer)
 * take it (an address past a function's end, in padding or in code of no
 * symbol, is "??"): a symbol with a size holds [start, start + size), one
 * of size 0 (assembler code without .size) everything up to the next
 * symbol, as in all three. */
static const struct symbol *symbol_at(const struct elf_piece *E, uint64_t addr, bool held)
{
	const struct section *sec = section_at(E, addr);
	const struct symbol *best = NULL;
	ptrdiff_t i = UPPER(E->syms, E->nsyms, lo, addr);

	if (!sec)
		return NULL;
	for (; i >= 0 && E->syms[i].lo >= sec->lo; i--) {
		const struct symbol *sym = &E->syms[i];

		if (sym->shndx != sec->shndx)
			continue;
		if (best && sym->lo != best->lo)
			break;
		if (!best || sym->size >= best->size)
			best = sym;
	}
	if (best && held && best->size && addr - best->lo >= best->size)
		return NULL;
	return best;
}

/* Without a line row, the file of the STT_FILE a symbol is under:
 * binutils' answer for any symbol (_bfd_elf_find_function; "" for an
 * empty one: ":?"), and perf's, whose srcline is addr2line's;
 * llvm-symbolizer 14's for a local symbol only, an empty one none ("??");
 * eu-stack and gdb name no file there. */
static const char *symbol_file(const struct elf_piece *E, const struct symbol *sym,
			       unsigned flags)
{
	const char *f = str(E->pool, sym->file);

	if (flags & (DS_SYM_BINUTILS | DS_SYM_ELF_NAMES))
		return f;
	if ((flags & DS_SYM_ELFUTILS) || sym->bind != SYM_LOCAL || !f || !*f)
		return NULL;
	return f;
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
static bool perf_prefers(const struct elf_piece *E, const struct symbol *a,
			 const struct symbol *b)
{
	const char *na = str(E->pool, a->name) ?: "", *nb = str(E->pool, b->name) ?: "";
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
static const struct symbol *perf_symbol_at(const struct elf_piece *E, uint64_t addr)
{
	ptrdiff_t i = UPPER(E->syms, E->nsyms, lo, addr), j;
	const struct symbol *best;
	uint64_t end;

	if (i < 0)
		return NULL;
	best = &E->syms[i];
	for (j = i - 1; j >= 0 && E->syms[j].lo == best->lo; j--)
		if (perf_prefers(E, &E->syms[j], best))
			best = &E->syms[j];
	if (best->size)
		end = best->lo + best->size;
	else if ((size_t)i + 1 < E->nsyms)
		end = E->syms[i + 1].lo;
	else /* the last one: to the end of its page, and one more */
		end = ((best->lo + 4095) & ~(uint64_t)4095) + 4096;
	return addr < end ? best : NULL;
}

/* The CUs whose ranges hold addr, the one with the greatest start first:
 * up to CANDIDATES.  *until (may be NULL): the same CUs hold every
 * address from addr up to it (addr itself when that is not known). */
static size_t units_at(const struct ds_symbols *S, uint64_t addr, uint32_t *out, size_t *hint,
		       uint64_t *until)
{
	ptrdiff_t i = GALLOP(PLAIN, S->ranges, S->nranges, lo, addr, *hint,
			     UPPER(S->ranges, S->nranges, lo, addr));
	/* A larger address may fall in the next range, or past the end of
	 * one that held this one; ranges that ended below addr stay out. */
	uint64_t end = (size_t)(i + 1) < S->nranges ? S->ranges[i + 1].lo : UINT64_MAX;
	size_t n = 0;

	if (i >= 0)
		*hint = (size_t)i;
	for (; i >= 0 && S->range_maxhi[i] > addr; i--) {
		bool seen = false;

		if (addr >= S->ranges[i].hi)
			continue;
		if (n == CANDIDATES) { /* more than are looked into */
			end = addr;
			break;
		}
		if (S->ranges[i].hi < end)
			end = S->ranges[i].hi;
		for (size_t k = 0; k < n; k++)
			seen |= out[k] == S->ranges[i].cu;
		if (!seen)
			out[n++] = S->ranges[i].cu;
	}
	if (until)
		*until = end;
	return n;
}

/* The DWARF at addr: the innermost scope and the line row, both of one
 * CU (*scp == *lnp).  Several CUs claim an address where the linker folded
 * identical functions (ICF, COMDAT copies of one inline function) or where
 * a CU's range is wider than its code: the first of them in .debug_info
 * order that has a scope or a row there answers, as in binutils (the
 * first unit that finds a line or a function) and LLVM (the CU of the
 * lowest offset among those whose ranges cover it).  Scopes of one CU and
 * rows of another would make up frames no program has. */
/* For a saved piece: all that the frames of sc and ln will read, checked
 * first (emitting them then cannot meet damage halfway).  false: damaged. */
static bool frames_ok(const struct piece *P, const struct scope *sc, const struct line *ln,
		      unsigned flags)
{
	bool dmg = false;

	if (ln && !str_ok(P, ln->file))
		return false;
	for (int depth = 0; sc && depth < MAX_DEPTH && !dmg; depth++) {
		if (!str_ok(P, sc->name))
			return false;
		if (!sc->inlined || !(flags & DS_SYM_INLINES) || sc->parent == NO_PARENT)
			break;
		if (!str_ok(P, sc->call_file))
			return false;
		sc = scope_get(P, sc->parent, &dmg);
	}
	return !dmg;
}

static int dwarf_at(struct ds_symbols *S, uint64_t addr, unsigned flags, struct ds__find_hint *H,
		    const struct piece **scp, const struct scope **sc, const struct piece **lnp,
		    const struct line **ln)
{
	uint32_t *cus = H->cus;
	size_t n;
	int retries = 0;

	*sc = NULL;
	*ln = NULL;
	if (addr >= H->units_from && addr < H->units_until) {
		n = H->ncus; /* the CUs of the address before (a sorted batch's) */
	} else {
		n = S->nranges ? units_at(S, addr, cus, &H->range, &H->units_until) : 0;
		H->units_from = addr;
		H->ncus = (uint32_t)n;
		H->unit = NULL;
		/* In unit order (insertion sort: n is small). */
		for (size_t k = 1; k < n; k++)
			for (size_t j = k; j && cus[j - 1] > cus[j]; j--) {
				uint32_t t = cus[j];

				cus[j] = cus[j - 1];
				cus[j - 1] = t;
			}
	}
	for (size_t k = 0; k < n && !*sc && !*ln; k++) {
		int err = 0;
		/* One CU: its piece as got for the address before, which
		 * stays readable for the caller's call (a piece rebuilt
		 * meanwhile is read by later calls). */
		const struct piece *P =
			n == 1 && H->unit ? H->unit : ds__symbols_unit_get(S, cus[k], &err);
		bool dmg = false;

		if (err)
			return err;
		if (!P)
			continue;
		if (n == 1)
			H->unit = P;
		if (P != H->piece) {
			H->piece = P;
			H->seq = H->scope = H->row = SIZE_MAX;
		}
		*sc = innermost(P, addr, &H->scope, &dmg);
		*ln = line_at(P, addr, &H->seq, &H->row, &dmg);
		if (P->ck && (dmg || ((*sc || *ln) && !frames_ok(P, *sc, *ln, flags)))) {
			/* Damaged: asked again of the CU built from its DWARF
			 * (a built piece has no ck: once; twice at most, should
			 * another thread have moved the CU meanwhile). */
			ds__symbols_unit_damaged(S, cus[k], P);
			H->unit = NULL;
			*sc = NULL;
			*ln = NULL;
			if (++retries <= 2)
				k--;
			continue;
		}
		*scp = *lnp = P;
	}
	return 0;
}

/* file_of() of the line row's file, through the hint: a sorted batch's
 * neighbours are mostly in one file (binutils' path is found back to the
 * start of its string, some 60 instructions). */
static const char *row_file(struct ds__find_hint *H, const char *pool, uint32_t off,
			    unsigned flags)
{
	if (H->file_pool != pool || H->file_off != off || H->file_flags != flags) {
		H->file = file_of(pool, off, flags);
		H->file_pool = pool;
		H->file_off = off;
		H->file_flags = flags;
	}
	return H->file;
}

/* Whether lookups may read entry e of P (size bytes): checked, when P is
 * a saved piece.  (A bound below only reads; damage is found by the
 * lookups themselves.) */
static inline bool readable(const struct piece *P, const void *e, size_t size)
{
	return !P->ck || ds__chunks_have(P->ck, e, size);
}

/* How far past addr the DWARF answer dwarf_at() just gave stays the same:
 * the next address at which the innermost scope, the line row, the CU or
 * binutils' ELF symbol may change (addr: not known).  P's scope H->scope
 * is the last starting at or below addr, of which sc is the innermost
 * holding it; its row H->row is the last at or below addr in its
 * sequence H->seq.  Scopes nest, so one that did not hold addr holds no
 * later address, and sc holds up to its end.  *frames_until: up to where
 * the scopes, the CU and the sequence stay (only the row may change),
 * when no ELF symbol names the innermost frame; 0 otherwise. */
static uint64_t same_until(const struct ds_symbols *S, const struct piece *P,
			   const struct ds__find_hint *H, const struct scope *sc, uint64_t addr,
			   unsigned flags, uint64_t *frames_until)
{
	uint64_t until = H->units_until < sc->hi ? H->units_until : sc->hi;
	size_t i = H->scope, r = H->row, q = H->seq;

	*frames_until = 0;
	if (H->ncus != 1 || i >= P->nscopes || r + 1 >= P->nlines || q >= P->nseqs ||
	    (flags & DS_SYM_ELF_NAMES))
		return addr;
	if (i + 1 < P->nscopes) {
		if (!readable(P, &P->scopes[i + 1], sizeof(P->scopes[i + 1])))
			return addr;
		if (P->scopes[i + 1].lo < until)
			until = P->scopes[i + 1].lo;
	}
	/* (The row at or below addr is no sequence's end, so the next row
	 * is in its sequence.) */
	if (!readable(P, &P->lines[r + 1], sizeof(P->lines[r + 1])))
		return addr;
	if (q + 1 < P->nseqs && P->seqs[q + 1].lo < until)
		until = P->seqs[q + 1].lo;
	if (sc->is_linkage || !(flags & DS_SYM_BINUTILS))
		*frames_until = until;
	if (P->lines[r + 1].addr < until)
		until = P->lines[r + 1].addr;
	if (!sc->is_linkage && (flags & DS_SYM_BINUTILS)) {
		/* symbol_at(): the same section, the same last symbol at or
		 * below. */
		const struct elf_piece *E = &S->elf;
		ptrdiff_t k = UPPER(E->secs, E->nsecs, lo, addr),
			  j = UPPER(E->syms, E->nsyms, lo, addr);

		if (k < 0 || addr >= E->secs[k].hi)
			return addr;
		if (E->secs[k].hi < until)
			until = E->secs[k].hi;
		if ((size_t)k + 1 < E->nsecs && E->secs[k + 1].lo < until)
			until = E->secs[k + 1].lo;
		if ((size_t)(j + 1) < E->nsyms && E->syms[j + 1].lo < until)
			until = E->syms[j + 1].lo;
	}
	return until > addr ? until : addr;
}

/* The quick way to the frames of addr, when H kept the frames of an
 * address before it in [H->frames_from, H->frames_until) (flags as
 * then): the scopes are the same, in the same sequence of rows, so the
 * frames are too but the innermost's row, found from the row before.
 * false: not taken (addr below that row, an end row, a damaged span or
 * string: the whole lookup decides); else *err is emit's return, or 0. */
static bool frames_again(struct ds__find_hint *H, uint64_t addr, unsigned flags,
			 ds__frame_fn emit, void *arg, int *err)
{
	const struct piece *P = H->piece;
	const struct seq *sq = &P->seqs[H->seq];
	size_t f = sq->first, e = f + sq->n;
	struct ds__raw_frame f0;
	const struct line *ln;
	bool dmg = false;
	uint64_t until;
	ptrdiff_t i;

	if (H->row < f || H->row >= e)
		return false;
	i = rows_from(P, H->row, e, addr, &dmg);
	if (i < (ptrdiff_t)f || dmg)
		return false;
	ln = &P->lines[i];
	/* (Its next row: same_until()'s reading.) */
	if (ln->end || !str_ok(P, ln->file) || (size_t)i + 1 >= P->nlines ||
	    !readable(P, &P->lines[i + 1], sizeof(P->lines[i + 1])))
		return false;
	H->row = (size_t)i;
	until = P->lines[i + 1].addr < H->frames_until ? P->lines[i + 1].addr : H->frames_until;
	f0 = H->frames[0];
	f0.file = row_file(H, P->pool, ln->file, flags);
	f0.line = ln->line;
	f0.column = ln->column;
	f0.discriminator = ln->discriminator;
	*err = emit(arg, &f0);
	for (unsigned k = 1; k < H->nframes && !*err; k++)
		*err = emit(arg, &H->frames[k]);
	if (!*err)
		H->same_until = until > addr ? until : addr;
	return true;
}

/* The frames of addr, innermost first, through emit; see symindex.h. */
int ds__symbols_find(struct ds_symbols *S, uint64_t addr, unsigned flags,
		     struct ds__find_hint *hint, bool *from_symtab, ds__frame_fn emit, void *arg)
{
	struct ds__find_hint none;
	const struct elf_piece *E = &S->elf;
	const struct piece *scp = NULL, *lnp = NULL;
	const struct scope *sc;
	const struct line *ln;
	const struct symbol *sym;
	int err = 0;

	*from_symtab = false;
	if (hint)
		hint->same_until = addr;
	if (flags & DS_SYM_NO_LINES) {
		/* ELF symbols alone, whichever tier S is, so the answer does
		 * not depend on what an earlier query built. */
		sym = (flags & DS_SYM_ELF_NAMES) ? perf_symbol_at(E, addr)
						 : symbol_at(E, addr, flags & DS_SYM_ELFUTILS);
		if (!sym)
			return 0;
		*from_symtab = true;
		return emit(arg, &(struct ds__raw_frame){ .function = str(E->pool, sym->name),
							  .function_start = sym->lo });
	}
	if (!hint) {
		hint = &none;
		none.S = NULL;
	}
	if (hint->S != S)
		*hint = (struct ds__find_hint){ .S = S };
	hint->same_until = addr;
	if (addr >= hint->frames_from && addr < hint->frames_until && flags == hint->frames_flags &&
	    frames_again(hint, addr, flags, emit, arg, &err))
		return err;
	hint->frames_until = 0;
	err = dwarf_at(S, addr, flags, hint, &scp, &sc, &lnp, &ln);
	if (err)
		return err;
	if (sc) {
		uint64_t frames_until = 0;
		/* (Known only where one CU answered, scope and row.) */
		uint64_t until = ln && scp == hint->piece ? same_until(S, scp, hint, sc, addr, flags,
								       &frames_until)
							 : addr;
		unsigned nframes = 0;

		/* (What these read was checked: frames_ok().) */
		struct ds__raw_frame f = {
			.file = ln ? row_file(hint, lnp->pool, ln->file, flags) : NULL,
			.line = ln ? ln->line : 0,
			.column = ln ? ln->column : 0,
			.discriminator = ln ? ln->discriminator : 0,
		};

		/* Innermost first; each inlined scope's call site is where
		 * its caller (the next frame) is. */
		for (int depth = 0; sc && depth < MAX_DEPTH && !err; depth++) {
			const struct scope *up =
				sc->parent != NO_PARENT ? &scp->scopes[sc->parent] : NULL;

			f.function = str(scp->pool, sc->name);
			/* binutils: an innermost function whose DWARF name is not
			 * a linkage name (C++ DW_AT_name only) is named after
			 * the ELF symbol that holds the address, and without a
			 * line row there its file is the symbol's too (the
			 * STT_FILE before it: _bfd_elf_find_function). */
			if (!depth && !sc->is_linkage && (flags & DS_SYM_BINUTILS)) {
				sym = symbol_at(E, addr, false);
				if (sym) {
					f.function = str(E->pool, sym->name);
					if (!ln)
						f.file = str(E->pool, sym->file);
				}
			}
			/* perf: the function holding the address is named after
			 * its ELF symbol. */
			if ((flags & DS_SYM_ELF_NAMES) && !(sc->inlined && up)) {
				sym = perf_symbol_at(E, addr);
				if (sym)
					f.function = str(E->pool, sym->name);
			}
			f.function_start = sc->lo;
			f.inlined = sc->inlined && up;
			if (nframes < DS__FIND_FRAMES)
				hint->frames[nframes] = f;
			nframes++;
			err = emit(arg, &f);
			if (!sc->inlined || !(flags & DS_SYM_INLINES) || !up)
				break;
			f.file = file_of(scp->pool, sc->call_file, flags);
			f.line = sc->call_line;
			f.column = sc->call_column;
			f.discriminator = sc->call_discriminator;
			sc = up;
		}
		if (!err) {
			hint->same_until = until;
			if (frames_until > addr && nframes <= DS__FIND_FRAMES) {
				hint->frames_from = addr;
				hint->frames_until = frames_until;
				hint->frames_flags = flags;
				hint->nframes = nframes;
			}
		}
		return err;
	}
	/* No DWARF function here: binutils name the address after the symbol
	 * below it whatever its size; eu-stack, gdb and llvm-symbolizer 14
	 * (the library's default, LLVM and JSON styles) only after one that
	 * holds it. */
	sym = (flags & DS_SYM_ELF_NAMES) ? perf_symbol_at(E, addr)
					 : symbol_at(E, addr, !(flags & DS_SYM_BINUTILS));
	if (!sym && !ln)
		return 0;
	*from_symtab = sym != NULL;
	return emit(arg, &(struct ds__raw_frame){
				 .function = sym ? str(E->pool, sym->name) : NULL,
				 .function_start = sym ? sym->lo : 0,
				 .file = ln    ? file_of(lnp->pool, ln->file, flags)
					 : sym ? symbol_file(E, sym, flags)
					       : NULL,
				 .line = ln ? ln->line : 0,
				 .column = ln ? ln->column : 0,
				 .discriminator = ln ? ln->discriminator : 0,
			 });
}


int ds__symbols_prepare(struct ds_symbols *S, const uint64_t *vaddrs, size_t n)
{
	uint8_t *want = NULL;
	size_t nwant = 0, range_hint = SIZE_MAX;
	bool done;
	int err = 0;

	/* (Every CU built: the common case, and no lock on this per-call
	 * path.) */
	if (!S->ncus || !n || atomic_load(&S->built) == S->ncus)
		return 0;
	pthread_mutex_lock(&S->mu);
	done = S->complete || (!S->dwarf && !S->go);
	pthread_mutex_unlock(&S->mu);
	if (!done) {
		want = calloc(S->ncus, 1);
		if (!want)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			uint32_t cus[CANDIDATES];
			size_t k = units_at(S, vaddrs[i], cus, &range_hint, NULL);

			while (k--)
				if (!want[cus[k]] && atomic_load(&S->cus[cus[k]].state) == CU_NEW) {
					want[cus[k]] = 1;
					nwant++;
				}
		}
		/* Most of them: all of them (and the index can be saved). */
		if (nwant > S->ncus / 4 + 1)
			err = ds__symbols_build_units(S, NULL, S->ncus);
		else if (nwant)
			err = ds__symbols_build_units(S, want, nwant);
		free(want);
	}
	return err;
}
