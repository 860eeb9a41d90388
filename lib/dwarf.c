/* SPDX-License-Identifier: MIT */
/*
 * Reading DWARF, the only room that does.  libdw opens a debuginfo (and
 * the dwz alt file it names) and walks each CU's DIEs for the address
 * ranges of functions and inlined instances; the line programs are read by
 * our own reader below (by libdw's when the sections are not plain
 * little-endian ELF).  Both land in the index (symindex.h) with their
 * strings interned, so nothing of libdw outlives ds__dwarf_index().
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DW_AT_GNU_discriminator
#define DW_AT_GNU_discriminator 0x2136 /* gcc; not in elfutils 0.188 dwarf.h */
#endif
#define LINES_RESERVE_MAX (4u << 20) /* rows reserved up front (96 MB) */

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
	return ds__symbols_intern(w->S, name);
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
	uint32_t name = ds__symbols_intern(S, die_name(die, w->mangled_lang, &linkage));
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
				seen[slot].off = ds__symbols_intern(S, src);
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
		return ds__symbols_intern(S, name);
	if (dir[0] != '/' && comp_dir && *comp_dir)
		snprintf(buf, sizeof(buf), "%s/%s/%s", comp_dir, dir, name);
	else
		snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return ds__symbols_intern(S, buf);
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

/* ---------------------------------------------------- opening the DWARF */

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

/* The scopes and line rows of debug's DWARF (with the dwz alt file it
 * names) into S; name is for messages.  No Dwarf outlives the call. */
int ds__dwarf_index(struct ds_context *ctx, Elf *debug, const char *name, struct ds_symbols *S)
{
	struct ds_found alt = { .fd = -1 };
	Dwarf *dw =
	    dwarf_plausible(ctx, debug, name) ? dwarf_begin_elf(debug, DWARF_C_READ, NULL) : NULL;
	int err = 0;

	if (dw) {
		attach_alt(ctx, dw, &alt);
		err = walk_dwarf(ctx, name, S, dw);
		if (dwarf_getalt(dw) && alt.elf)
			dwarf_end(dwarf_getalt(dw));
		dwarf_end(dw);
	}
	ds__found_release(&alt);
	return err;
}
