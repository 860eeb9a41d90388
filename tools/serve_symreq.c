/* POST /symbolize's request parser and answer writer: see serve_symreq.h. */
#define _GNU_SOURCE
#include "serve_symreq.h"

#include "cli_srctext.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yajl/yajl_parse.h>

/* A text line longer than this is no frame (the longest is some 150
 * bytes): the request is refused, not read further. */
#define LINE_MAX_BYTES 4096
/* JSON containers open at once: the request's own are 3 deep. */
#define JSON_MAX_DEPTH 32

static void fail(struct symreq_error *err, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct symreq_error *err, unsigned status, const char *fmt, ...)
{
	va_list ap;

	err->status = status;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

void symreq_release(struct symreq *rq)
{
	free(rq->frames);
	free(rq->ids);
	free(rq->slots);
	*rq = (struct symreq){ 0 };
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return true;
	while (c < need)
		c *= 2;
	q = reallocarray(*p, c, size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

static uint64_t bid_hash(const struct ds_build_id *b)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < b->size; i++)
		h = (h ^ b->data[i]) * 0x100000001b3ull;
	return h;
}

/* The table index of bid, added if new; -1 when out of memory, -2 when
 * it would be one past SYMREQ_MAX_MODULES. */
static long long intern(struct symreq *rq, const struct ds_build_id *bid)
{
	size_t mask, i;

	if (2 * (rq->nids + 1) > rq->nslots) { /* at most half full */
		size_t ns = rq->nslots ? 2 * rq->nslots : 64;
		uint32_t *s = calloc(ns, sizeof(*s));

		if (!s)
			return -1;
		for (size_t k = 0; k < rq->nids; k++) {
			for (i = bid_hash(&rq->ids[k]) & (ns - 1); s[i]; i = (i + 1) & (ns - 1))
				;
			s[i] = (uint32_t)k + 1;
		}
		free(rq->slots);
		rq->slots = s;
		rq->nslots = ns;
	}
	mask = rq->nslots - 1;
	for (i = bid_hash(bid) & mask; rq->slots[i]; i = (i + 1) & mask)
		if (ds_build_id_equal(&rq->ids[rq->slots[i] - 1], bid))
			return rq->slots[i] - 1;
	if (rq->nids >= SYMREQ_MAX_MODULES)
		return -2;
	if (!grow((void **)&rq->ids, &rq->ids_cap, rq->nids + 1, sizeof(*rq->ids)))
		return -1;
	rq->ids[rq->nids] = *bid;
	rq->slots[i] = (uint32_t)++rq->nids;
	return (long long)rq->nids - 1;
}

/* Append a frame: 0; -1 past max_frames (413) or out of memory (500). */
static int add_frame(struct symreq *rq, struct ds_sym_ref r, size_t max_frames,
		     struct symreq_error *err)
{
	if (rq->n >= max_frames) {
		fail(err, 413, "more than %zu frames", max_frames);
		return -1;
	}
	if (!grow((void **)&rq->frames, &rq->cap, rq->n + 1, sizeof(*rq->frames))) {
		fail(err, 500, "out of memory");
		return -1;
	}
	rq->frames[rq->n++] = r;
	return 0;
}

static struct ds_sym_ref bad(enum symreq_bad why, uint64_t where)
{
	return (struct ds_sym_ref){ .module = why, .flags = SYMREQ_BAD, .addr = where };
}

/* ------------------------------------------------------------------ text */

/* Is the first word of s[0..len) w?  (Its prefix, then a blank or the
 * end: the word is not measured, a build ID is forty digits.) */
static bool word_is(const char *s, size_t len, const char *w)
{
	size_t n = strlen(w);

	return len >= n && !memcmp(s, w, n) && (len == n || s[n] == ' ' || s[n] == '\t');
}

/* One non-blank line (lineno from 1) as a frame: what llvm-symbolizer
 * reads with build IDs ("[CODE] BUILDID:HEX ADDR") or dsostore's "HEX
 * ADDR" (ds_sym_parse_line(): ADDR hex, "0x" optional, in both). */
static struct ds_sym_ref text_frame(struct symreq *rq, const char *s, size_t len, size_t lineno,
				    bool offsets, struct symreq_text *last, int *nomem)
{
	char key[2 * DS_BUILD_ID_MAX + 1];
	struct ds_build_id bid;
	uint64_t addr;
	size_t i = 0, klen;
	long long m;
	int kind;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	/* llvm-symbolizer's commands: CODE is the default, DATA and FRAME
	 * ask what this server does not answer. */
	if (word_is(s + i, len - i, "DATA") || word_is(s + i, len - i, "FRAME"))
		return bad(SYMREQ_BAD_DATA, lineno);
	if (word_is(s + i, len - i, "CODE"))
		i += 4;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (len - i > 8 && !memcmp(s + i, "BUILDID:", 8))
		i += 8;
	/* A recent line's module again, then one word: the address alone
	 * is parsed (ds_sym_parse_line() of one word; anything else takes
	 * the whole way below, and its error).  (At most one of the words
	 * is followed by a blank here.) */
	for (size_t k = 0; k < SYMREQ_LAST_MODULES; k++) {
		const struct symreq_last *lm = &last->last[k];

		if (!lm->word || len - i <= lm->len || memcmp(s + i, lm->word, lm->len) ||
		    (s[i + lm->len] != ' ' && s[i + lm->len] != '\t'))
			continue;
		if (ds_sym_parse_line(s + i + lm->len, len - i - lm->len, NULL, 0, NULL, &addr) ==
		    DS_SYM_LINE_ADDR)
			return (struct ds_sym_ref){ .module = lm->module,
						    .flags = offsets ? DS_SYM_REF_OFFSET : 0,
						    .addr = addr };
		break;
	}
	kind = ds_sym_parse_line(s + i, len - i, key, sizeof(key), &bid, &addr);
	if (kind == DS_SYM_LINE_ADDR)
		return bad(SYMREQ_BAD_NO_MODULE, lineno);
	if (kind == DS_SYM_LINE_PATH)
		return bad(memchr(key, '/', strlen(key)) ? SYMREQ_BAD_PATH : SYMREQ_BAD_BUILD_ID,
			   lineno);
	if (kind != DS_SYM_LINE_BUILD_ID)
		return bad(SYMREQ_BAD_LINE, lineno);
	m = intern(rq, &bid);
	if (m < 0) {
		*nomem = m == -1 ? 1 : 2;
		return bad(SYMREQ_BAD_LINE, lineno);
	}
	klen = strlen(key);
	if (!memcmp(s + i, key, klen)) { /* (the word where it was looked for) */
		last->last[last->next].word = s + i;
		last->last[last->next].len = klen;
		last->last[last->next].module = (uint32_t)m;
		last->next = (last->next + 1) % SYMREQ_LAST_MODULES;
	}
	return (struct ds_sym_ref){ .module = (uint32_t)m,
				    .flags = offsets ? DS_SYM_REF_OFFSET : 0,
				    .addr = addr };
}

void symreq_text_start(struct symreq *rq, struct symreq_text *st, bool offsets,
		       size_t max_frames)
{
	*rq = (struct symreq){ 0 };
	*st = (struct symreq_text){ .offsets = offsets, .max_frames = max_frames };
}

static int parse_text(struct symreq *rq, struct symreq_text *st, const char *body, size_t len,
		      bool final, struct symreq_error *err)
{
	while (st->at < len) {
		size_t at = st->at;
		const char *nl = memchr(body + at, '\n', len - at);
		size_t e = nl ? (size_t)(nl - body) : len, ll = e - at;
		bool blank = true;
		int nomem = 0; /* 1: out of memory; 2: too many modules */
		struct ds_sym_ref r;

		if (ll > LINE_MAX_BYTES) {
			fail(err, 400, "line %zu: longer than %u bytes", st->lineno + 1,
			     LINE_MAX_BYTES);
			return -1;
		}
		if (!nl && !final)
			break; /* the rest of the line has not come yet */
		st->lineno++;
		for (size_t k = at; k < e && blank; k++)
			blank = body[k] == ' ' || body[k] == '\t' || body[k] == '\r';
		if (!blank) {
			r = text_frame(rq, body + at, ll, st->lineno, st->offsets, st, &nomem);
			if (nomem == 2) {
				fail(err, 413, "line %zu: more than %d build IDs", st->lineno,
				     SYMREQ_MAX_MODULES);
				return -1;
			}
			if (nomem) {
				fail(err, 500, "out of memory");
				return -1;
			}
			if (add_frame(rq, r, st->max_frames, err))
				return -1;
		}
		st->at = e + 1;
	}
	return 0;
}

int symreq_text_more(struct symreq *rq, struct symreq_text *st, const char *body, size_t avail,
		     bool final, struct symreq_error *err)
{
	*err = (struct symreq_error){ 0 };
	if (parse_text(rq, st, body, avail, final, err)) {
		symreq_release(rq);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ JSON
 *
 * yajl's SAX callbacks, a state machine over where in the document they
 * are: what is kept is the frames and build IDs, as they come.  The
 * document's shape (an object, "modules" and "frames" arrays of objects)
 * is the request's: another shape is a 400 naming the byte.  A field of a
 * frame or module that is wrong makes that frame bad_input.  Unknown keys
 * are skipped whatever their values. */

enum where { W_TOP, W_ROOT, W_MODULES, W_MODULE, W_FRAMES, W_FRAME, W_DONE };
enum key { K_OTHER, K_MODULES, K_FRAMES, K_BUILD_ID, K_MODULE, K_VADDR, K_OFFSET, K_RETURN };
enum vtype { V_NULL, V_BOOL, V_NUMBER, V_STRING, V_MAP, V_ARRAY };

struct jparse {
	struct symreq *rq;
	yajl_handle h;
	struct symreq_error *err;
	size_t max_frames;
	int depth; /* containers open */
	int skip; /* > 0: in an ignored container opened at this depth */
	enum where where;
	enum key key;
	bool had_modules, had_frames;
	/* "modules": the JSON index's table index, or UINT32_MAX: bad */
	uint32_t *modmap;
	size_t nmod, modcap;
	/* the module or frame being read */
	struct ds_build_id bid;
	bool has_bid, obj_bad;
	enum symreq_bad why;
	bool has_module, has_addr;
	uint64_t module, addr, start;
	uint32_t flags;
};

/* The byte the parser is at (after the current token). */
static size_t jpos(struct jparse *j)
{
	return yajl_get_bytes_consumed(j->h);
}

static int jfail(struct jparse *j, const char *what)
{
	fail(j->err, 400, "byte %zu: %s", jpos(j), what);
	return 0;
}

static void jbad(struct jparse *j, enum symreq_bad why)
{
	if (!j->obj_bad)
		j->why = why;
	j->obj_bad = true;
}

/* "0x" and 1..16 hex digits (a string), or a decimal integer (a number). */
static bool jaddr(const char *s, size_t len, bool number, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (!number) {
		if (len < 3 || len > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
			return false;
		for (i = 2; i < len; i++) {
			unsigned c = (unsigned char)s[i] | 0x20;
			unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 16;

			if (d > 15)
				return false;
			v = v << 4 | d;
		}
		*out = v;
		return true;
	}
	if (!len)
		return false;
	for (; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10) /* a sign, fraction, exponent, overflow */
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* A module's field. */
static void jmodule_value(struct jparse *j, enum vtype t, const char *s, size_t len)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];

	if (j->key != K_BUILD_ID)
		return;
	if (t != V_STRING || len >= sizeof(hex)) {
		j->has_bid = false;
		jbad(j, t == V_STRING ? SYMREQ_BAD_BUILD_ID : SYMREQ_BAD_FIELD);
		return;
	}
	memcpy(hex, s, len);
	hex[len] = 0;
	/* (A NUL inside, "\u0000", ends the copy early: not 2..128 digits,
	 * or fewer than given: refused by the length check below.) */
	if (strlen(hex) != len || ds_build_id_parse(hex, &j->bid)) {
		jbad(j, SYMREQ_BAD_BUILD_ID);
		return;
	}
	j->has_bid = true;
}

/* A frame's field. */
static void jframe_value(struct jparse *j, enum vtype t, const char *s, size_t len)
{
	uint64_t v;

	switch (j->key) {
	case K_MODULE:
		if (t != V_NUMBER || !jaddr(s, len, true, &v))
			jbad(j, SYMREQ_BAD_FIELD);
		else
			j->module = v;
		j->has_module = true;
		break;
	case K_VADDR:
	case K_OFFSET:
		if (j->has_addr)
			jbad(j, SYMREQ_BAD_TWO_ADDRS);
		j->has_addr = true;
		if ((t != V_STRING && t != V_NUMBER) || !jaddr(s, len, t == V_NUMBER, &v))
			jbad(j, SYMREQ_BAD_ADDR);
		else
			j->addr = v;
		if (j->key == K_OFFSET)
			j->flags |= DS_SYM_REF_OFFSET;
		break;
	case K_RETURN:
		if (t != V_BOOL)
			jbad(j, SYMREQ_BAD_FIELD);
		else if (len)
			j->flags |= DS_SYM_REF_RETURN;
		break;
	default:
		break;
	}
}

/* A value, or the start of a container (V_MAP, V_ARRAY: depth already
 * counted).  For V_BOOL, len is the value. */
static int jvalue(struct jparse *j, enum vtype t, const char *s, size_t len)
{
	bool open = t == V_MAP || t == V_ARRAY;

	if (j->skip)
		return 1;
	switch (j->where) {
	case W_TOP:
		if (t != V_MAP)
			return jfail(j, "the body is not a JSON object");
		j->where = W_ROOT;
		return 1;
	case W_ROOT:
		if (j->key == K_MODULES || j->key == K_FRAMES) {
			bool *had = j->key == K_MODULES ? &j->had_modules : &j->had_frames;

			if (t != V_ARRAY)
				return jfail(j, j->key == K_MODULES ? "\"modules\" is not an array"
								    : "\"frames\" is not an array");
			if (*had)
				return jfail(j, j->key == K_MODULES ? "a second \"modules\""
								    : "a second \"frames\"");
			*had = true;
			j->where = j->key == K_MODULES ? W_MODULES : W_FRAMES;
			return 1;
		}
		break;
	case W_MODULES:
	case W_FRAMES:
		if (t != V_MAP)
			return jfail(j, j->where == W_MODULES ? "a module is not an object"
							      : "a frame is not an object");
		j->where = j->where == W_MODULES ? W_MODULE : W_FRAME;
		j->has_bid = j->obj_bad = j->has_module = j->has_addr = false;
		j->flags = 0;
		j->addr = 0;
		j->start = jpos(j) - 1; /* its '{' */
		return 1;
	case W_MODULE:
		jmodule_value(j, t, s, len);
		break;
	case W_FRAME:
		jframe_value(j, t, s, len);
		break;
	case W_DONE:
		break;
	}
	if (open) /* an ignored or a wrong container: nothing in it is read */
		j->skip = j->depth;
	return 1;
}

static int jopen(struct jparse *j, enum vtype t)
{
	if (++j->depth > JSON_MAX_DEPTH)
		return jfail(j, "nested too deep");
	return jvalue(j, t, NULL, 0);
}

static int end_module(struct jparse *j)
{
	long long m = -1;

	if (!j->has_bid && !j->obj_bad)
		j->why = SYMREQ_BAD_MODULE_ID;
	if (j->has_bid && !j->obj_bad && (m = intern(j->rq, &j->bid)) < 0) {
		if (m == -2)
			fail(j->err, 413, "more than %d modules", SYMREQ_MAX_MODULES);
		else
			fail(j->err, 500, "out of memory");
		return 0;
	}
	if (j->nmod >= 4 * SYMREQ_MAX_MODULES) {
		/* (modules without a valid build ID are not interned: bounded
		 * here, so that a body of them alone grows nothing past it) */
		fail(j->err, 413, "more than %d modules", 4 * SYMREQ_MAX_MODULES);
		return 0;
	}
	if (!grow((void **)&j->modmap, &j->modcap, j->nmod + 1, sizeof(*j->modmap))) {
		fail(j->err, 500, "out of memory");
		return 0;
	}
	j->modmap[j->nmod++] = m < 0 ? UINT32_MAX : (uint32_t)m;
	return 1;
}

static int end_frame(struct jparse *j)
{
	struct ds_sym_ref r = { .module = 0, .flags = j->flags, .addr = j->addr };

	if (!j->has_module)
		jbad(j, SYMREQ_BAD_NO_MODULE);
	if (!j->has_addr)
		jbad(j, SYMREQ_BAD_NO_ADDR);
	if (j->obj_bad)
		r = bad(j->why, j->start);
	else if (j->module > UINT32_MAX)
		r = bad(SYMREQ_BAD_MODULE_RANGE, j->start);
	else
		r.module = (uint32_t)j->module; /* a JSON index until the end */
	return !add_frame(j->rq, r, j->max_frames, j->err);
}

static int jclose(struct jparse *j)
{
	int d = j->depth--;

	if (j->skip) {
		if (j->skip == d)
			j->skip = 0;
		return 1;
	}
	switch (j->where) {
	case W_MODULE:
		j->where = W_MODULES;
		return end_module(j);
	case W_FRAME:
		j->where = W_FRAMES;
		return end_frame(j);
	case W_MODULES:
	case W_FRAMES:
		j->where = W_ROOT;
		return 1;
	case W_ROOT:
		j->where = W_DONE;
		return 1;
	default:
		return 1;
	}
}

static int cb_null(void *ctx)
{
	return jvalue(ctx, V_NULL, NULL, 0);
}

static int cb_bool(void *ctx, int v)
{
	return jvalue(ctx, V_BOOL, NULL, v != 0);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	return jvalue(ctx, V_NUMBER, s, len);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return jvalue(ctx, V_STRING, (const char *)s, len);
}

static int cb_start_map(void *ctx)
{
	return jopen(ctx, V_MAP);
}

static int cb_start_array(void *ctx)
{
	return jopen(ctx, V_ARRAY);
}

static int cb_end(void *ctx)
{
	return jclose(ctx);
}

static int cb_key(void *ctx, const unsigned char *s, size_t len)
{
	struct jparse *j = ctx;
	const char *k = (const char *)s;

	j->key = K_OTHER;
	if (j->skip)
		return 1;
	if (j->where == W_ROOT)
		j->key = word_is(k, len, "modules") ? K_MODULES : word_is(k, len, "frames") ? K_FRAMES : K_OTHER;
	else if (j->where == W_MODULE)
		j->key = word_is(k, len, "build_id") ? K_BUILD_ID : K_OTHER;
	else if (j->where == W_FRAME)
		j->key = word_is(k, len, "module")	   ? K_MODULE
			 : word_is(k, len, "vaddr")	   ? K_VADDR
			 : word_is(k, len, "offset")	   ? K_OFFSET
			 : word_is(k, len, "return_address") ? K_RETURN
							     : K_OTHER;
	return 1;
}

static const yajl_callbacks jcallbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_bool,
	/* Numbers as their text: a module index or an address is read
	 * here, whole, unsigned (yajl's integers stop at INT64_MAX). */
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_key,
	.yajl_end_map = cb_end,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end,
};

/* Frames name JSON module indexes (modules may come after frames): now
 * table indexes, or bad (where: none kept, the answer names the frame). */
static void resolve_modules(struct jparse *j)
{
	for (size_t i = 0; i < j->rq->n; i++) {
		struct ds_sym_ref *r = &j->rq->frames[i];

		if (r->flags & SYMREQ_BAD)
			continue;
		if (r->module >= j->nmod)
			*r = bad(SYMREQ_BAD_MODULE_RANGE, SYMREQ_NOWHERE);
		else if (j->modmap[r->module] == UINT32_MAX)
			*r = bad(SYMREQ_BAD_MODULE_ID, SYMREQ_NOWHERE);
		else
			r->module = j->modmap[r->module];
	}
}

static int parse_json(struct symreq *rq, const char *body, size_t len, size_t max_frames,
		      struct symreq_error *err)
{
	struct jparse j = { .rq = rq, .err = err, .max_frames = max_frames };
	yajl_status st;
	bool at_end = false;
	int ret = -1;

	j.h = yajl_alloc(&jcallbacks, NULL, &j);
	if (!j.h) {
		fail(err, 500, "out of memory");
		return -1;
	}
	err->status = 0;
	st = yajl_parse(j.h, (const unsigned char *)body, len);
	/* (yajl_complete_parse() lexes a space of its own: what it counts is
	 * not the body's; an error there is at the body's end.) */
	if (st == yajl_status_ok && (st = yajl_complete_parse(j.h)) != yajl_status_ok)
		at_end = true;
	if (st == yajl_status_client_canceled) {
		/* err set by the callback that stopped */
	} else if (st != yajl_status_ok) {
		/* yajl's own words, without its excerpt of the body */
		unsigned char *m = yajl_get_error(j.h, 0, NULL, 0);
		size_t at = at_end ? len : yajl_get_bytes_consumed(j.h);
		char *nl = m ? strchr((char *)m, '\n') : NULL;

		if (nl)
			*nl = 0;
		fail(err, 400, "byte %zu: %s", at, m ? (char *)m : "not JSON");
		yajl_free_error(j.h, m);
	} else if (j.where != W_DONE) {
		fail(err, 400, "byte %zu: the body is not a JSON object", len);
	} else {
		resolve_modules(&j);
		ret = 0;
	}
	yajl_free(j.h);
	free(j.modmap);
	return ret;
}

bool symreq_is_json(const char *content_type)
{
	size_t tl = content_type ? strcspn(content_type, ";") : 0;

	while (tl && (content_type[tl - 1] == ' ' || content_type[tl - 1] == '\t'))
		tl--;
	return tl == strlen("application/json") &&
	       !strncasecmp(content_type, "application/json", tl);
}

int symreq_parse(struct symreq *rq, const char *body, size_t len, const char *content_type,
		 bool offsets, size_t max_frames, struct symreq_error *err)
{
	struct symreq_text st;
	int ret;

	if (!symreq_is_json(content_type)) {
		symreq_text_start(rq, &st, offsets, max_frames);
		return symreq_text_more(rq, &st, body, len, true, err);
	}
	*rq = (struct symreq){ .json = true };
	*err = (struct symreq_error){ 0 };
	ret = parse_json(rq, body, len, max_frames, err);
	if (ret)
		symreq_release(rq);
	return ret;
}

/* ---------------------------------------------------------------- answer */

void symout_release(struct symout *o)
{
	free(o->buf);
	*o = (struct symout){ 0 };
}

static __attribute__((noinline)) void put_grow(struct symout *o, const char *s, size_t n)
{
	size_t need = o->len + n, c = o->cap ? o->cap : 4096;
	char *p;

	if (o->nomem)
		return;
	while (c < need)
		c *= 2;
	p = realloc(o->buf, c);
	if (!p) {
		o->nomem = true;
		return;
	}
	o->buf = p;
	o->cap = c;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/* Inline: a literal's copy becomes a few stores (a frame's answer is
 * some thirty pieces).  Once out of memory the buffer stops growing; what
 * still fits is written, but the caller ends the response on nomem. */
static inline void put(struct symout *o, const char *s, size_t n)
{
	if (!n) /* (nor memcpy to a buffer not made yet) */
		return;
	if (__builtin_expect(o->cap - o->len >= n, 1)) {
		memcpy(o->buf + o->len, s, n);
		o->len += n;
		return;
	}
	put_grow(o, s, n);
}

#define put_lit(o, s) put(o, s, sizeof(s) - 1)

static void put_fmt(struct symout *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_fmt(struct symout *o, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* v in decimal, and "0x" and v in hex: what put_fmt() would write, at a
 * fraction of vsnprintf's cost (a million frames write millions). */
static void put_uint(struct symout *o, uint64_t v)
{
	char tmp[20], *p = tmp + sizeof(tmp);

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	put(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

static void put_hex(struct symout *o, uint64_t v)
{
	char tmp[18], *p = tmp + sizeof(tmp);

	do
		*--p = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	*--p = 'x';
	*--p = '0';
	put(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* s as a JSON string: '"', '\\' and control characters escaped (as
 * \u00XX, what llvm-symbolizer writes too), and every byte that is not
 * part of valid UTF-8 replaced by U+FFFD (written \ufffd): names and
 * paths come from the DWARF of files anybody may upload, and a JSON text
 * must be UTF-8 (RFC 8259). */
/* Does the word w hold a byte put_str() must not copy as it is (below
 * 0x20, 0x80 and above, '"', '\\')?  (A byte is zero in v where
 * (v - 1) & ~v has its top bit; below n where (v - n) & ~v has: both exact
 * as to whether there is one, which is all that is asked.) */
static inline bool json_special8(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	uint64_t q = w ^ ('"' * ones), b = w ^ ('\\' * ones);

	return (((w - 0x20 * ones) & ~w) | w | ((q - ones) & ~q) | ((b - ones) & ~b)) & high;
}

static void put_str(struct symout *o, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	put_lit(o, "\"");
	for (size_t i = 0; i < len;) {
		size_t run = i, n;

		/* Names and paths are mostly plain ASCII: eight bytes a step
		 * (the byte loop after it finds where a word stopped). */
		for (uint64_t w; len - run >= 8; run += 8) {
			memcpy(&w, u + run, 8);
			if (json_special8(w))
				break;
		}
		while (run < len && u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\')
			run++;
		put(o, s + i, run - i);
		if ((i = run) == len)
			break;
		n = srctext_utf8_len(u + i, len - i);
		if (!n) {
			put_lit(o, "\\ufffd");
			n = 1;
		} else if (n > 1) {
			put(o, s + i, n);
		} else if (u[i] == '"' || u[i] == '\\') {
			char e[2] = { '\\', (char)u[i] };

			put(o, e, 2);
		} else {
			put_fmt(o, "\\u%04x", u[i]);
		}
		i += n;
	}
	put_lit(o, "\"");
}

/* A frame's string (NULL: ""), copied as it is where the library says
 * it is plain. */
static inline void put_name(struct symout *o, const char *s, size_t len, bool plain)
{
	if (!s) {
		put_lit(o, "\"\"");
	} else if (plain) {
		put_lit(o, "\"");
		put(o, s, len);
		put_lit(o, "\"");
	} else {
		put_str(o, s, len);
	}
}

void symout_head(struct symout *o, const struct symreq *rq)
{
	if (rq->json)
		put_lit(o, "{\"frames\":[");
}

void symout_tail(struct symout *o, const struct symreq *rq)
{
	if (rq->json)
		put_lit(o, "]}\n");
}

static const char *const bad_text[SYMREQ_BAD_COUNT] = {
	[SYMREQ_BAD_LINE] = "not a frame: expected [CODE] BUILDID:HEX ADDR or HEX ADDR",
	[SYMREQ_BAD_DATA] = "only CODE frames are symbolized",
	[SYMREQ_BAD_NO_MODULE] = "no module: frames are named by build ID",
	[SYMREQ_BAD_PATH] = "a path: frames are named by build ID",
	[SYMREQ_BAD_BUILD_ID] = "not a build ID (2 to 128 hex digits)",
	[SYMREQ_BAD_MODULE_RANGE] = "\"module\" is not an index of \"modules\"",
	[SYMREQ_BAD_MODULE_ID] = "the module has no valid \"build_id\"",
	[SYMREQ_BAD_NO_ADDR] = "no \"vaddr\" or \"offset\"",
	[SYMREQ_BAD_TWO_ADDRS] = "both \"vaddr\" and \"offset\"",
	[SYMREQ_BAD_ADDR] = "not an address (\"0x\" and 1 to 16 hex digits, or an integer)",
	[SYMREQ_BAD_FIELD] = "a field of the wrong type",
};

static const char *const status_names[] = {
	[SYMREQ_SYMBOLIZED] = "symbolized",	[SYMREQ_NO_SYMBOL] = "no_symbol",
	[SYMREQ_NO_DEBUGINFO] = "no_debuginfo", [SYMREQ_BAD_INPUT] = "bad_input",
	[SYMREQ_ERROR] = "error",
};

static enum symreq_status status_of(const struct ds_sym_answer *a)
{
	if (!a)
		return SYMREQ_ERROR;
	if (a->reason == DS_SYM_REASON_NO_DEBUGINFO || a->status == DS_SYM_NO_SYMBOLS)
		return SYMREQ_NO_DEBUGINFO;
	switch (a->status) {
	case DS_SYM_FOUND:
		return SYMREQ_SYMBOLIZED;
	case DS_SYM_NOT_FOUND:
	case DS_SYM_OUTSIDE:
		return SYMREQ_NO_SYMBOL;
	default:
		return SYMREQ_ERROR;
	}
}

static void put_frames(struct symout *o, const struct ds_sym_answer *a)
{
	put_lit(o, ",\"Symbol\":[");
	for (uint32_t k = 0; a && k < a->nframes; k++) {
		const struct ds_frame *f = &a->frames[k];

		/* llvm-symbolizer's keys, in its (alphabetical) order;
		 * StartFileName and StartLine as it writes them unknown */
		if (k)
			put_lit(o, ",");
		put_lit(o, "{\"Column\":");
		put_uint(o, f->column);
		put_lit(o, ",\"Discriminator\":");
		put_uint(o, f->discriminator);
		put_lit(o, ",\"FileName\":");
		put_name(o, f->file, f->file_len, f->file_plain);
		put_lit(o, ",\"FunctionName\":");
		put_name(o, f->function, f->function_len, f->function_plain);
		put_lit(o, ",\"Line\":");
		put_uint(o, f->line);
		put_lit(o, ",\"StartAddress\":\"");
		put_hex(o, f->function_start);
		put_lit(o, "\",\"StartFileName\":\"\",\"StartLine\":0}");
	}
	put_lit(o, "]}");
}

enum symreq_status symout_frame(struct symout *o, const struct symreq *rq, size_t i,
				const struct ds_sym_answer *a, int err)
{
	const struct ds_sym_ref *r = &rq->frames[i];
	bool isbad = r->flags & SYMREQ_BAD;
	enum symreq_status st = isbad ? SYMREQ_BAD_INPUT : status_of(a);
	const char *hex = "";
	size_t hexlen = 0;
	char msg[200] = "";

	if (rq->json && i)
		put_lit(o, ",");
	if (!isbad && r->module < rq->nids) {
		size_t k = 0;

		while (k < SYMOUT_HEX && (!o->hex_len[k] || o->hex_module[k] != r->module))
			k++;
		if (k == SYMOUT_HEX) {
			int n;

			k = o->hex_next;
			o->hex_next = (o->hex_next + 1) % SYMOUT_HEX;
			n = ds_build_id_format(&rq->ids[r->module], o->hex[k], sizeof(o->hex[k]));
			o->hex_len[k] = n > 0 ? (size_t)n : 0;
			o->hex_module[k] = r->module;
		}
		hex = o->hex[k];
		hexlen = o->hex_len[k];
	}
	if (isbad && r->module < SYMREQ_BAD_COUNT && r->addr == SYMREQ_NOWHERE)
		snprintf(msg, sizeof(msg), "frame %zu: %s", i, bad_text[r->module]);
	else if (isbad && r->module < SYMREQ_BAD_COUNT)
		snprintf(msg, sizeof(msg), rq->json ? "byte %" PRIu64 ": %s" : "line %" PRIu64 ": %s",
			 r->addr, bad_text[r->module]);
	else if (st == SYMREQ_NO_DEBUGINFO && a && a->debuginfo_error)
		snprintf(msg, sizeof(msg), "no debuginfo: %s", ds_strerror(a->debuginfo_error));
	else if (st == SYMREQ_NO_DEBUGINFO)
		snprintf(msg, sizeof(msg), "no debuginfo");
	else if (st == SYMREQ_ERROR)
		snprintf(msg, sizeof(msg), "%s", ds_strerror(a ? a->error : err ? err : -EIO));
	else if (a && a->status == DS_SYM_OUTSIDE)
		snprintf(msg, sizeof(msg), "%s", ds_sym_reason_name(DS_SYM_REASON_OUTSIDE));
	/* (A bad frame's address is none: where it is goes in the message.) */
	if (isbad) {
		put_lit(o, "{\"Address\":\"\"");
	} else {
		put_lit(o, "{\"Address\":\"");
		put_hex(o, r->addr);
		put_lit(o, "\"");
	}
	/* (hex digits need no escaping) */
	put_lit(o, ",\"BuildID\":\"");
	put(o, hex, hexlen);
	put_lit(o, "\"");
	if (*msg) {
		put_lit(o, ",\"Error\":{\"Message\":");
		put_str(o, msg, strlen(msg));
		put_lit(o, "}");
	}
	put_lit(o, ",\"ModuleName\":\"");
	if (hexlen) {
		put_lit(o, "BUILDID:");
		put(o, hex, hexlen);
	}
	put_lit(o, "\",\"Status\":\"");
	put(o, status_names[st], strlen(status_names[st]));
	put_lit(o, "\"");
	/* no_debuginfo may still be named by the binary's own symbols */
	put_frames(o, st == SYMREQ_SYMBOLIZED || st == SYMREQ_NO_DEBUGINFO ? a : NULL);
	if (!rq->json)
		put_lit(o, "\n");
	return st;
}
