/* SPDX-License-Identifier: MIT */
/*
 * Metadata queries (ds_metadata_*): GET /metadata?key=KEY&value=VALUE, as
 * elfutils 0.192's debuginfod_find_metadata() asks and debuginfod answers.
 *
 * The protocol, read from elfutils 0.192 (debuginfod.cxx handle_metadata,
 * debuginfod-client.c debuginfod_find_metadata) and checked against its
 * server (tests/cli/metadata.sh):
 *   - the URL is <server>/metadata?key=<escaped>&value=<escaped>;
 *   - a 200's body is {"results":[{"type":"executable"|"debuginfo",
 *     "buildid":HEX,"file":PATH[,"archive":PATH]}, ...],"complete":BOOL};
 *     a file both executable and debuginfo is two results; "complete" is
 *     false when the server's query ran out of time (--metadata-maxtime)
 *     or an upstream of its failed;
 *   - an unknown key is an error answer (503, "unsupported key").
 * elfutils' client concatenates the servers' results and clears
 * "complete" for a server that failed, but takes an answer without
 * "results" or "complete" as nothing at all (complete stays true); here
 * that answer is a failure too, and a result two servers both gave
 * appears once.  elfutils also keeps the merged answer in its cache
 * ($cache/metadata/KEY_VALUE, metadata_retention_s); this does not.
 *
 * The transfers are transfer.c's (the fetcher's timeouts, retries,
 * headers, size bound), on a multi handle of this call's own, moved along
 * by the caller's thread: a query is one round trip per server, not a
 * job the fetcher's event loop needs to know.  Bodies are held in memory
 * (bounded: ds_metadata_opts.maxsize) and parsed with yajl's callbacks,
 * each result re-generated as it is read (no document tree: a hostile
 * nesting is refused at MAX_DEPTH, not recursed into).
 */
#define _GNU_SOURCE
#include "transfer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>

#define METADATA_MAXSIZE_DEFAULT (64ULL << 20)
#define MAX_VALUE 4096
#define MAX_KEY 64
/* Nesting of an answer: {"results":[{...}]} is 3; a server's extra
 * fields may nest a little. */
#define MAX_DEPTH 16
/* One result's JSON. */
#define MAX_ENTRY (64 << 10)
/* Results of one answer: 64 MiB of "{}," would otherwise be 21 million
 * entries, some 2 GB held (debuginfod writes ~150 bytes a result). */
#define MAX_RESULTS (1 << 20)

/* ------------------------------------------------------------ the set */

struct meta {
	struct ds_metadata pub;
	size_t cap;
	uint32_t *slots; /* open-addressed by the entry's JSON; UINT32_MAX: empty */
	size_t mask;
};

#define EMPTY UINT32_MAX

DS_API struct ds_metadata *ds_metadata_new(void)
{
	struct meta *m = calloc(1, sizeof(*m));

	if (m)
		m->pub.complete = true;
	return m ? &m->pub : NULL;
}

static void entry_release(struct ds_metadata_entry *e)
{
	free((char *)e->type);
	free((char *)e->buildid);
	free((char *)e->file);
	free((char *)e->archive);
	free((char *)e->json);
}

DS_API void ds_metadata_free(struct ds_metadata *pub)
{
	struct meta *m = (struct meta *)pub;

	if (!m)
		return;
	for (size_t i = 0; i < m->pub.n; i++)
		entry_release(&m->pub.entries[i]);
	free(m->pub.entries);
	free(m->slots);
	free(m);
}

static size_t slot_of(const struct meta *m, const char *json)
{
	size_t i = ds__hash_bytes(json, strlen(json)) & m->mask;

	while (m->slots[i] != EMPTY && strcmp(m->pub.entries[m->slots[i]].json, json))
		i = (i + 1) & m->mask;
	return i;
}

/* Room for one more entry, the hash at most half full.  -ENOMEM. */
static int reserve(struct meta *m)
{
	if (m->pub.n >= EMPTY / 4)
		return -ENOMEM;
	if (m->pub.n == m->cap) {
		void *v = ds__grow(m->pub.entries, &m->cap, m->pub.n, sizeof(*m->pub.entries));

		if (!v)
			return -ENOMEM;
		m->pub.entries = v;
	}
	if (!m->slots || 2 * (m->pub.n + 1) > m->mask + 1) {
		size_t slots = m->slots ? 2 * (m->mask + 1) : 64;
		uint32_t *s = malloc(slots * sizeof(*s));

		if (!s)
			return -ENOMEM;
		memset(s, 0xff, slots * sizeof(*s));
		free(m->slots);
		m->slots = s;
		m->mask = slots - 1;
		for (size_t i = 0; i < m->pub.n; i++)
			m->slots[slot_of(m, m->pub.entries[i].json)] = (uint32_t)i;
	}
	return 0;
}

/* e (its strings malloc()ed, json set) taken into m, or released when m
 * has it already.  -ENOMEM (e released). */
static int take_entry(struct meta *m, struct ds_metadata_entry *e)
{
	size_t s;

	if (reserve(m)) {
		entry_release(e);
		return -ENOMEM;
	}
	s = slot_of(m, e->json);
	if (m->slots[s] != EMPTY) {
		entry_release(e);
		return 0;
	}
	m->slots[s] = (uint32_t)m->pub.n;
	m->pub.entries[m->pub.n++] = *e;
	return 0;
}

static yajl_gen_status gen_str(yajl_gen g, const char *s)
{
	return yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

/* g's text, malloc()ed. */
static char *gen_text(yajl_gen g, size_t *len_out)
{
	const unsigned char *buf;
	size_t len;
	char *out;

	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok || !(out = malloc(len + 1)))
		return NULL;
	memcpy(out, buf, len);
	out[len] = 0;
	if (len_out)
		*len_out = len;
	return out;
}

static yajl_gen new_gen(void)
{
	yajl_gen g = yajl_gen_alloc(NULL);

	/* Strings come from our parser (UTF-8 checked) or our caller. */
	if (g)
		yajl_gen_config(g, yajl_gen_validate_utf8, 1);
	return g;
}

DS_API int ds_metadata_add(struct ds_metadata *pub, const char *type, const char *buildid,
			   const char *file, const char *archive)
{
	struct ds_metadata_entry e = { 0 };
	yajl_gen g;
	bool ok;

	if (!pub || !type || !buildid || !file)
		return -EINVAL;
	if (!(g = new_gen()))
		return -ENOMEM;
	/* debuginfod's order of the fields. */
	ok = yajl_gen_map_open(g) == yajl_gen_status_ok && gen_str(g, "type") == yajl_gen_status_ok &&
	     gen_str(g, type) == yajl_gen_status_ok && gen_str(g, "buildid") == yajl_gen_status_ok &&
	     gen_str(g, buildid) == yajl_gen_status_ok && gen_str(g, "file") == yajl_gen_status_ok &&
	     gen_str(g, file) == yajl_gen_status_ok &&
	     (!archive || (gen_str(g, "archive") == yajl_gen_status_ok &&
			   gen_str(g, archive) == yajl_gen_status_ok)) &&
	     yajl_gen_map_close(g) == yajl_gen_status_ok;
	if (!ok) { /* a string that is not UTF-8 */
		yajl_gen_free(g);
		return -EINVAL;
	}
	e.json = gen_text(g, NULL);
	yajl_gen_free(g);
	e.type = strdup(type);
	e.buildid = strdup(buildid);
	e.file = strdup(file);
	e.archive = archive ? strdup(archive) : NULL;
	if (!e.json || !e.type || !e.buildid || !e.file || (archive && !e.archive)) {
		entry_release(&e);
		return -ENOMEM;
	}
	return take_entry((struct meta *)pub, &e);
}

DS_API char *ds_metadata_json(const struct ds_metadata *m, size_t *len_out)
{
	struct ds_strbuf sb = { 0 };

	ds__strbuf_addf(&sb, "{\"results\":[");
	for (size_t i = 0; i < m->n; i++)
		ds__strbuf_addf(&sb, "%s%s", i ? "," : "", m->entries[i].json);
	ds__strbuf_addf(&sb, "],\"complete\":%s}", m->complete ? "true" : "false");
	/* (ds_strbuf keeps what it had on a failed allocation.) */
	if (sb.buf && strcmp(sb.buf + sb.len - 2, "e}")) {
		ds__strbuf_release(&sb);
		return NULL;
	}
	if (len_out)
		*len_out = sb.len;
	return sb.buf;
}

/* ------------------------------------------------------------ the parser */

/*
 * Where the parser is: depth counts the maps and arrays open.  At depth 1
 * (the top object) a key chooses what its value is; "results" must be an
 * array, each of its elements an object, whose events (depth >= 3) are
 * given to a generator as they come; at depth 3 the string values of the
 * known keys are kept.  Anything else is skipped, depth counted.
 */
enum top_key { K_OTHER, K_RESULTS, K_COMPLETE };
enum field { F_NONE, F_TYPE, F_BUILDID, F_FILE, F_ARCHIVE };

struct parse {
	int depth;
	enum top_key key; /* of the value at depth 1 to come */
	bool in_results; /* the results array is open (depth 2) */
	bool have_results, have_complete, complete;
	enum field field; /* of the value at depth 3 to come */
	yajl_gen g; /* the current entry's */
	struct ds_metadata_entry e;
	struct ds_metadata_entry *out;
	size_t n, cap;
	bool nomem;
};

/* A scalar or a container opening, at the current position. */
static bool value_ok(struct parse *p, bool container)
{
	if (p->depth == 0)
		return container; /* the top must be an object */
	if (p->depth == 1 && p->key == K_RESULTS)
		return container; /* (an array: checked by the caller) */
	if (p->depth == 1 && p->key == K_COMPLETE)
		return false; /* a boolean only */
	if (p->in_results && p->depth == 2)
		return container; /* each result an object */
	return true;
}

static bool in_entry(const struct parse *p)
{
	return p->g && p->depth >= 3;
}

static int keep_field(struct parse *p, const unsigned char *s, size_t len)
{
	const char **slot = p->field == F_TYPE	    ? &p->e.type
			    : p->field == F_BUILDID ? &p->e.buildid
			    : p->field == F_FILE    ? &p->e.file
			    : p->field == F_ARCHIVE ? &p->e.archive
						    : NULL;

	if (!slot || p->depth != 3)
		return 1;
	free((char *)*slot);
	if (!(*slot = strndup((const char *)s, len)) || memchr(s, 0, len)) {
		p->nomem = !*slot;
		return 0; /* (a NUL inside a name: not a path) */
	}
	return 1;
}

static int cb_null(void *ctx)
{
	struct parse *p = ctx;

	if (!value_ok(p, false))
		return 0;
	p->field = F_NONE;
	return !in_entry(p) || yajl_gen_null(p->g) == yajl_gen_status_ok;
}

static int cb_boolean(void *ctx, int b)
{
	struct parse *p = ctx;

	if (p->depth == 1 && p->key == K_COMPLETE) {
		p->have_complete = true;
		p->complete = b;
		p->key = K_OTHER;
		return 1;
	}
	if (!value_ok(p, false))
		return 0;
	p->field = F_NONE;
	return !in_entry(p) || yajl_gen_bool(p->g, b) == yajl_gen_status_ok;
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	struct parse *p = ctx;

	if (!value_ok(p, false))
		return 0;
	p->field = F_NONE;
	return !in_entry(p) || yajl_gen_number(p->g, s, len) == yajl_gen_status_ok;
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	struct parse *p = ctx;

	if (!value_ok(p, false))
		return 0;
	if (in_entry(p) && !keep_field(p, s, len))
		return 0;
	p->field = F_NONE;
	return !in_entry(p) || yajl_gen_string(p->g, s, len) == yajl_gen_status_ok;
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct parse *p = ctx;

#define IS(lit) (len == sizeof(lit) - 1 && !memcmp(s, lit, len))
	if (p->depth == 1) {
		p->key = IS("results") ? K_RESULTS : IS("complete") ? K_COMPLETE : K_OTHER;
		/* A key twice: which one counts would be the parser's whim. */
		if ((p->key == K_RESULTS && p->have_results) ||
		    (p->key == K_COMPLETE && p->have_complete))
			return 0;
		return 1;
	}
	if (p->depth == 3 && p->g)
		p->field = IS("type")	   ? F_TYPE
			   : IS("buildid") ? F_BUILDID
			   : IS("file")	   ? F_FILE
			   : IS("archive") ? F_ARCHIVE
					   : F_NONE;
#undef IS
	return !in_entry(p) || yajl_gen_string(p->g, s, len) == yajl_gen_status_ok;
}

static int open_container(struct parse *p, bool map)
{
	if (!value_ok(p, true) || p->depth >= MAX_DEPTH)
		return 0;
	if ((p->depth == 0 || (p->in_results && p->depth == 2)) && !map)
		return 0; /* the answer, and each result, an object */
	if (p->depth == 1 && p->key == K_RESULTS) {
		if (map)
			return 0;
		p->have_results = p->in_results = true;
		p->key = K_OTHER;
		p->depth++;
		return 1;
	}
	if (p->in_results && p->depth == 2) {
		if (!(p->g = new_gen())) {
			p->nomem = true;
			return 0;
		}
		memset(&p->e, 0, sizeof(p->e));
	}
	p->field = F_NONE;
	if (in_entry(p) || (p->g && p->depth == 2)) {
		yajl_gen_status st = map ? yajl_gen_map_open(p->g) : yajl_gen_array_open(p->g);

		if (st != yajl_gen_status_ok)
			return 0;
	}
	if (p->depth == 1)
		p->key = K_OTHER;
	p->depth++;
	return 1;
}

/* The entry whose object just closed: into out[]. */
static int end_entry(struct parse *p)
{
	size_t len;

	p->e.json = gen_text(p->g, &len);
	yajl_gen_free(p->g);
	p->g = NULL;
	if (!p->e.json) {
		p->nomem = true;
		entry_release(&p->e);
		return 0;
	}
	if (len > MAX_ENTRY || p->n >= MAX_RESULTS) {
		entry_release(&p->e);
		return 0;
	}
	if (p->n == p->cap) {
		void *v = ds__grow(p->out, &p->cap, p->n, sizeof(*p->out));

		if (!v) {
			p->nomem = true;
			entry_release(&p->e);
			return 0;
		}
		p->out = v;
	}
	p->out[p->n++] = p->e;
	memset(&p->e, 0, sizeof(p->e));
	return 1;
}

static int close_container(struct parse *p, bool map)
{
	p->depth--;
	p->field = F_NONE;
	if (p->in_results && p->depth == 1) {
		p->in_results = false;
		return 1;
	}
	if (p->g && p->depth >= 2) {
		yajl_gen_status st = map ? yajl_gen_map_close(p->g) : yajl_gen_array_close(p->g);

		if (st != yajl_gen_status_ok)
			return 0;
		if (p->depth == 2)
			return end_entry(p);
	}
	return 1;
}

static int cb_start_map(void *ctx)
{
	return open_container(ctx, true);
}

static int cb_end_map(void *ctx)
{
	return close_container(ctx, true);
}

static int cb_start_array(void *ctx)
{
	return open_container(ctx, false);
}

static int cb_end_array(void *ctx)
{
	return close_container(ctx, false);
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_boolean,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end_map,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end_array,
};

DS_API int ds_metadata_parse(struct ds_metadata *pub, const char *buf, size_t len)
{
	struct meta *m = (struct meta *)pub;
	struct parse p = { 0 };
	yajl_handle h;
	yajl_status st;
	int err = 0;

	if (!m || (!buf && len))
		return -EINVAL;
	if (!len) { /* (an empty 200: yajl is not given a NULL buffer) */
		m->pub.complete = false;
		return -EBADMSG;
	}
	if (!(h = yajl_alloc(&callbacks, NULL, &p)))
		return -ENOMEM;
	st = yajl_parse(h, (const unsigned char *)buf, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	yajl_free(h);
	if (p.g) {
		yajl_gen_free(p.g);
		entry_release(&p.e);
	}
	if (p.nomem)
		err = -ENOMEM;
	else if (st != yajl_status_ok || !p.have_results || !p.have_complete)
		err = -EBADMSG;
	for (size_t i = 0; i < p.n; i++)
		if (err)
			entry_release(&p.out[i]);
		else if (take_entry(m, &p.out[i]))
			err = -ENOMEM; /* (the rest released as we go) */
	free(p.out);
	if (err)
		m->pub.complete = false;
	else
		m->pub.complete &= p.complete;
	return err;
}

/* ------------------------------------------------------------ the query */

/* One server's transfer: the xfer first (transfer.c's hooks get it). */
struct mxfer {
	struct xfer x;
	struct ds_strbuf body;
	int attempts;
	int64_t retry_at_ns; /* 0: running or done */
	bool done;
	int err;
};

struct mquery {
	struct ds_context *ctx;
	struct ds__transfers t;
	struct mxfer *xs;
	int n, running;
	const char *key, *value;
	char *const *headers;
};

static bool meta_body(struct xfer *x, size_t n)
{
	struct mquery *q = x->user;
	const char *why;

	if (x->bytes + n > ds__transfer_body_limit(x, &why)) {
		ds_warn(q->ctx, "%s: its /metadata answer passes %s; stopped",
			q->ctx->fetch_cfg.urls[x->server], why);
		x->too_big = true;
		return false;
	}
	return true;
}

static bool meta_take(struct xfer *x, const char *p, size_t n)
{
	struct mxfer *mx = (struct mxfer *)x;
	size_t need = mx->body.len + n + 1;

	if (need > mx->body.cap) {
		size_t cap = mx->body.cap ? mx->body.cap : 4096;
		char *b;

		while (cap < need)
			cap *= 2;
		if (!(b = realloc(mx->body.buf, cap))) {
			x->local_err = ENOMEM;
			return false;
		}
		mx->body.buf = b;
		mx->body.cap = cap;
	}
	memcpy(mx->body.buf + mx->body.len, p, n);
	mx->body.len += n;
	mx->body.buf[mx->body.len] = 0;
	return true;
}

static void meta_wrote(struct xfer *x, size_t n)
{
}

static int start_one(struct mquery *q, struct mxfer *mx, uint64_t maxsize)
{
	const char *base = q->ctx->fetch_cfg.urls[mx->x.server];
	char *k = NULL, *v = NULL, *url = NULL;
	int err;

	mx->body.len = 0;
	mx->x.bytes = 0;
	mx->x.too_big = false;
	mx->x.local_err = 0;
	mx->x.bad = NULL;
	if ((err = ds__transfer_new(&q->t, &mx->x, false)))
		return err;
	mx->x.extra_headers = q->headers;
	mx->x.maxsize = maxsize;
	mx->x.maxsize_why = "the metadata size limit";
	err = -ENOMEM;
	if ((k = ds__transfer_escape(&mx->x, q->key)) && (v = ds__transfer_escape(&mx->x, q->value)) &&
	    asprintf(&url, "%s/metadata?key=%s&value=%s", base, k, v) >= 0)
		err = ds__transfer_start(&mx->x, url);
	else
		url = NULL;
	free(k);
	free(v);
	free(url);
	if (err) {
		ds__transfer_stop(&mx->x);
		return err;
	}
	q->running++;
	return 0;
}

static void meta_ended(void *arg, struct xfer *x, int err, long code, bool down)
{
	struct mquery *q = arg;
	struct mxfer *mx = (struct mxfer *)x;

	ds_info(q->ctx, "metadata %s=%s from %s: %ld %s, %llu bytes", q->key, q->value,
		q->ctx->fetch_cfg.urls[x->server], code, err ? ds_strerror(err) : "ok",
		(unsigned long long)x->bytes);
	ds__transfer_stop(x);
	q->running--;
	if (err && ds__transfer_transient(err) && mx->attempts < q->ctx->fetch_cfg.retry_limit) {
		int64_t backoff = (100LL << mx->attempts) * 1000000;

		mx->attempts++;
		mx->retry_at_ns = ds__now_ns() + (backoff > 2000000000 ? 2000000000 : backoff);
		return;
	}
	mx->done = true;
	mx->err = err;
	if (err == -ENOENT)
		mx->err = -EPROTO; /* a server without /metadata (404) */
}

DS_API int ds_metadata_query(struct ds_context *ctx, const char *key, const char *value,
			     struct ds_metadata *m, const struct ds_metadata_opts *opts)
{
	static const struct ds__transfer_hooks hooks = { .body = meta_body,
							 .wrote = meta_wrote,
							 .take = meta_take };
	const char *const *headers = DS_OPT(opts, headers, NULL);
	uint64_t maxsize = DS_OPT(opts, maxsize, (uint64_t)0) ?: METADATA_MAXSIZE_DEFAULT;
	struct mquery q = { .ctx = ctx, .key = key, .value = value };
	size_t vlen = value ? strlen(value) : 0, klen = key ? strlen(key) : 0;
	int err = 0, nurls = 0, best = 0;

	if (!ctx || !m || !klen || klen > MAX_KEY || !vlen || vlen > MAX_VALUE ||
	    !ds__fetch_valid_headers(headers))
		return -EINVAL;
	for (const char *c = key; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
			return -EINVAL;
	while (ctx->fetch_cfg.urls[nurls])
		nurls++;
	if (!nurls) {
		m->complete = false;
		return -ENOSYS;
	}
	if (!ds__transfer_load()) {
		ds_err(ctx, "cannot load libcurl.so.4: debuginfod servers cannot be asked");
		m->complete = false;
		return -ENOSYS;
	}
	q.headers = (char *const *)headers;
	if (!(q.xs = calloc((size_t)nurls, sizeof(*q.xs))))
		return -ENOMEM;
	q.n = nurls;
	if ((err = ds__transfers_init(&q.t, &ctx->fetch_cfg, &hooks)))
		goto out;
	for (int s = 0; s < nurls; s++) {
		struct mxfer *mx = &q.xs[s];

		mx->x.user = &q;
		mx->x.fd = -1;
		mx->x.server = s;
		if (!strncmp(ctx->fetch_cfg.urls[s], "file://", 7)) {
			ds_info(ctx, "%s: a file:// server has no /metadata", ctx->fetch_cfg.urls[s]);
			mx->done = true;
			mx->err = -EPROTO;
		} else if ((mx->err = start_one(&q, mx, maxsize))) {
			mx->done = true;
		}
	}
	for (;;) {
		int64_t now = ds__now_ns(), wake = INT64_MAX;
		bool pending = false;

		if (ds__cancelled(ctx)) {
			err = -ECANCELED;
			break;
		}
		for (int s = 0; s < nurls; s++) {
			struct mxfer *mx = &q.xs[s];

			if (mx->done)
				continue;
			pending = true;
			if (!mx->retry_at_ns)
				continue;
			if (mx->retry_at_ns <= now) {
				mx->retry_at_ns = 0;
				if ((mx->err = start_one(&q, mx, maxsize)))
					mx->done = true;
			} else if (mx->retry_at_ns < wake) {
				wake = mx->retry_at_ns;
			}
		}
		if (!pending)
			break;
		/* (the cancel flag is looked at at least every 100 ms) */
		ds__transfers_run(&q.t, wake == INT64_MAX ? 100
					: wake <= now	  ? 0
							  : (int)((wake - now) / 1000000 + 1) > 100
							  ? 100
							  : (int)((wake - now) / 1000000 + 1));
		ds__transfers_ended(&q.t, meta_ended, &q);
	}
	for (int s = 0; s < nurls; s++) {
		struct mxfer *mx = &q.xs[s];
		int perr = mx->err;

		if (mx->x.easy) /* cancelled mid-way */
			ds__transfer_stop(&mx->x);
		if (!mx->done) {
			m->complete = false;
			continue;
		}
		if (!perr) {
			perr = ds_metadata_parse(m, mx->body.buf, mx->body.len);
			if (perr == -EBADMSG)
				ds_warn(ctx, "%s: its /metadata answer is not {\"results\":[...],"
					     "\"complete\":...}; not used",
					ctx->fetch_cfg.urls[s]);
		}
		if (!perr) {
			m->answered++;
			continue;
		}
		m->complete = false;
		if (!best || best == -ENOSYS || (best == -ECONNREFUSED && perr != -ECONNREFUSED))
			best = perr;
	}
	m->servers += (unsigned)nurls;
	if (!err && !m->answered)
		err = best ? best : -EIO;
out:
	ds__transfers_release(&q.t);
	for (int s = 0; s < q.n; s++)
		free(q.xs[s].body.buf);
	free(q.xs);
	return err;
}

/* ------------------------------------------------------------ glob */

/*
 * fnmatch(pattern, s, FNM_PATHNAME), as debuginfod's "glob" key filters
 * its results, with a cost bounded by its own design rather than by the
 * C library's (a textbook fnmatch() retries every extent of every '*';
 * glibc 2.36's answered each hostile pattern tried in under 0.1 ms, but
 * that is its implementation's, not a contract).  Here only the last '*'
 * is ever extended, which is exact because nothing but a '/' of the
 * pattern matches a '/' of the name: the pattern's and the name's components pair up one to one, and
 * within a component the classic greedy match is correct.  O(len(p) x
 * len(s)) at worst.  '?' and brackets ("[a-z]", "[!x]" or "[^x]", "]"
 * first is literal) match one character other than '/'; '\' quotes the
 * next one; a '[' without its ']' is itself.  Not supported: character
 * classes and collating elements, read as plain sets ("[[:alpha:]]" is
 * one of "[:alph" then a "]"), where fnmatch() knows them.  Bytes are
 * compared as bytes (the C locale).
 */

/* The bracket expression at p[0] == '[' against c: 1 match, 0 no match;
 * *end past its ']'.  -1: not a bracket expression (no closing ']'). */
static int bracket(const char *p, unsigned char c, const char **end)
{
	const char *q = p + 1;
	bool neg = false, hit = false;

	if (*q == '!' || *q == '^') {
		neg = true;
		q++;
	}
	for (bool first = true; first || *q != ']'; first = false) {
		unsigned char lo, hi;

		if (!*q)
			return -1;
		if (*q == '\\' && q[1])
			q++;
		lo = (unsigned char)*q++;
		hi = lo;
		if (q[0] == '-' && q[1] && q[1] != ']') {
			q++;
			if (*q == '\\' && q[1])
				q++;
			hi = (unsigned char)*q++;
		}
		if (c >= lo && c <= hi)
			hit = true;
	}
	*end = q + 1;
	return c != '/' && hit != neg;
}

/* One element of the pattern at p (not '*', not NUL) against c: whether
 * it matches, and *next past it. */
static bool one(const char *p, unsigned char c, const char **next)
{
	int b;

	switch (*p) {
	case '?':
		*next = p + 1;
		return c != '/';
	case '[':
		b = bracket(p, c, next);
		if (b >= 0)
			return b;
		*next = p + 1;
		return c == '[';
	case '\\':
		if (p[1]) {
			*next = p + 2;
			return c == (unsigned char)p[1];
		}
		*next = p + 1; /* a trailing '\' is itself */
		return c == '\\';
	default:
		*next = p + 1;
		return c == (unsigned char)*p;
	}
}

bool ds__metadata_glob(const char *p, const char *s)
{
	const char *star = NULL, *star_s = NULL;

	for (;;) {
		const char *next;

		if (*p == '*') {
			while (*p == '*')
				p++;
			star = p;
			star_s = s;
			continue;
		}
		if (!*s) {
			if (!*p)
				return true;
		} else if (*p && one(p, (unsigned char)*s, &next)) {
			p = next;
			s++;
			continue;
		}
		/* A mismatch: the last '*' takes one more character, if it
		 * may (not a '/'); else nothing can match. */
		if (!star || !*star_s || *star_s == '/')
			return false;
		p = star;
		s = ++star_s;
	}
}
