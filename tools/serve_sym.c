/* dsostore serve: POST /symbolize (see tools/serve.h, docs/serve.md).
 *
 * The body is parsed into compact records (tools/serve_symreq.c), then
 * answered block by block: each block one ds_symbolize_build_ids() call,
 * its answers written as text the response streams from.  The debuginfo
 * of every build ID of the request is looked for at once here, on the
 * worker thread, before any frame is answered (one ds_store_prefetch(), or
 * the call of a request's only block); its DSOs are held until the
 * response is done, so later blocks find them searched.
 *
 * A request of one block is written on the HTTP thread as MHD asks for
 * more of the response.  A longer one gets producers (struct producer,
 * sv->sym_threads of them, one per core): producer p symbolizes and writes
 * blocks p, p + P, p + 2P..., each into two buffers of about OUT_HIGH
 * bytes in turn, while the HTTP thread sends the other; the HTTP thread
 * takes the blocks in order.  When the next buffer is not written yet, the
 * connection is suspended from the content reader (as libmicrohttpd
 * allows) and resumed by the producer that fills it.  A request of a
 * million frames holds its 16-byte records, P blocks' answers and 2P
 * buffers of text, never all its answers. */
#define _GNU_SOURCE
#include "serve.h"
#include "serve_symreq.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Frames a block: BLOCK_SMALL, or BLOCK_LARGE for a request of at least
 * four such blocks.  A block's lookups go in address order, and the more
 * of them, the closer together they land in the index (the CLI's -e
 * blocks measured the same: tools/cmd_symbolize.c, EXE_LINES).  Two POSTs
 * of bench_serve.sh's million frames under callgrind: 8.09G instructions,
 * 140.7M D1 and 58.9M last-level misses with 16,384; 7.67G, 127.5M and
 * 49.1M with 65,536 (32,768 in between); node CPU, median of 15 POSTs,
 * 1,290 ms against 1,030 (with the body's huge pages), VmHWM 165 MB
 * against 172.  A shorter request keeps the small block, so that it still
 * has a block for each producer. */
#define BLOCK_SMALL 16384
#define BLOCK_LARGE 65536
/* Answers are written until a buffer holds this much, then sent. */
#define OUT_HIGH (256u << 10)

#define SYM_FLAGS (DS_SYM_DEMANGLE | DS_SYM_INLINES | DS_SYM_LLVM_NAMES)

/* A buffer of text: written by its producer while free, sent by the HTTP
 * thread once ready (then the producer's again). */
struct chunk {
	struct symout out;
	size_t sent;
	bool ready, last; /* last: the block's final text */
};

struct symstream;

struct producer {
	struct symstream *s;
	pthread_t thread;
	bool started;
	struct ds_sym_batch *batch;
	struct ds_sym_ref *refs; /* the block's, as the library takes them */
	const struct ds_sym_answer *ans; /* the block's, NULL: none (err) */
	int err;
	size_t block_start, block_end; /* frames [start, end) are in ans */
	struct chunk buf[2];
	unsigned int fill, take; /* the buffer written next, sent next */
};

struct symstream {
	struct serve *sv;
	struct MHD_Connection *conn;
	struct symreq rq;
	struct ds_dso **dsos; /* the request's, held: searched once */
	size_t block; /* frames a block (BLOCK_SMALL or BLOCK_LARGE) */
	size_t nblocks;
	unsigned int np; /* producers; 0: written on the HTTP thread */
	struct producer *prod; /* nprod of them (prod[0]'s batch: block 0's) */
	unsigned int nprod;
	bool sync; /* lock and cond made */

	/* np == 0: the text written as it is sent */
	struct symout out;
	size_t sent, done; /* of out; frames written */
	bool tail; /* the last text written */

	/* np > 0 */
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a buffer freed, or stop */
	size_t next_block; /* the block the HTTP thread sends */
	bool waiting; /* the connection suspended for want of text */
	bool stop; /* the response is gone: producers end */
	bool failed; /* out of memory: the response ends short */
};

static void stream_free(void *cls)
{
	struct symstream *s = cls;

	if (s->sync) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
	}
	for (unsigned int p = 0; s->prod && p < s->nprod; p++) {
		struct producer *pr = &s->prod[p];

		if (pr->started)
			pthread_join(pr->thread, NULL);
		ds_sym_batch_free(pr->batch);
		free(pr->refs);
		symout_release(&pr->buf[0].out);
		symout_release(&pr->buf[1].out);
	}
	if (s->sync) {
		pthread_mutex_destroy(&s->lock);
		pthread_cond_destroy(&s->cond);
	}
	free(s->prod);
	for (size_t m = 0; s->dsos && m < s->rq.nids; m++)
		ds_dso_put(s->dsos[m]);
	free(s->dsos);
	symreq_release(&s->rq);
	symout_release(&s->out);
#ifdef __GLIBC__
	/* What the producers' batches took stays in the malloc arenas of
	 * their threads (one each, a new thread's arena chosen in turn),
	 * which glibc gives back only from a heap's top: after a long
	 * answer the node held some 25 MB per arena it had used, over its
	 * --mem-budget in bench_serve's run.  Given back here, once per
	 * long answer (a walk of the arenas: not per small request). */
	if (s->np)
		malloc_trim(0);
#endif
	free(s);
}

/* Block b's answers, into pr.  A bad frame goes in as a module past the
 * IDs: answered as an error without work, its answer not used. */
static void symbolize_block(struct symstream *s, struct producer *pr, size_t b)
{
	size_t start = b * s->block, got;
	size_t n = s->rq.n - start < s->block ? s->rq.n - start : s->block;
	int rc;

	for (size_t k = 0; k < n; k++) {
		pr->refs[k] = s->rq.frames[start + k];
		if (pr->refs[k].flags & SYMREQ_BAD)
			pr->refs[k] = (struct ds_sym_ref){ .module = UINT32_MAX };
	}
	rc = ds_symbolize_build_ids(s->sv->store, s->rq.ids, s->rq.nids, pr->refs, n, SYM_FLAGS,
				    pr->batch);
	pr->ans = ds_sym_batch_answers(pr->batch, &got);
	if (got != n)
		pr->ans = NULL;
	pr->err = rc < 0 ? rc : -EIO;
	pr->block_start = start;
	pr->block_end = start + n;
}

/* Frames [*at, pr's block end) into o until it holds OUT_HIGH bytes; the
 * node's counters once per call, not twice per frame. */
static void write_frames(struct symstream *s, struct producer *pr, struct symout *o, size_t *at)
{
	static const enum serve_metric by_status[] = {
		[SYMREQ_SYMBOLIZED] = SM_SYM_FOUND,	[SYMREQ_NO_SYMBOL] = SM_SYM_NO_SYMBOL,
		[SYMREQ_NO_DEBUGINFO] = SM_SYM_NO_DEBUGINFO, [SYMREQ_BAD_INPUT] = SM_SYM_BAD,
		[SYMREQ_ERROR] = SM_SYM_ERROR,
	};
	uint64_t by[SYMREQ_ERROR + 1] = { 0 }, frames = 0;

	while (o->len < OUT_HIGH && *at < pr->block_end && !o->nomem) {
		const struct ds_sym_answer *a = pr->ans ? &pr->ans[*at - pr->block_start] : NULL;

		if (s->rq.frames[*at].flags & SYMREQ_BAD)
			a = NULL;
		by[symout_frame(o, &s->rq, *at, a, pr->err)]++;
		frames++;
		++*at;
	}
	serve_count(s->sv, SM_SYM_FRAMES, frames);
	for (size_t k = 0; k <= SYMREQ_ERROR; k++)
		if (by[k])
			serve_count(s->sv, by_status[k], by[k]);
}

/* ---- one block: written on the HTTP thread */

static void write_more(struct symstream *s)
{
	struct producer *pr = &s->prod[0];

	while (s->out.len < OUT_HIGH && s->done < s->rq.n && !s->out.nomem) {
		if (s->done == pr->block_end)
			symbolize_block(s, pr, s->done / s->block);
		write_frames(s, pr, &s->out, &s->done);
	}
	if (s->done == s->rq.n && !s->tail) {
		symout_tail(&s->out, &s->rq);
		s->tail = true;
	}
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct symstream *s = cls;
	size_t n;

	(void)pos;
	if (s->sent == s->out.len) {
		s->out.len = s->sent = 0;
		write_more(s);
		if (s->out.nomem)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (!s->out.len)
			return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = s->out.len - s->sent < max ? s->out.len - s->sent : max;
	memcpy(buf, s->out.buf + s->sent, n);
	s->sent += n;
	return (ssize_t)n;
}

/* ---- longer: producers */

/* Wait until pr's next buffer is free; false: stop. */
static bool wait_free(struct symstream *s, struct chunk *c)
{
	bool ok;

	pthread_mutex_lock(&s->lock);
	while (c->ready && !s->stop)
		pthread_cond_wait(&s->cond, &s->lock);
	ok = !s->stop;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

/* c is written: the HTTP thread's, resumed if it waits for text. */
static void publish(struct symstream *s, struct chunk *c, bool failed)
{
	pthread_mutex_lock(&s->lock);
	c->ready = true;
	s->failed |= failed;
	if (s->waiting) {
		s->waiting = false;
		MHD_resume_connection(s->conn);
	}
	pthread_mutex_unlock(&s->lock);
}

static void *produce(void *arg)
{
	struct producer *pr = arg;
	struct symstream *s = pr->s;
	size_t p = (size_t)(pr - s->prod);

	for (size_t b = p; b < s->nblocks; b += s->np) {
		size_t at = b * s->block;
		bool last;

		symbolize_block(s, pr, b);
		do {
			struct chunk *c = &pr->buf[pr->fill];

			if (!wait_free(s, c))
				return NULL;
			c->out.len = c->sent = 0;
			if (!b && at == 0)
				symout_head(&c->out, &s->rq);
			write_frames(s, pr, &c->out, &at);
			last = at == pr->block_end;
			if (last && b + 1 == s->nblocks)
				symout_tail(&c->out, &s->rq);
			c->last = last;
			pr->fill ^= 1;
			publish(s, c, c->out.nomem);
			if (c->out.nomem)
				return NULL;
		} while (!last);
	}
	return NULL;
}

static ssize_t stream_take(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct symstream *s = cls;
	struct producer *pr;
	struct chunk *c;
	size_t n;

	(void)pos;
	pthread_mutex_lock(&s->lock);
	if (s->failed) {
		pthread_mutex_unlock(&s->lock);
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	if (s->next_block == s->nblocks) {
		pthread_mutex_unlock(&s->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	pr = &s->prod[s->next_block % s->np];
	c = &pr->buf[pr->take];
	if (!c->ready) {
		/* (suspended under the lock: a producer resumes it only after) */
		s->waiting = true;
		MHD_suspend_connection(s->conn);
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	pthread_mutex_unlock(&s->lock);
	/* a ready buffer is this thread's until it is given back */
	n = c->out.len - c->sent < max ? c->out.len - c->sent : max;
	memcpy(buf, c->out.buf + c->sent, n);
	c->sent += n;
	if (c->sent == c->out.len) {
		pthread_mutex_lock(&s->lock);
		c->ready = false;
		pr->take ^= 1;
		if (c->last)
			s->next_block++;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
	}
	return (ssize_t)n;
}

/* Start s->nprod producers (fewer if memory is short); false: they could
 * not all start (the caller answers 500; stream_free() stops those that
 * did). */
static bool start_producers(struct symstream *s)
{
	unsigned int np = 1;

	if (pthread_mutex_init(&s->lock, NULL))
		return false;
	if (pthread_cond_init(&s->cond, NULL)) {
		pthread_mutex_destroy(&s->lock);
		return false;
	}
	s->sync = true;
	for (; np < s->nprod; np++) {
		s->prod[np].batch = ds_sym_batch_new();
		s->prod[np].refs = calloc(s->block, sizeof(*s->prod[np].refs));
		if (!s->prod[np].batch || !s->prod[np].refs)
			break;
	}
	/* (np is read by the producers: set before the first starts) */
	s->np = np;
	for (unsigned int p = 0; p < np; p++) {
		/* A producer that did not start would leave its blocks
		 * missing: the response is not made. */
		if (pthread_create(&s->prod[p].thread, NULL, produce, &s->prod[p]))
			return false;
		s->prod[p].started = true;
	}
	return true;
}

/* ---- a large text body, parsed as it comes */

/* Bytes a parser call takes at most before it looks again whether the
 * body was abandoned (and how much more came). */
#define PARSE_STEP (1u << 20)

struct symparse {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	const char *body;
	size_t avail; /* bytes of body written (under lock) */
	size_t seen; /* what the thread had taken when it last looked (under lock) */
	bool end, waiting; /* under lock; end: the body is whole */
	bool abandon; /* under lock: symparse_free() waits for the thread */
	bool joined;
	/* the thread's, read once it is joined */
	struct symreq rq;
	struct symreq_text st;
	struct symreq_error err;
	int ret;
	bool taken; /* rq given by symparse_take() */
};

static void *parse_run(void *arg)
{
	struct symparse *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		size_t avail = p->avail;
		bool end = p->end;

		if (p->abandon)
			break;
		if (!end && avail - p->st.at < PARSE_STEP) {
			p->waiting = true;
			pthread_cond_wait(&p->cond, &p->lock);
			p->waiting = false;
			continue;
		}
		pthread_mutex_unlock(&p->lock);
		/* (a piece at a time: an abandoned body is let go soon) */
		if (avail - p->st.at > PARSE_STEP) {
			avail = p->st.at + PARSE_STEP;
			end = false;
		}
		p->ret = symreq_text_more(&p->rq, &p->st, p->body, avail, end, &p->err);
		pthread_mutex_lock(&p->lock);
		p->seen = p->st.at;
		if (p->ret || (end && avail == p->avail))
			break; /* refused (the rest is not read), or done */
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct symparse *symparse_start(const char *body, bool offsets, size_t max_frames)
{
	struct symparse *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->body = body;
	symreq_text_start(&p->rq, &p->st, offsets, max_frames);
	if (pthread_mutex_init(&p->lock, NULL))
		goto no_lock;
	if (pthread_cond_init(&p->cond, NULL))
		goto no_cond;
	if (!pthread_create(&p->thread, NULL, parse_run, p))
		return p;
	pthread_cond_destroy(&p->cond);
no_cond:
	pthread_mutex_destroy(&p->lock);
no_lock:
	free(p);
	return NULL;
}

void symparse_avail(struct symparse *p, size_t avail)
{
	pthread_mutex_lock(&p->lock);
	p->avail = avail;
	/* (woken for a piece's worth, not for each read of the socket) */
	if (p->waiting && avail - p->seen >= PARSE_STEP)
		pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void symparse_end(struct symparse *p)
{
	pthread_mutex_lock(&p->lock);
	p->end = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static void parse_join(struct symparse *p)
{
	if (!p->joined)
		pthread_join(p->thread, NULL);
	p->joined = true;
}

void symparse_free(struct symparse *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->abandon = true; /* (stops at its next piece, if not done) */
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	parse_join(p);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	if (!p->taken)
		symreq_release(&p->rq);
	free(p);
}

int symparse_take(struct symparse *p, struct symreq *rq, struct symreq_error *err)
{
	parse_join(p);
	if (p->ret) {
		*err = p->err; /* (p->rq holds nothing) */
		return -1;
	}
	*rq = p->rq;
	p->taken = true;
	return 0;
}

struct MHD_Response *serve_symbolize(struct serve *sv, struct MHD_Connection *conn,
				     struct symreq *rq, unsigned int *status)
{
	struct symstream *s = calloc(1, sizeof(*s));
	struct MHD_Response *resp;
	unsigned int np;

	if (!s) {
		symreq_release(rq);
		*status = 500;
		return serve_error(sv, 500, "out of memory");
	}
	s->sv = sv;
	s->conn = conn;
	s->rq = *rq; /* (ours now: released with the stream) */
	*rq = (struct symreq){ 0 };
	s->block = s->rq.n >= 4 * BLOCK_LARGE ? BLOCK_LARGE : BLOCK_SMALL;
	s->nblocks = (s->rq.n + s->block - 1) / s->block;
	np = sv->sym_threads ? sv->sym_threads : 1;
	if (np > s->nblocks)
		np = (unsigned int)s->nblocks;
	s->dsos = calloc(s->rq.nids ? s->rq.nids : 1, sizeof(*s->dsos));
	s->nprod = np ? np : 1;
	s->prod = calloc(s->nprod, sizeof(*s->prod));
	if (!s->dsos || !s->prod)
		goto nomem;
	for (unsigned int p = 0; p < s->nprod; p++)
		s->prod[p].s = s;
	s->prod[0].batch = ds_sym_batch_new();
	s->prod[0].refs = calloc(s->block, sizeof(*s->prod[0].refs));
	if (!s->prod[0].batch || !s->prod[0].refs)
		goto nomem;
	for (size_t m = 0; m < s->rq.nids; m++) {
		struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID, .build_id = s->rq.ids[m] };

		/* (NULL: ds_symbolize_build_ids() answers its frames why.) */
		s->dsos[m] = ds_store_findnew(sv->store, NULL, &id);
	}
	/* Every debuginfo of the request looked for at once, before the
	 * first frame is answered: by the first block's call when there is
	 * one block; else here, so that the producers start together on
	 * their blocks (the first among them) instead of after a block
	 * answered on this thread alone. */
	if (s->nblocks == 1)
		symbolize_block(s, &s->prod[0], 0);
	else if (s->nblocks > 1)
		ds_store_prefetch(sv->store, NULL);
	if (s->nblocks <= 1) {
		symout_head(&s->out, &s->rq);
		write_more(s);
		if (s->out.nomem)
			goto nomem;
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 << 10, stream_read,
							 s, stream_free);
	} else {
		if (!start_producers(s))
			goto nomem;
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, OUT_HIGH, stream_take,
							 s, stream_free);
	}
	if (!resp)
		goto nomem;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				s->rq.json ? "application/json" : "application/x-ndjson");
	serve_count(sv, SM_SYM_REQUESTS, 1);
	*status = 200;
	return resp;
nomem:
	stream_free(s);
	*status = 500;
	return serve_error(sv, 500, "out of memory");
}
