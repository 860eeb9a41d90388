/* SPDX-License-Identifier: MIT */
/*
 * The DWARF reader's line programs (see dwarf_int.h): one CU's
 * .debug_line into the rows of a struct sym_build.
 */
#define _GNU_SOURCE
#include "dwarf_int.h"

#include <errno.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#define LINES_RESERVE_MAX (4u << 20) /* rows reserved up front (96 MB) */

/* ------------------------------------------------------ the line program */

/*
 * Our own reader of .debug_line (DWARF 2 to 5).  Rows are appended in
 * program order, sequence by sequence; symindex.c then orders the
 * sequences.  Every read is bounded by the section; a malformed program
 * ends that CU's rows.  File names are joined as binutils does: a
 * relative name under its directory, a relative directory under the CU's
 * comp_dir.  elfutils (dwarf_linesrc) and gdb do not put a relative
 * directory under comp_dir: glibc's "./nptl/futex-internal.c" (directory
 * 0 is comp_dir itself, "./nptl") is binutils' and LLVM's
 * "./nptl/./nptl/futex-internal.c".  Their path is then the end of ours,
 * past "COMP_DIR/": a file's offset points there, inside the interned
 * string, and the path binutils prints starts at the string's start (the
 * NUL before it); see file_of() in symlookup.c.
 */
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

/* The strings of parts joined by '/' into buf, cut as snprintf() cuts
 * (size - 1 bytes and a NUL); the joined length, uncut.  (snprintf() was
 * a twentieth of a build.) */
static size_t join(char *buf, size_t size, const char *const *parts, int nparts)
{
	size_t len = 0;

	for (int i = 0; i < nparts; i++) {
		size_t n = strlen(parts[i]);

		if (i && len < size - 1)
			buf[len] = '/';
		len += i > 0;
		if (len < size - 1)
			memcpy(buf + len, parts[i], n < size - 1 - len ? n : size - 1 - len);
		len += n;
	}
	buf[len < size - 1 ? len : size - 1] = 0;
	return len;
}

/* binutils' concat_filename(); the offset of elfutils' path in it (see
 * above). */
static uint32_t file_path(struct sym_build *B, const char *name, const char *dir,
			  const char *comp_dir)
{
	char buf[4096];
	uint32_t off;
	size_t skip = 0;

	if (!name)
		return 0;
	if (name[0] == '/' || !dir)
		return ds__symbols_intern(B, name);
	if (dir[0] != '/' && comp_dir && *comp_dir) {
		const char *parts[] = { comp_dir, dir, name };

		if (join(buf, sizeof(buf), parts, 3) < sizeof(buf)) /* (cut: no elfutils path) */
			skip = strlen(comp_dir) + 1;
	} else {
		const char *parts[] = { dir, name };

		join(buf, sizeof(buf), parts, 2);
	}
	off = ds__symbols_intern(B, buf);
	return off ? off + (uint32_t)skip : 0;
}

/* One DWARF 5 entry (directory or file): its path and directory index. */
static bool read_entry(struct cursor *c, const struct dfile *f, const uint64_t *fmt, size_t nfmt,
		       bool dwarf64, const char **path, uint64_t *dir)
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
			sv = str_at(&f->s[SEC_LINE_STR], rd(c, dwarf64 ? 8 : 4));
			break;
		case DW_FORM_strp:
			sv = str_at(&f->s[SEC_STR], rd(c, dwarf64 ? 8 : 4));
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
			skip(c, 16);
			break;
		case DW_FORM_block:
			skip(c, uleb(c));
			break;
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

/* A row as the index keeps it: three stores (see struct line). */
static inline void put_row(struct line *row, uint64_t addr, bool end, uint32_t file, uint64_t line,
			   uint64_t col, uint64_t disc)
{
	uint32_t l = line > UINT32_MAX ? 0 : (uint32_t)line;
	uint32_t d = disc > UINT32_MAX ? 0 : (uint32_t)disc;
	uint16_t c = col > UINT16_MAX ? 0 : (uint16_t)col;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	_Static_assert(offsetof(struct line, file) == 8 && offsetof(struct line, line) == 12 &&
			       offsetof(struct line, discriminator) == 16 &&
			       offsetof(struct line, column) == 20 && offsetof(struct line, end) == 22 &&
			       offsetof(struct line, pad) == 23 && sizeof(struct line) == 24,
		       "struct line's layout");
	uint64_t w1 = file | (uint64_t)l << 32, w2 = d | (uint64_t)c << 32 | (uint64_t)end << 48;

	memcpy(&row->addr, &addr, 8);
	memcpy(&row->file, &w1, 8);
	memcpy(&row->discriminator, &w2, 8);
#else
	*row = (struct line){
		.addr = addr, .file = file, .line = l, .discriminator = d, .column = c, .end = end
	};
#endif
}

/* Whether row q says what a row of these values would (put_row()'s). */
static inline bool row_same(const struct line *q, uint32_t file, uint64_t line, uint64_t col,
			    uint64_t disc)
{
	return q->file == file && q->line == (line > UINT32_MAX ? 0 : (uint32_t)line) &&
	       q->column == (col > UINT16_MAX ? 0 : (uint16_t)col) &&
	       q->discriminator == (disc > UINT32_MAX ? 0 : (uint32_t)disc);
}

/* Rows written into memory not touched yet fault a page at a time, which
 * a paravirtualized machine makes dear (a tenth of a build): the pages
 * from row n on, ROWS_READY bytes of them, are made ready by one call
 * instead.  The first row past them, or cap when none is left. */
#define ROWS_READY (64u << 10)

static size_t rows_ready(struct line *rows, size_t n, size_t cap)
{
	size_t upto = cap - n > ROWS_READY / sizeof(*rows) ? n + ROWS_READY / sizeof(*rows) : cap;

	ds__populate(&rows[n], (upto - n) * sizeof(*rows));
	return upto;
}

/* The special opcodes of a program with these parameters, in W's table. */
static const struct special_ops *special_ops(struct ds__dwarf_worker *W, unsigned opcode_base,
					     int line_base, unsigned line_range, unsigned min_inst)
{
	struct special_ops *t = &W->ops;
	uint32_t key = opcode_base | (uint32_t)(uint8_t)line_base << 8 | line_range << 16 |
		       min_inst << 24;

	if (t->key != key) {
		for (unsigned op = opcode_base; op < 256; op++) {
			unsigned adj = op - opcode_base;

			t->addr[op] = adj / line_range * min_inst;
			t->line[op] = line_base + (int)(adj % line_range);
		}
		t->key = key;
	}
	return t;
}

int ds__dw_read_line_program(struct build *bd, uint64_t off, const char *comp_dir)
{
	struct sym_build *B = bd->B;
	const struct dfile *f = bd->cu->f;
	const struct sec *s = &f->s[SEC_LINE];
	struct names dirs = { 0 };
	uint32_t *fileoff = NULL;
	struct cursor c, prog;
	uint64_t unit_len, hdr_len, nfiles = 0;
	unsigned version, min_inst, line_range, opcode_base;
	int line_base, err = 0;
	bool dwarf64 = false;
	unsigned char std_len[256] = { 0 };

	if (!s->p || off >= s->size)
		return 0;
	c = (struct cursor){ s->p + off, s->p + s->size, false, f->be };
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
	prog = (struct cursor){ c.p + hdr_len, c.end, false, f->be };
	min_inst = (unsigned)rd(&c, 1);
	if (version >= 4)
		rd(&c, 1); /* maximum operations per instruction: VLIW only */
	rd(&c, 1); /* default_is_stmt */
	line_base = (int8_t)rd(&c, 1);
	line_range = (unsigned)rd(&c, 1);
	opcode_base = (unsigned)rd(&c, 1);
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
				file_path(B, d, di < dirs.n ? dirs.v[di] : NULL, comp_dir);
		}
	} else {
		uint64_t fmt[2 * 16], nfmt, count;

		if (!entry_formats(&c, fmt, &nfmt, &count))
			goto done;
		for (uint64_t i = 0; i < count && !c.bad; i++) {
			const char *path;
			uint64_t di;

			if (!read_entry(&c, f, fmt, nfmt, dwarf64, &path, &di))
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

			if (!read_entry(&c, f, fmt, nfmt, dwarf64, &path, &di))
				goto done;
			fileoff[i] = file_path(B, path, di < dirs.n ? dirs.v[di] : NULL, comp_dir);
			nfiles = i + 1;
		}
	}

	/* The state machine.  A row takes 2 to 6 bytes of program: room
	 * for the rows up front (pages not written cost nothing; the
	 * array is trimmed when the CU is done) rather than copies as it
	 * grows.  Not for more than LINES_RESERVE_MAX rows: a program's
	 * length is only what its header says. */
	if (B->lcap - B->nlines < (size_t)(prog.end - prog.p) / 2) {
		size_t want = B->nlines + (size_t)(prog.end - prog.p) / 2;
		struct line *p;

		if (want > LINES_RESERVE_MAX)
			want = LINES_RESERVE_MAX;
		if (want > B->lcap && (p = realloc(B->lines, want * sizeof(*p)))) {
			B->lines = p;
			B->lcap = want;
		}
	}
	{
		const struct special_ops *sp =
			special_ops(bd->W, opcode_base, line_base, line_range, min_inst);
		uint64_t addr = 0, line = 1, col = 0, disc = 0;
		/* The rows, in locals while the program runs (B's fields
		 * could alias the rows' stores); the file's pool offset, as
		 * set_file last set it. */
		struct line *rows = B->lines;
		size_t n = B->nlines, cap = B->lcap, seq_first = n;
		uint32_t fpath = 1 < nfiles ? fileoff[1] : 0;
		size_t ready = 0;

/* A row, unless no lookup could tell it from the one before in its
 * sequence: a row at the address of the one before replaces it (a lookup
 * takes the last row at or below an address), and a row that says what
 * the one before says (file, line, column, discriminator) only moves
 * where the next answer starts.  GCC's tables with columns and views are
 * full of both: python3.11d's have 558,538 rows, 231,604 at the next
 * row's address and 90,289 more like the one before (llvm-dwarfdump
 * --debug-line); its saved index is 8.5 MB without them, 16 MB with, and
 * a sorted batch's scan from its last row is that much shorter. */
#define EMIT(is_end)                                                                         \
	do {                                                                                 \
		if (n > seq_first && !rows[n - 1].end &&                                     \
		    (rows[n - 1].addr == addr ||                                             \
		     (!(is_end) && row_same(&rows[n - 1], fpath, line, col, disc)))) {      \
			if (rows[n - 1].addr == addr)                                        \
				put_row(&rows[n - 1], addr, (is_end), (is_end) ? 0 : fpath, line, \
					col, disc);                                          \
			disc = 0;                                                            \
			break;                                                               \
		}                                                                            \
		if (n == cap) {                                                              \
			B->nlines = n;                                                       \
			if (GROW(B, lines, nlines, lcap))                                    \
				goto nomem;                                                  \
			rows = B->lines;                                                     \
			cap = B->lcap;                                                       \
			ready = 0;                                                           \
		}                                                                            \
		if (n >= ready)                                                              \
			ready = rows_ready(rows, n, cap);                                    \
		put_row(&rows[n++], addr, (is_end), (is_end) ? 0 : fpath, line, col, disc); \
		disc = 0;                                                                    \
	} while (0)

		while (prog.p < prog.end && !prog.bad) {
			unsigned op = *prog.p++;

			if (op >= opcode_base) {
				addr += sp->addr[op];
				line += (uint64_t)(int64_t)sp->line[op];
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
				sub = *prog.p++;
				if (sub == DW_LNE_end_sequence) {
					EMIT(1);
					/* Rows at the end address are zero-length:
					 * binutils and LLVM give them no extent. */
					for (size_t k = n - 1; k-- > seq_first && rows[k].addr == addr;) {
						rows[k].end = 1;
						rows[k].file = 0;
					}
					/* Code --gc-sections dropped sits at 0: not ours. */
					if (rows[seq_first].addr == 0)
						n = seq_first;
					seq_first = n;
					addr = 0;
					fpath = 1 < nfiles ? fileoff[1] : 0;
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
			case DW_LNS_set_file: {
				uint64_t file = uleb(&prog);

				fpath = file < nfiles ? fileoff[file] : 0;
				break;
			}
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
		B->nlines = seq_first;
#undef EMIT
	}
	goto done;
nomem:
	err = -ENOMEM;
done:
	free(dirs.v);
	/* The file table stays for the CU's DIEs (DW_AT_call_file). */
	free(bd->fileoff);
	bd->fileoff = fileoff;
	bd->nfileoff = nfiles;
	return err;
}
