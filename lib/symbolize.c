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

struct collect {
	struct builder b;
	bool demangle;
};

static int collect_frame(void *arg, const struct ds__raw_frame *f)
{
	struct collect *c = arg;

	return add_frame(&c->b, f->function, f->function_start, f->file, f->line, f->column,
			 f->discriminator, f->inlined, c->demangle);
}

int ds__symbols_lookup(struct ds_symbols *S, uint64_t addr, unsigned flags,
		       struct ds_sym_result *res)
{
	struct collect c = { .b = { .res = res }, .demangle = flags & DS_SYM_DEMANGLE };
	struct builder *b = &c.b;
	bool from_symtab = false;
	int err;

	memset(res, 0, sizeof(*res));
	res->addr = addr;
	err = ds__symbols_find(S, addr, flags, &from_symtab, collect_frame, &c);
	res->from_symtab = from_symtab;
	if (!err && b->sb.len) {
		/* Strings are final: point the frames into them. */
		res->_strings = b->sb.buf;
		b->sb.buf = NULL;
		for (size_t i = 0; i < res->nframes; i++) {
			res->frames[i].function =
				b->fn_off[i] == SIZE_MAX ? NULL : res->_strings + b->fn_off[i];
			res->frames[i].file =
				b->file_off[i] == SIZE_MAX ? NULL : res->_strings + b->file_off[i];
		}
	}
	ds__strbuf_release(&b->sb);
	free(b->fn_off);
	free(b->file_off);
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
