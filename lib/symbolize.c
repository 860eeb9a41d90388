/* SPDX-License-Identifier: MIT */
/*
 * Symbolization: address -> function, file:line:column, inline frames.
 *
 * libdw reads the DWARF once, when a DSO is first asked; what we keep is
 * our own index, independent of libdw afterwards (its strings are copied
 * into one pool), so the Dwarf is closed right after the build:
 *   - scopes: one entry per address range of every function and inlined
 *     instance, sorted by start, each knowing its enclosing scope.  Ranges
 *     nest, so the innermost scope of an address is the last range that
 *     starts at or below it, or the first of its ancestors that contains
 *     it;
 *   - lines: every line-table row of every CU, sorted by address;
 *   - symbols: ELF symbols (.symtab, else .gnu_debugdata's, else .dynsym)
 *     for addresses no DWARF function covers.
 * A lookup is two binary searches and a short walk up the scope chain.
 * (libdw's own per-address path, what eu-addr2line does, walks DIEs for
 * every address: ~0.8 ms each with inlines.)
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NO_PARENT UINT32_MAX
#define MAX_DEPTH 256
#ifndef DW_AT_GNU_discriminator
#define DW_AT_GNU_discriminator 0x2136 /* gcc; not in elfutils 0.188 dwarf.h */
#endif /* inline nesting we follow; deeper DWARF is cut */
#define MINIDEBUG_MAX (64u << 20) /* decompressed .gnu_debugdata */
#define LINES_RESERVE_MAX (4u << 20) /* rows reserved up front (96 MB) */
#define NULL_SYMS_MAX 4096u /* all-zero symbols in a row that end a table */

/* libstdc++'s demangler (the issue allows it; binutils has its own). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct scope {
	uint64_t lo, hi;
	uint32_t parent; /* enclosing scope's entry, or NO_PARENT */
	uint32_t name; /* offset in the pool, 0: none */
	uint32_t call_file; /* pool offset of the caller's file (inlined) */
	uint32_t call_line;
	uint32_t call_discriminator; /* DW_AT_GNU_discriminator of the call */
	uint16_t call_column;
	uint8_t inlined;
	uint8_t depth;
	uint8_t is_linkage; /* the name is what binutils calls a linkage name */
};

struct line {
	uint64_t addr;
	uint32_t file; /* pool offset */
	uint32_t line;
	uint32_t discriminator;
	uint16_t column;
	uint8_t end; /* end of a sequence: no line from here */
};

struct symbol {
	uint64_t lo, size;
	uint32_t name;
	uint32_t file; /* the STT_FILE it is under, as binutils reports it */
	uint32_t shndx;
	uint32_t order : 30; /* in the symbol table: ties keep it */
	uint32_t bind : 2; /* SYM_LOCAL, SYM_GLOBAL, SYM_WEAK */
};

enum { SYM_LOCAL, SYM_GLOBAL, SYM_WEAK };

struct section {
	uint64_t lo, hi;
	uint32_t shndx;
};

struct segment {
	uint64_t offset, filesz, vaddr;
};

#define BLOCK 64 /* rows per entry of the sampled key arrays */

/* A sequence of line rows: a sorted run [first, first + n) covering
 * addresses [lo, hi]. */
struct seq {
	size_t first, n;
	uint64_t lo, hi;
};

struct ds_symbols {
	struct scope *scopes;
	size_t nscopes, scap;
	struct line *lines;
	size_t nlines, lcap;
	/* Every BLOCK-th address of lines and scopes: a search first narrows
	 * to a block in this small array, which stays in cache, then looks
	 * at one block of the large one. */
	uint64_t *line_keys, *scope_keys;
	/* Line rows stay where they were read, sequence by sequence; these
	 * say in which order (by address) the sequences come. */
	struct seq *seqs;
	size_t nseqs;
	struct symbol *syms;
	size_t nsyms, symcap;
	struct segment *segs;
	size_t nsegs;
	struct section *secs;
	size_t nsecs, seccap;
	char *pool;
	size_t pool_len, pool_cap;
	/* Interning: open addressing over pool offsets. */
	uint32_t *intern;
	size_t intern_cap, intern_used;
	uint64_t bytes;
};

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
static uint32_t intern(struct ds_symbols *S, const char *s)
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

static const char *str(const struct ds_symbols *S, uint32_t off)
{
	return off ? S->pool + off : NULL;
}

#define GROW(S, arr, n, cap)                                                     \
	({                                                                       \
		int _err = 0;                                                    \
		if ((S)->n == (S)->cap) {                                        \
			size_t _c = (S)->cap ? 2 * (S)->cap : 1024;              \
			void *_p = realloc((S)->arr, _c * sizeof(*(S)->arr));    \
			if (_p) {                                                \
				(S)->arr = _p;                                   \
				(S)->cap = _c;                                   \
			} else {                                                 \
				_err = -ENOMEM;                                  \
			}                                                        \
		}                                                                \
		_err;                                                            \
	})

/* ----------------------------------------------------------- DWARF walk */

/* DW_AT_linkage_name (what binutils prints), else DW_AT_name, following
 * abstract_origin and specification.  *linkage: binutils' is_linkage, a
 * linkage name or a plain name in a language without mangling. */
static const char *die_name(Dwarf_Die *die, bool mangled_lang, bool *linkage)
{
	Dwarf_Attribute attr;
	const char *name;

	*linkage = true;
	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) &&
	    (name = dwarf_formstring(&attr)))
		return name;
	*linkage = !mangled_lang;
	return dwarf_diename(die) ?: (dwarf_attr_integrate(die, DW_AT_name, &attr)
					      ? dwarf_formstring(&attr)
					      : NULL);
}

/* binutils' mangle_style(): the languages whose names are mangled. */
static bool mangled_language(Dwarf_Die *cu)
{
	switch (dwarf_srclang(cu)) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
	case DW_LANG_ObjC_plus_plus:
	case DW_LANG_Java:
	case DW_LANG_D:
	case DW_LANG_Rust:
		return true;
	default:
		return false;
	}
}

struct walk {
	struct ds_symbols *S;
	bool mangled_lang;
	/* The CU's file table: ours (pool offsets) when we read its line
	 * program, else libdw's. */
	uint32_t *fileoff;
	size_t nfileoff;
	Dwarf_Files *files;
	size_t nfiles;
};

static uint32_t file_name(struct walk *w, Dwarf_Word idx)
{
	const char *name;

	if (w->fileoff)
		return idx < w->nfileoff ? w->fileoff[idx] : 0;
	if (!w->files || idx >= w->nfiles)
		return 0;
	name = dwarf_filesrc(w->files, idx, NULL, NULL);
	return intern(w->S, name);
}

/* Which entry of the enclosing scope's ranges holds lo. */
static uint32_t parent_piece(const struct ds_symbols *S, uint32_t first, uint32_t count,
			     uint64_t lo)
{
	for (uint32_t i = first; i < first + count; i++)
		if (S->scopes[i].lo <= lo && lo < S->scopes[i].hi)
			return i;
	return NO_PARENT; /* outside its caller: broken DWARF, keep it apart */
}

static int add_scope(struct walk *w, Dwarf_Die *die, bool inlined, uint32_t pfirst,
		     uint32_t pcount, uint8_t depth, uint32_t *first, uint32_t *count)
{
	struct ds_symbols *S = w->S;
	bool linkage;
	uint32_t name = intern(S, die_name(die, w->mangled_lang, &linkage));
	Dwarf_Addr base, lo, hi;
	Dwarf_Attribute attr;
	Dwarf_Word file = 0, line = 0, col = 0, disc = 0;
	ptrdiff_t off = 0;

	if (inlined) {
		if (dwarf_attr(die, DW_AT_call_file, &attr))
			dwarf_formudata(&attr, &file);
		if (dwarf_attr(die, DW_AT_call_line, &attr))
			dwarf_formudata(&attr, &line);
		if (dwarf_attr(die, DW_AT_call_column, &attr))
			dwarf_formudata(&attr, &col);
		if (dwarf_attr(die, DW_AT_GNU_discriminator, &attr))
			dwarf_formudata(&attr, &disc);
	}
	*first = (uint32_t)S->nscopes;
	*count = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		struct scope *sc;

		if (lo >= hi || lo == 0)
			continue; /* empty, or code --gc-sections dropped (at 0) */
		if (GROW(S, scopes, nscopes, scap))
			return -ENOMEM;
		sc = &S->scopes[S->nscopes++];
		sc->lo = lo;
		sc->hi = hi;
		/* A function nested in another (GNU C) has code of its own
		 * elsewhere: only inlined instances have an enclosing scope. */
		sc->parent = inlined && pcount ? parent_piece(S, pfirst, pcount, lo) : NO_PARENT;
		sc->name = name;
		sc->inlined = inlined;
		sc->depth = depth;
		sc->is_linkage = linkage;
		sc->call_file = inlined ? file_name(w, file) : 0;
		sc->call_line = (uint32_t)line;
		sc->call_discriminator = (uint32_t)disc;
		sc->call_column = (uint16_t)(col > UINT16_MAX ? 0 : col);
		(*count)++;
	}
	return 0;
}

/* Depth-first over a CU, keeping the innermost enclosing function or
 * inlined instance (its ranges) for each level. */
static int walk_cu(struct walk *w, Dwarf_Die *cu)
{
	struct level {
		Dwarf_Die die;
		uint32_t first, count; /* the enclosing scope's ranges */
		uint8_t depth;
	} stack[MAX_DEPTH];
	int sp = 0, err = 0;

	if (dwarf_child(cu, &stack[0].die) != 0)
		return 0;
	stack[0].first = 0;
	stack[0].count = 0;
	stack[0].depth = 0;
	while (sp >= 0 && !err) {
		struct level *lv = &stack[sp];
		Dwarf_Die *die = &lv->die;
		uint32_t first = lv->first, count = lv->count;
		uint8_t depth = lv->depth;
		int tag = dwarf_tag(die);
		bool descend;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			uint32_t f, c;

			err = add_scope(w, die, tag == DW_TAG_inlined_subroutine, first, count,
					depth, &f, &c);
			if (c) {
				first = f;
				count = c;
				depth = tag == DW_TAG_subprogram ? 1 : depth < 255 ? depth + 1 : depth;
			}
		}
		/* Functions, blocks and namespaces hold scopes, and so do
		 * classes: the code of a local class's methods (a lambda's
		 * operator()) is described inside the class inside the
		 * function.  Variables and other types do not. */
		descend = tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
			  tag == DW_TAG_lexical_block || tag == DW_TAG_namespace ||
			  tag == DW_TAG_try_block || tag == DW_TAG_catch_block ||
			  tag == DW_TAG_module || tag == DW_TAG_structure_type ||
			  tag == DW_TAG_class_type || tag == DW_TAG_union_type;
		if (descend && sp + 1 < MAX_DEPTH &&
		    dwarf_child(die, &stack[sp + 1].die) == 0) {
			stack[sp + 1].first = first;
			stack[sp + 1].count = count;
			stack[sp + 1].depth = depth;
			sp++;
			continue;
		}
		/* Next sibling, climbing as levels run out. */
		while (sp >= 0 && dwarf_siblingof(&stack[sp].die, &stack[sp].die) != 0)
			sp--;
	}
	return err;
}

static int add_lines(struct walk *w, Dwarf_Die *cu)
{
	struct ds_symbols *S = w->S;
	/* Rows name their file by a pointer into libdw's file table: intern
	 * each pointer once, not each row's string (600k rows, ~100 files). */
	struct {
		const char *src;
		uint32_t off;
	} seen[64] = { { 0 } };
	Dwarf_Lines *lines;
	size_t n;

	if (dwarf_getsrclines(cu, &lines, &n) != 0)
		return 0; /* a CU without a line table */
	if (S->nlines + n > S->lcap) {
		size_t cap = S->lcap ? S->lcap : 1024;
		struct line *p;

		while (cap < S->nlines + n)
			cap *= 2;
		p = realloc(S->lines, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		S->lines = p;
		S->lcap = cap;
	}
	for (size_t i = 0, first = S->nlines; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		bool end = false;
		int lineno = 0, col = 0;
		unsigned int disc = 0;
		struct line *row;

		if (!l || dwarf_lineaddr(l, &addr) != 0)
			continue;
		dwarf_lineendsequence(l, &end);
		dwarf_lineno(l, &lineno);
		dwarf_linecol(l, &col);
		dwarf_linediscriminator(l, &disc);
		if (GROW(S, lines, nlines, lcap))
			return -ENOMEM;
		row = &S->lines[S->nlines++];
		row->addr = addr;
		row->end = end;
		if (!end) {
			const char *src = dwarf_linesrc(l, NULL, NULL);
			size_t slot = ((uintptr_t)src >> 4) % 64;

			if (seen[slot].src != src) {
				seen[slot].src = src;
				seen[slot].off = intern(S, src);
			}
			row->file = seen[slot].off;
		} else {
			row->file = 0;
		}
		row->line = lineno > 0 ? (uint32_t)lineno : 0;
		row->column = col > 0 && col <= UINT16_MAX ? (uint16_t)col : 0;
		row->discriminator = disc;
		/* A sequence whose last row sits at its end address (a
		 * zero-length row, as gcc emits just before
		 * DW_LNE_end_sequence): libdw 0.188 sorts that row after the
		 * end, where it would never end.  binutils and LLVM give it no
		 * extent: make it an end. */
		if (S->nlines - first >= 3 && !end) {
			const struct line *e = row - 1, *before = row - 2;

			if (e->end && e->addr == row->addr && !before->end &&
			    before->line == row->line && before->file == row->file) {
				row->end = 1;
				row->file = 0;
			}
		}
	}
	return 0;
}

/* ------------------------------------------------- the line programs */

/*
 * Our own reader of .debug_line (DWARF 2 to 5): libdw's dwarf_getsrclines()
 * allocates and sorts a record per row, which on an 18 MB binary with 600k
 * rows was most of the index build.  Rows are appended in program order,
 * sequence by sequence; order_sequences() then orders the sequences.
 * Every read is bounded by the section; a malformed program ends that CU's
 * rows, never the build.  File names are joined as binutils does: a
 * relative name under its directory, a relative directory under the CU's
 * comp_dir.
 */
struct sections {
	const unsigned char *line, *line_str, *str;
	size_t line_size, line_str_size, str_size;
	uint64_t info_size; /* for messages */
	/* Line programs already read (offsets), so that CUs sharing one do
	 * not multiply its rows. */
	uint64_t *done;
	size_t ndone, donecap;
	uint64_t max_done;
};

static bool first_time(struct sections *sec, uint64_t off)
{
	if (sec->ndone && off <= sec->max_done) /* rare: out of order or shared */
		for (size_t i = 0; i < sec->ndone; i++)
			if (sec->done[i] == off)
				return false;
	if (sec->ndone == sec->donecap) {
		size_t cap = sec->donecap ? 2 * sec->donecap : 64;
		uint64_t *d = realloc(sec->done, cap * sizeof(*d));

		if (!d)
			return true; /* at worst, rows twice */
		sec->done = d;
		sec->donecap = cap;
	}
	sec->done[sec->ndone++] = off;
	if (off > sec->max_done)
		sec->max_done = off;
	return true;
}

struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t rd(struct cursor *c, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	for (size_t i = 0; i < n; i++) /* little-endian: x86, arm64, riscv... */
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t uleb(struct cursor *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		unsigned char b = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return v;
}

static int64_t sleb(struct cursor *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	unsigned char b = 0x80;

	while (c->p < c->end && (b & 0x80)) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	}
	if (b & 0x80)
		c->bad = true;
	else if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

static const char *cstr(struct cursor *c)
{
	const unsigned char *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
	const char *s = (const char *)c->p;

	if (!nul) {
		c->bad = true;
		c->p = c->end;
		return NULL;
	}
	c->p = nul + 1;
	return s;
}

static const char *str_at(const unsigned char *sec, size_t size, uint64_t off)
{
	if (!sec || off >= size || !memchr(sec + off, 0, size - off))
		return NULL;
	return (const char *)sec + off;
}

/* One DWARF 5 entry (directory or file): its path and directory index. */
static bool read_entry(struct cursor *c, const struct sections *sec, const uint64_t *fmt,
		       size_t nfmt, bool dwarf64, const char **path, uint64_t *dir)
{
	*path = NULL;
	*dir = 0;
	for (size_t k = 0; k < nfmt; k++) {
		uint64_t type = fmt[2 * k], form = fmt[2 * k + 1], v = 0;
		const char *sv = NULL;

		switch (form) {
		case DW_FORM_string:
			sv = cstr(c);
			break;
		case DW_FORM_line_strp:
			sv = str_at(sec->line_str, sec->line_str_size, rd(c, dwarf64 ? 8 : 4));
			break;
		case DW_FORM_strp:
			sv = str_at(sec->str, sec->str_size, rd(c, dwarf64 ? 8 : 4));
			break;
		case DW_FORM_udata:
			v = uleb(c);
			break;
		case DW_FORM_data1:
			v = rd(c, 1);
			break;
		case DW_FORM_data2:
			v = rd(c, 2);
			break;
		case DW_FORM_data4:
			v = rd(c, 4);
			break;
		case DW_FORM_data8:
			v = rd(c, 8);
			break;
		case DW_FORM_data16:
			rd(c, 8);
			rd(c, 8);
			break;
		case DW_FORM_block: {
			uint64_t len = uleb(c);

			if (len > (uint64_t)(c->end - c->p))
				c->bad = true;
			else
				c->p += len;
			break;
		}
		default:
			return false; /* a form we cannot size: give up on this CU */
		}
		if (type == DW_LNCT_path)
			*path = sv;
		else if (type == DW_LNCT_directory_index)
			*dir = v;
	}
	return !c->bad;
}

/* A DWARF 5 entry list's header: up to 16 (content type, form) pairs, then
 * the count.  Each entry takes at least a byte, so a count larger than
 * what is left, or entries of no fields, is malformed. */
static bool entry_formats(struct cursor *c, uint64_t fmt[2 * 16], uint64_t *nfmt,
			  uint64_t *count)
{
	*nfmt = rd(c, 1);
	if (*nfmt > 16)
		return false;
	for (uint64_t k = 0; k < 2 * *nfmt; k++)
		fmt[k] = uleb(c);
	*count = uleb(c);
	return !c->bad && *nfmt && *count <= (uint64_t)(c->end - c->p);
}

struct names {
	const char **v;
	size_t n, cap;
};

static bool names_add(struct names *nm, const char *s)
{
	if (nm->n == nm->cap) {
		size_t cap = nm->cap ? 2 * nm->cap : 32;
		const char **v = realloc(nm->v, cap * sizeof(*v));

		if (!v)
			return false;
		nm->v = v;
		nm->cap = cap;
	}
	nm->v[nm->n++] = s;
	return true;
}

/* binutils' concat_filename(). */
static uint32_t file_path(struct ds_symbols *S, const char *name, const char *dir,
			  const char *comp_dir)
{
	char buf[4096];

	if (!name)
		return 0;
	if (name[0] == '/' || !dir)
		return intern(S, name);
	if (dir[0] != '/' && comp_dir && *comp_dir)
		snprintf(buf, sizeof(buf), "%s/%s/%s", comp_dir, dir, name);
	else
		snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return intern(S, buf);
}

static int emit_row(struct ds_symbols *S, uint64_t addr, bool end, uint32_t file, uint64_t line,
		    uint64_t col, uint64_t disc)
{
	struct line *row;

	if (GROW(S, lines, nlines, lcap))
		return -ENOMEM;
	row = &S->lines[S->nlines++];
	row->addr = addr;
	row->end = end;
	row->file = file;
	row->line = line > UINT32_MAX ? 0 : (uint32_t)line;
	row->column = col > UINT16_MAX ? 0 : (uint16_t)col;
	row->discriminator = disc > UINT32_MAX ? 0 : (uint32_t)disc;
	return 0;
}

static int read_line_program(struct walk *w, const struct sections *sec, uint64_t off,
			     const char *comp_dir, bool rows)
{
	struct ds_symbols *S = w->S;
	struct names dirs = { 0 };
	uint32_t *fileoff = NULL;
	struct cursor c, prog;
	uint64_t unit_len, hdr_len, nfiles = 0;
	unsigned version, min_inst, line_range, opcode_base, default_stmt;
	int line_base, err = 0;
	bool dwarf64 = false;
	unsigned char std_len[256] = { 0 };

	if (!sec->line || off >= sec->line_size)
		return 0;
	c = (struct cursor){ sec->line + off, sec->line + sec->line_size, false };
	unit_len = rd(&c, 4);
	if (unit_len == 0xffffffff) {
		dwarf64 = true;
		unit_len = rd(&c, 8);
	}
	if (c.bad || unit_len > (uint64_t)(c.end - c.p))
		return 0;
	c.end = c.p + unit_len;
	version = (unsigned)rd(&c, 2);
	if (version < 2 || version > 5)
		return 0;
	if (version >= 5) {
		rd(&c, 1); /* address size: set_address says it again */
		rd(&c, 1); /* segment selector size */
	}
	hdr_len = rd(&c, dwarf64 ? 8 : 4);
	if (c.bad || hdr_len > (uint64_t)(c.end - c.p))
		return 0;
	prog = (struct cursor){ c.p + hdr_len, c.end, false };
	min_inst = (unsigned)rd(&c, 1);
	if (version >= 4)
		rd(&c, 1); /* maximum operations per instruction: VLIW only */
	default_stmt = (unsigned)rd(&c, 1);
	line_base = (int8_t)rd(&c, 1);
	line_range = (unsigned)rd(&c, 1);
	opcode_base = (unsigned)rd(&c, 1);
	(void)default_stmt;
	if (c.bad || !line_range || !opcode_base)
		return 0;
	for (unsigned i = 1; i < opcode_base; i++)
		std_len[i] = (unsigned char)rd(&c, 1);

	if (version < 5) {
		size_t fcap = 16;
		const char *d;

		/* Directory 0 is the compilation directory; files count from 1. */
		if (!names_add(&dirs, comp_dir))
			goto nomem;
		while ((d = cstr(&c)) && *d)
			if (!names_add(&dirs, d))
				goto nomem;
		fileoff = calloc(fcap, sizeof(*fileoff));
		if (!fileoff)
			goto nomem;
		nfiles = 1;
		while ((d = cstr(&c)) && *d) {
			uint64_t di = uleb(&c);

			uleb(&c); /* mtime */
			uleb(&c); /* length */
			if (nfiles == fcap) {
				uint32_t *nf = realloc(fileoff, 2 * fcap * sizeof(*nf));

				if (!nf)
					goto nomem;
				fileoff = nf;
				fcap *= 2;
			}
			fileoff[nfiles++] =
				file_path(S, d, di < dirs.n ? dirs.v[di] : NULL, comp_dir);
		}
	} else {
		uint64_t fmt[2 * 16], nfmt, count;

		if (!entry_formats(&c, fmt, &nfmt, &count))
			goto done;
		for (uint64_t i = 0; i < count && !c.bad; i++) {
			const char *path;
			uint64_t di;

			if (!read_entry(&c, sec, fmt, nfmt, dwarf64, &path, &di))
				goto done;
			/* Directory 0 is the compilation directory itself. */
			if (!names_add(&dirs, path))
				goto nomem;
		}
		if (!entry_formats(&c, fmt, &nfmt, &count))
			goto done;
		fileoff = calloc(count ? count : 1, sizeof(*fileoff));
		if (!fileoff)
			goto nomem;
		for (uint64_t i = 0; i < count; i++) {
			const char *path;
			uint64_t di;

			if (!read_entry(&c, sec, fmt, nfmt, dwarf64, &path, &di))
				goto done;
			fileoff[i] = file_path(S, path, di < dirs.n ? dirs.v[di] : NULL, comp_dir);
			nfiles = i + 1;
		}
	}

	/* The state machine (once per program: CUs may share one). */
	if (rows) {
		uint64_t addr = 0, file = 1, line = 1, col = 0, disc = 0;
		size_t seq_first = S->nlines;

#define EMIT(is_end)                                                                   \
	do {                                                                           \
		if (emit_row(S, addr, (is_end),                                        \
			     (is_end) || file >= nfiles ? 0 : fileoff[file], line, col, disc)) \
			goto nomem;                                                    \
		disc = 0;                                                              \
	} while (0)

		while (prog.p < prog.end && !prog.bad) {
			unsigned op = (unsigned)rd(&prog, 1);

			if (op >= opcode_base) {
				unsigned adj = op - opcode_base;

				addr += (uint64_t)(adj / line_range) * min_inst;
				line += (int64_t)line_base + (int64_t)(adj % line_range);
				EMIT(0);
				continue;
			}
			switch (op) {
			case 0: { /* extended */
				uint64_t len = uleb(&prog);
				const unsigned char *next;
				unsigned sub;

				if (!len || len > (uint64_t)(prog.end - prog.p)) {
					prog.bad = true;
					break;
				}
				next = prog.p + len;
				sub = (unsigned)rd(&prog, 1);
				if (sub == DW_LNE_end_sequence) {
					EMIT(1);
					/* Rows at the end address are zero-length:
					 * binutils and LLVM give them no extent. */
					for (size_t k = S->nlines - 1;
					     k-- > seq_first && S->lines[k].addr == addr;) {
						S->lines[k].end = 1;
						S->lines[k].file = 0;
					}
					/* Code --gc-sections dropped sits at 0: not ours. */
					if (S->lines[seq_first].addr == 0)
						S->nlines = seq_first;
					seq_first = S->nlines;
					addr = 0;
					file = 1;
					line = 1;
					col = 0;
					disc = 0;
				} else if (sub == DW_LNE_set_address) {
					addr = rd(&prog, len - 1 > 8 ? 8 : len - 1);
				} else if (sub == DW_LNE_set_discriminator) {
					disc = uleb(&prog);
				}
				prog.p = next;
				break;
			}
			case DW_LNS_copy:
				EMIT(0);
				break;
			case DW_LNS_advance_pc:
				addr += uleb(&prog) * min_inst;
				break;
			case DW_LNS_advance_line:
				line += sleb(&prog);
				break;
			case DW_LNS_set_file:
				file = uleb(&prog);
				break;
			case DW_LNS_set_column:
				col = uleb(&prog);
				break;
			case DW_LNS_const_add_pc:
				addr += (uint64_t)((255 - opcode_base) / line_range) * min_inst;
				break;
			case DW_LNS_fixed_advance_pc:
				addr += rd(&prog, 2);
				break;
			case DW_LNS_negate_stmt:
			case DW_LNS_set_basic_block:
			case DW_LNS_set_prologue_end:
			case DW_LNS_set_epilogue_begin:
				break;
			default: /* set_isa and unknown: skip their operands */
				for (unsigned k = 0; k < std_len[op]; k++)
					uleb(&prog);
				break;
			}
		}
		/* A program cut short: drop its unfinished sequence. */
		S->nlines = seq_first;
#undef EMIT
	}
	goto done;
nomem:
	err = -ENOMEM;
done:
	free(dirs.v);
	/* The file table stays for the CU's DIEs (DW_AT_call_file). */
	free(w->fileoff);
	w->fileoff = fileoff;
	w->nfileoff = nfiles;
	return err;
}

static void find_sections(Elf *elf, struct sections *sec)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	memset(sec, 0, sizeof(*sec));
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".debug_info"))
			sec->info_size = sh.sh_size;
		if (!name || (strcmp(name, ".debug_line") && strcmp(name, ".debug_line_str") &&
			      strcmp(name, ".debug_str")))
			continue;
		/* dwarf_begin_elf() has decompressed SHF_COMPRESSED sections. */
		if ((sh.sh_flags & SHF_COMPRESSED) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		if (!strcmp(name, ".debug_line")) {
			sec->line = d->d_buf;
			sec->line_size = d->d_size;
		} else if (!strcmp(name, ".debug_line_str")) {
			sec->line_str = d->d_buf;
			sec->line_str_size = d->d_size;
		} else {
			sec->str = d->d_buf;
			sec->str_size = d->d_size;
		}
	}
}

/* This CU's rows and file table: our reader when the sections are plain
 * little-endian ELF, else libdw's (whose dwarf_getsrcfiles() would parse
 * the whole program too). */
static int cu_lines(struct walk *w, Dwarf_Die *cu, struct sections *sec)
{
	Dwarf_Attribute attr;
	Dwarf_Word off;
	const char *comp_dir = NULL;

	if (!sec->line || !dwarf_attr(cu, DW_AT_stmt_list, &attr) ||
	    dwarf_formudata(&attr, &off) != 0) {
		if (dwarf_getsrcfiles(cu, &w->files, &w->nfiles) != 0)
			w->files = NULL;
		return add_lines(w, cu);
	}
	if (dwarf_attr(cu, DW_AT_comp_dir, &attr))
		comp_dir = dwarf_formstring(&attr);
	return read_line_program(w, sec, off, comp_dir, first_time(sec, off));
}

/* dwarf_next_unit() answers for any bytes: zeros read as a unit of
 * length 0 and version 0, whose successor is 4 bytes on.  A header that
 * cannot be a unit (a version outside 2..5, no address size, a length that
 * does not cover its own header) ends the scan: the next unit's offset
 * comes from this one's length, so nothing after it can be trusted.  (A
 * 4 GiB .debug_info of zeros was a billion dwarf_offdie() calls: a minute
 * and 4 GB.) */
static bool unit_header_ok(Dwarf_Off off, Dwarf_Off next, size_t hsize, Dwarf_Half version,
			   uint8_t addr_size)
{
	return version >= 2 && version <= 5 && addr_size && addr_size <= 8 && next > off &&
	       next - off > hsize;
}

static int walk_dwarf(struct ds_context *ctx, const char *name, struct ds_symbols *S, Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int err = 0;

	struct sections sec;
	Elf *elf = dwarf_getelf(dw);
	GElf_Ehdr ehdr;

	find_sections(elf, &sec);
	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_ident[EI_DATA] != ELFDATA2LSB)
		sec.line = NULL; /* big-endian: libdw reads it */
	/* A row takes 2 to 6 bytes of line program: reserve once (pages not
	 * written cost nothing) rather than copy the array while it grows.
	 * Not for more than LINES_RESERVE_MAX rows: the section's size is
	 * only what its header says (a hole of zeros has no rows), and
	 * 4 GiB of it would ask for 32 GB. */
	if (sec.line_size / 3 > S->lcap) {
		size_t want = sec.line_size / 3 < LINES_RESERVE_MAX ? sec.line_size / 3
								     : LINES_RESERVE_MAX;
		struct line *p = want > S->lcap ? realloc(S->lines, want * sizeof(*p)) : NULL;

		if (p) {
			S->lines = p;
			S->lcap = want;
		}
	}
	while (!err) {
		struct walk w = { .S = S };
		Dwarf_Half version;
		uint8_t addr_size, off_size;
		Dwarf_Die cu;
		int rc = dwarf_next_unit(dw, off, &next, &hsize, &version, NULL, &addr_size,
					 &off_size, NULL, NULL);

		if (rc == 1)
			break; /* the end */
		if (rc != 0) {
			ds_debug(ctx, "%s: .debug_info offset 0x%llx: %s: the CU scan stops there",
				 name, (unsigned long long)off, dwarf_errmsg(-1));
			break;
		}
		if (!unit_header_ok(off, next, hsize, version, addr_size)) {
			ds_debug(ctx,
				 "%s: .debug_info offset 0x%llx is no unit header (version %u, "
				 "address size %u, length %llu): the CU scan stops there, "
				 "%llu bytes unread",
				 name, (unsigned long long)off, version, addr_size,
				 (unsigned long long)(next - off - (off_size == 8 ? 12 : 4)),
				 (unsigned long long)(sec.info_size > off ? sec.info_size - off : 0));
			break;
		}
		if (dwarf_offdie(dw, off + hsize, &cu)) {
			w.mangled_lang = mangled_language(&cu);
			err = cu_lines(&w, &cu, &sec);
			if (!err)
				err = walk_cu(&w, &cu);
			free(w.fileoff);
		}
		off = next;
	}
	free(sec.done);
	return err;
}

/* ------------------------------------------------------------ ELF symbols */

/* Allocated sections: a symbol names an address only in its own section
 * (binutils' rule). */
static int read_sections(struct ds_symbols *S, Elf *elf)
{
	Elf_Scn *scn = NULL;

	S->nsecs = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || !sh.sh_size)
			continue;
		if (GROW(S, secs, nsecs, seccap))
			return -ENOMEM;
		S->secs[S->nsecs].lo = sh.sh_addr;
		S->secs[S->nsecs].hi = sh.sh_addr + sh.sh_size;
		S->secs[S->nsecs].shndx = (uint32_t)elf_ndxscn(scn);
		S->nsecs++;
	}
	return 0;
}

/* Only entry 0 of a symbol table is all zeros; a run of NULL_SYMS_MAX
 * such entries is a hole, not symbols, and ends the table: a 4 GiB .symtab
 * of zeros was 178 million entries read, 15 s and every page of it
 * resident. */
static bool null_sym(const GElf_Sym *sym)
{
	return !sym->st_name && !sym->st_info && !sym->st_other && !sym->st_shndx &&
	       !sym->st_value && !sym->st_size;
}

static int add_symtab(struct ds_context *ctx, const char *elf_name, struct ds_symbols *S,
		      Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	int added = 0;

	if (read_sections(S, elf))
		return -ENOMEM;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n, nulls = 0;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		/* binutils names the file of a symbol after the last STT_FILE
		 * before it: always for a local, for a global only if no other
		 * symbol came between the file symbol and the start. */
		uint32_t file = 0;
		enum { NOTHING, SYMBOL, FILE_AFTER_SYMBOL } state = NOTHING;

		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			int st;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			if (null_sym(&sym)) {
				if (++nulls < NULL_SYMS_MAX)
					continue;
				ds_debug(ctx,
					 "%s: %s: %u null symbols in a row up to entry %zu: the "
					 "other %zu entries are not read",
					 elf_name, type == SHT_DYNSYM ? ".dynsym" : ".symtab",
					 NULL_SYMS_MAX, i, n - i - 1);
				break;
			}
			nulls = 0;
			st = GELF_ST_TYPE(sym.st_info);
			if (st == STT_FILE) {
				file = intern(S, elf_strptr(elf, sh.sh_link, sym.st_name));
				if (state == SYMBOL)
					state = FILE_AFTER_SYMBOL;
				continue;
			}
			if (state == NOTHING && i > 0)
				state = SYMBOL;
			if ((st != STT_FUNC && st != STT_GNU_IFUNC && st != STT_NOTYPE) ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name || (st == STT_NOTYPE && name[0] == '.'))
				continue;
			if (st == STT_NOTYPE && !strncmp(name, "$", 1))
				continue; /* mapping symbols */
			if (GROW(S, syms, nsyms, symcap))
				return -ENOMEM;
			S->syms[S->nsyms].lo = sym.st_value;
			S->syms[S->nsyms].size = sym.st_size;
			S->syms[S->nsyms].name = intern(S, name);
			S->syms[S->nsyms].shndx = sym.st_shndx;
			S->syms[S->nsyms].order = (uint32_t)S->nsyms & ((1u << 30) - 1);
			S->syms[S->nsyms].bind = GELF_ST_BIND(sym.st_info) == STB_GLOBAL ? SYM_GLOBAL
						 : GELF_ST_BIND(sym.st_info) == STB_WEAK ? SYM_WEAK
											   : SYM_LOCAL;
			S->syms[S->nsyms].file = GELF_ST_BIND(sym.st_info) == STB_LOCAL ||
							 state != FILE_AFTER_SYMBOL
						 ? file
						 : 0;
			S->nsyms++;
			added++;
		}
	}
	return added;
}

/* MiniDebugInfo: an xz-compressed ELF holding a .symtab. */
static int add_minidebuginfo(struct ds_context *ctx, const char *elf_name, struct ds_symbols *S,
			     Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;
		uint64_t memlimit = 256u << 20;
		size_t in_pos = 0, out_pos = 0, out_cap = 1 << 20;
		unsigned char *out = NULL;
		lzma_ret ret;
		Elf *mini;
		int added;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".gnu_debugdata"))
			continue;
		data = elf_rawdata(scn, NULL);
		if (!data || !data->d_size)
			return 0;
		/* Grow the output until it fits; bounded. */
		for (;;) {
			unsigned char *nb = realloc(out, out_cap);

			if (!nb) {
				free(out);
				return -ENOMEM;
			}
			out = nb;
			in_pos = out_pos = 0;
			ret = lzma_stream_buffer_decode(&memlimit, 0, NULL, data->d_buf, &in_pos,
							data->d_size, out, &out_pos, out_cap);
			if (ret != LZMA_BUF_ERROR || out_cap >= MINIDEBUG_MAX)
				break;
			out_cap *= 4;
		}
		if (ret != LZMA_OK) {
			free(out);
			return 0; /* not xz, or corrupt: no names from it */
		}
		mini = elf_memory((char *)out, out_pos);
		added = mini ? add_symtab(ctx, elf_name, S, mini, SHT_SYMTAB) : 0;
		if (mini)
			elf_end(mini);
		free(out);
		return added;
	}
	return 0;
}

static int read_segments(struct ds_symbols *S, Elf *elf)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0 || !phnum)
		return 0;
	free(S->segs);
	S->nsegs = 0;
	S->segs = calloc(phnum, sizeof(*S->segs));
	if (!S->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			S->segs[S->nsegs].offset = ph.p_offset;
			S->segs[S->nsegs].filesz = ph.p_filesz;
			S->segs[S->nsegs].vaddr = ph.p_vaddr;
			S->nsegs++;
		}
	}
	return 0;
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

/* dwarf_begin_elf() decompresses every compressed DWARF section into a
 * buffer of the size its header claims: refuse the whole DWARF of a file
 * where one claim is out of proportion (its ELF symbols still answer). */
static bool dwarf_plausible(struct ds_context *ctx, Elf *elf, const char *name)
{
	char msg[256];

	if (ds__elf_check_compressed(elf, msg, sizeof(msg)) == 0)
		return true;
	ds_warn(ctx, "%s: %s; its DWARF is not read", name, msg);
	return false;
}

/* Open the dwz alt file named by .gnu_debugaltlink, found by its build ID
 * like any debuginfo (locally, then debuginfod). */
static void attach_alt(struct ds_context *ctx, Dwarf *dw, struct ds_found *alt)
{
	const char *name;
	const void *bid_bytes;
	struct ds_build_id bid = { 0 };
	ssize_t n = dwelf_dwarf_gnu_debugaltlink(dw, &name, &bid_bytes);
	Dwarf *altdw;

	if (n <= 0 || n > DS_BUILD_ID_MAX)
		return;
	bid.size = (uint8_t)n;
	memcpy(bid.data, bid_bytes, (size_t)n);
	if (ds__locate(ctx, &bid, NULL, DS_ARTIFACT_DEBUGINFO, alt, NULL) != 0 &&
	    ds__fetch_found(ctx, &bid, alt, NULL) != 0) {
		ds_warn(ctx, "dwz alt file %s not found: names in it stay unknown", name);
		return;
	}
	if (!dwarf_plausible(ctx, alt->elf, alt->path))
		return;
	altdw = dwarf_begin_elf(alt->elf, DWARF_C_READ, NULL);
	if (altdw)
		dwarf_setalt(dw, altdw);
}

/* Build the index from a debuginfo ELF (may be NULL) and the binary itself
 * (may be NULL); their names (paths) are for messages.  Neither is kept:
 * the index copies what it needs. */
int ds__symbols_build(struct ds_context *ctx, Elf *debug, const char *debug_name, Elf *binary,
		      const char *binary_name, struct ds_symbols **out)
{
	struct ds_symbols *S = calloc(1, sizeof(*S));
	struct ds_found alt = { .fd = -1 };
	int err = 0;

	if (!S)
		return -ENOMEM;
	if (!debug_name)
		debug_name = "debuginfo";
	if (!binary_name)
		binary_name = "binary";
	if (debug) {
		Dwarf *dw = dwarf_plausible(ctx, debug, debug_name)
				    ? dwarf_begin_elf(debug, DWARF_C_READ, NULL)
				    : NULL;

		if (dw) {
			attach_alt(ctx, dw, &alt);
			err = walk_dwarf(ctx, debug_name, S, dw);
			if (dwarf_getalt(dw) && alt.elf)
				dwarf_end(dwarf_getalt(dw));
			dwarf_end(dw);
		}
		ds__found_release(&alt);
		if (!err && add_symtab(ctx, debug_name, S, debug, SHT_SYMTAB) < 0)
			err = -ENOMEM;
	}
	/* Segments from the binary when there is one: objcopy
	 * --only-keep-debug rewrites the debug file's offsets, and file
	 * offsets (perf's) are the binary's. */
	if (!err && binary)
		err = read_segments(S, binary);
	if (!err && debug && !S->nsegs)
		err = read_segments(S, debug);
	if (!err && binary) {
		if (!S->nsyms)
			err = add_symtab(ctx, binary_name, S, binary, SHT_SYMTAB) < 0 ? -ENOMEM : 0;
		if (!err && !S->nsyms)
			err = add_minidebuginfo(ctx, binary_name, S, binary) < 0 ? -ENOMEM : 0;
		if (!err && !S->nsyms)
			err = add_symtab(ctx, binary_name, S, binary, SHT_DYNSYM) < 0 ? -ENOMEM : 0;
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

/* --------------------------------------------------------------- lookup */

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

/* Room for frames and their strings, in one allocation pair. */
struct builder {
	struct ds_sym_result *res;
	size_t cap;
	struct ds_strbuf sb;
	/* Offsets into sb of each frame's strings (sb may move). */
	size_t *fn_off, *file_off;
};

/* Append s and its NUL; returns its offset (SIZE_MAX: none or no memory). */
static size_t keep(struct builder *b, const char *s, bool demangle)
{
	struct ds_strbuf *sb = &b->sb;
	char *dm = NULL;
	size_t off = SIZE_MAX, len;
	int status;

	if (!s)
		return SIZE_MAX;
	if (demangle && s[0] == '_' && s[1] == 'Z')
		dm = __cxa_demangle(s, NULL, NULL, &status);
	if (dm)
		s = dm;
	len = strlen(s) + 1;
	if (sb->len + len > sb->cap) {
		size_t cap = (sb->len + len) * 2 < 256 ? 256 : (sb->len + len) * 2;
		char *nb = realloc(sb->buf, cap);

		if (!nb)
			goto out;
		sb->buf = nb;
		sb->cap = cap;
	}
	memcpy(sb->buf + sb->len, s, len);
	off = sb->len;
	sb->len += len;
out:
	free(dm);
	return off;
}

static int add_frame(struct builder *b, const char *fn, uint64_t start, const char *file,
		     unsigned line, unsigned col, unsigned disc, bool inlined, bool demangle)
{
	struct ds_sym_result *r = b->res;

	if (r->nframes == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4;
		struct ds_frame *f = realloc(r->frames, cap * sizeof(*f));
		size_t *fo = realloc(b->fn_off, cap * sizeof(*fo));
		size_t *fi;

		if (f)
			r->frames = f;
		if (fo)
			b->fn_off = fo;
		fi = realloc(b->file_off, cap * sizeof(*fi));
		if (fi)
			b->file_off = fi;
		if (!f || !fo || !fi)
			return -ENOMEM;
		b->cap = cap;
	}
	r->frames[r->nframes] = (struct ds_frame){
		.function_start = start,
		.line = line,
		.column = col,
		.discriminator = disc,
		.inlined = inlined,
	};
	b->fn_off[r->nframes] = keep(b, fn, demangle);
	b->file_off[r->nframes] = keep(b, file, false);
	r->nframes++;
	return 0;
}

int ds__symbols_lookup(const struct ds_symbols *S, uint64_t addr, unsigned flags,
		       struct ds_sym_result *res)
{
	bool dm = flags & DS_SYM_DEMANGLE;
	struct builder b = { .res = res };
	const struct scope *sc;
	const struct line *ln;
	int err = 0;

	memset(res, 0, sizeof(*res));
	res->addr = addr;
	sc = innermost(S, addr);
	ln = line_at(S, addr);
	if (sc) {
		const char *file = ln ? str(S, ln->file) : NULL;
		unsigned line = ln ? ln->line : 0, col = ln ? ln->column : 0;
		unsigned disc = ln ? ln->discriminator : 0;

		/* Innermost first; each inlined scope's call site is where
		 * its caller (the next frame) is. */
		for (int depth = 0; sc && depth < MAX_DEPTH && !err; depth++) {
			const struct scope *up =
				sc->parent != NO_PARENT ? &S->scopes[sc->parent] : NULL;
			const char *name = str(S, sc->name);

			/* binutils: an innermost function whose DWARF name is not
			 * a linkage name (C++ DW_AT_name only) is named after
			 * the ELF symbol that holds the address. */
			if (!depth && !sc->is_linkage && (flags & DS_SYM_BINUTILS)) {
				const struct symbol *sym = symbol_at(S, addr);

				if (sym)
					name = str(S, sym->name);
			}
			/* perf: the function holding the address is named after
			 * its ELF symbol. */
			if ((flags & DS_SYM_ELF_NAMES) && !(sc->inlined && up)) {
				const struct symbol *sym = perf_symbol_at(S, addr);

				if (sym)
					name = str(S, sym->name);
			}
			err = add_frame(&b, name, sc->lo, file, line, col, disc,
					sc->inlined && up, dm);
			if (!sc->inlined || !(flags & DS_SYM_INLINES) || !up)
				break;
			file = str(S, sc->call_file);
			line = sc->call_line;
			col = sc->call_column;
			disc = sc->call_discriminator;
			sc = up;
		}
	} else {
		const struct symbol *sym = (flags & DS_SYM_ELF_NAMES) ? perf_symbol_at(S, addr)
								      : symbol_at(S, addr);

		if (sym || ln) {
			res->from_symtab = sym != NULL;
			err = add_frame(&b, sym ? str(S, sym->name) : NULL, sym ? sym->lo : 0,
					ln ? str(S, ln->file) : sym ? str(S, sym->file) : NULL,
					ln ? ln->line : 0,
					ln ? ln->column : 0, ln ? ln->discriminator : 0, false, dm);
		}
	}
	if (!err && b.sb.len) {
		/* Strings are final: point the frames into them. */
		res->_strings = b.sb.buf;
		b.sb.buf = NULL;
		for (size_t i = 0; i < res->nframes; i++) {
			res->frames[i].function =
				b.fn_off[i] == SIZE_MAX ? NULL : res->_strings + b.fn_off[i];
			res->frames[i].file =
				b.file_off[i] == SIZE_MAX ? NULL : res->_strings + b.file_off[i];
		}
	}
	ds__strbuf_release(&b.sb);
	free(b.fn_off);
	free(b.file_off);
	if (err)
		ds_sym_result_release(res);
	return err;
}

DS_API void ds_sym_result_release(struct ds_sym_result *res)
{
	if (!res)
		return;
	free(res->frames);
	free(res->_strings);
	res->frames = NULL;
	res->_strings = NULL;
	res->nframes = 0;
}

/* ------------------------------------------------------- request lines */

static bool parse_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	if (!len || len > 16)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned d = c >= '0' && c <= '9'   ? c - '0'
			     : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
								       : 16;

		if (d > 15)
			return false;
		v = v << 4 | d;
	}
	*out = v;
	return true;
}

DS_API int ds_sym_parse_line(const char *line, size_t len, char *key, size_t keylen,
			     struct ds_build_id *bid, uint64_t *addr)
{
	const char *word[3];
	size_t wlen[3], n = 0, i = 0;

	if (!line || !addr)
		return -EINVAL;
	/* Up to three words; a third is an error. */
	while (i < len && n < 3) {
		while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' ||
				   line[i] == '\n'))
			i++;
		if (i == len)
			break;
		word[n] = line + i;
		while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' &&
		       line[i] != '\n' && line[i] != 0)
			i++;
		if (i < len && line[i] == 0)
			return -EINVAL; /* a NUL inside the line */
		wlen[n] = (size_t)(line + i - word[n]);
		n++;
	}
	if (n == 0)
		return DS_SYM_LINE_EMPTY;
	if (n == 3 || !parse_hex(word[n - 1], wlen[n - 1], addr))
		return -EINVAL;
	if (n == 1)
		return DS_SYM_LINE_ADDR;
	if (!key || wlen[0] >= keylen)
		return -EINVAL;
	memcpy(key, word[0], wlen[0]);
	key[wlen[0]] = 0;
	/* A path has a '/'; a build ID is hex only. */
	if (!memchr(word[0], '/', wlen[0]) && bid && ds_build_id_parse(key, bid) == 0)
		return DS_SYM_LINE_BUILD_ID;
	return DS_SYM_LINE_PATH;
}
