/* SPDX-License-Identifier: MIT */
/*
 * Symbolization: address -> function, file:line:column, inline frames,
 * answered from the index (symindex.c).  A lookup is two binary searches
 * and a short walk up the scope chain.  (libdw's own per-address path,
 * what eu-addr2line does, walks DIEs for every address: ~0.8 ms each with
 * inlines.)  Names as binutils or perf choose them, demangled; and the
 * request lines of `dsostore symbolize`.
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (the issue allows it; binutils has its own). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static const char *str(const struct ds_symbols *S, uint32_t off)
{
	return off ? S->pool + off : NULL;
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
	if (flags & DS_SYM_NO_LINES) {
		/* ELF symbols alone, whichever tier S is, so the answer does
		 * not depend on what an earlier query built. */
		const struct symbol *sym =
		    (flags & DS_SYM_ELF_NAMES) ? perf_symbol_at(S, addr) : symbol_at(S, addr);

		if (sym) {
			res->from_symtab = true;
			err = add_frame(&b, str(S, sym->name), sym->lo, NULL, 0, 0, 0, false, dm);
		}
		goto strings;
	}
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
strings:
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
