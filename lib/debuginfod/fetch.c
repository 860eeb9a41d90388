/* SPDX-License-Identifier: MIT */
/*
 * The debuginfod client: one fetcher per context, one event-loop thread
 * moving its transfers along (transfer.c: libcurl, and the HTTP side of a
 * download, are that file's alone).
 *
 * A request for (build ID, artifact[, arg]) becomes a job; a second request
 * for the same key while the job runs joins it, so each key costs one
 * download however many threads, stores or batches ask.  A job:
 *   1. looks in the cache (a peer process may have finished meanwhile);
 *   2. takes the entry's flock (non-blocking; retried on a timer, so one
 *      process downloads and the others then find the file; a holder that
 *      makes no progress is given up on: lock_wait_over());
 *   3. asks every live server at once.  The first transfer to deliver body
 *      bytes with a 200 wins and writes to a temporary file; the others are
 *      dropped.  If the winner fails mid-body, the others are asked again.
 *      A body is bounded as it arrives (ds__transfer_body_limit(), watch_elf());
 *   4. checks what arrived (one whole ELF with the requested build ID), then
 *      renames it into place; "not found" from every server is cached as a
 *      miss, nothing else is.
 * Transient failures (refused, reset, 5xx but 503, which debuginfod uses
 * for invalid requests) are retried with backoff up to retry_limit.  A
 * failure of ours (writing the cache) ends the job with its errno at once.  A
 * server that times out or cannot be resolved is marked down for a while,
 * and everything queued on it is failed at once, so a dead server costs
 * the timeout once, not once per build ID.
 *
 * Threads: callers only touch the job table, the attach lists and results,
 * under f->lock.  Everything about transfers belongs to the loop thread.
 * A committer thread answers the callers of a download it has put in place
 * (job_answer(), under f->lock) and hands the job back to the loop, which
 * then forgets it.
 */
#define _GNU_SOURCE
#include "transfer.h"
#include "ima.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define SERVER_DOWN_NS (60 * 1000000000LL)
#define LOCK_RETRY_NS (25 * 1000000LL)
/* How often a lock waiter looks at the holder's temporary file. */
#define LOCK_PROGRESS_NS (500 * 1000000LL)
/* A lock holder making less progress than a download may (elfutils'
 * DEBUGINFOD_TIMEOUT: 100 KiB within that many seconds) is given up on. */
#define LOCK_PROGRESS_BYTES (100 << 10)
/* The lock wait's bound when DEBUGINFOD_TIMEOUT is 0 (no low-speed limit). */
#define LOCK_WAIT_DEFAULT_S 90
#define TABLE_SIZE 1024 /* buckets; chains grow past it, that is fine */
/* An ELF body is watched for its extent (watch_elf()) from this many bytes
 * on: at most this much of a bad one is taken before it is stopped. */
#define WATCH_FROM (64 << 10)
/* The loop's longest sleep while commits it has not taken back are out. */
#define REAP_MS 50

enum srv_status { S_ASK, S_RUNNING, S_RETRY, S_NOTFOUND, S_FAILED };

struct server {
	char *url; /* without trailing slash */
	bool is_file;
	unsigned char ima; /* enum ds_ima_policy: DEBUGINFOD_URLS' ima: word before it */
	int64_t down_until_ns;
	int down_err;
};

struct job_server {
	enum srv_status status;
	int attempts;
	int err;
	int64_t retry_at_ns;
};

/* A caller of a job: a waiter's (ds_fetch_batch(), the caller's thread
 * waits), or, w NULL, ds_fetch_start()'s (done called, then the attach
 * freed, by whichever thread ended the job, after it let go of f->lock). */
struct attach {
	struct waiter *w;
	void (*done)(void *user, struct ds_fetch_req *req); /* (w NULL) */
	/* (w NULL) instead of done: answered from the spool, before the
	 * commit, when the body is whole there (answer_bodies()) */
	void (*done_body)(void *user, struct ds_fetch_req *req, const struct ds_fetch_body *body);
	void *user;
	struct ds_fetch_req *req;
	struct job *job; /* NULL once the result is in */
	struct attach *next; /* in job->attached */
	bool whole; /* a section job's answer: take the whole file (job->whole) */
};

struct waiter {
	pthread_cond_t cond;
	size_t pending;
};

#define COMMITTERS_MAX 32

/* NEW: queued, holding nothing (so a batch of thousands holds no fds);
 * LOCK_WAIT: another process downloads it; RUNNING: admitted. */
enum job_state { J_NEW, J_LOCK_WAIT, J_RUNNING };

/* A finished download on its way through a committer thread, which
 * verifies, fsync()s and renames it off the event loop. */
struct commit {
	struct job *job;
	struct xfer *x;
	char *url; /* where the bytes came from, after redirects */
	time_t mtime;
	int err;
	bool verified; /* by the loop, in memory (a body whole in the spool) */
	bool answered; /* the committer gave its callers the file */
	struct commit *next;
};

struct job {
	/* Key. */
	struct ds_build_id bid;
	char hex[2 * DS_BUILD_ID_MAX + 1];
	enum ds_artifact what;
	char *arg;
	char *name; /* cache entry name */
	uint64_t hash;
	struct job *hnext; /* table chain, under f->lock */
	struct attach *attached; /* under f->lock */
	bool cancel; /* under f->lock */
	/* A section no server may be asked for, or that those asked
	 * cannot give: the callers cut it from the debuginfo instead. */
	bool whole;
	_Atomic uint64_t bytes; /* read by progress */

	/* Loop thread only. */
	struct job *next, *prev; /* active list, oldest first */
	enum job_state state;
	bool admitted; /* holds its entry directory and transfers */
	struct xfer *committing; /* handed to the committer thread */
	int64_t wake_at_ns;
	int64_t lock_wait_ns, lock_progress_ns, lock_looked_ns; /* waiting on a flock */
	uint64_t lock_progress_bytes;
	int reopens; /* the entry was removed under us and made again */
	int dirfd;
	struct xfer *xfers, *winner;
	bool winner_new;
	struct job_server *srv;
	/* The request headers of the call that made the job (a copy: the
	 * job may outlive that call), one block; NULL: none. */
	char **headers;
};

struct ds_fetcher {
	struct ds_context *ctx;
	const struct ds_fetch_config *cfg;
	struct ds_cache *cache;
	pthread_mutex_t lock;
	pthread_t thread;
	bool stop; /* under lock */
	struct ds__transfers t;
	struct server *servers;
	int nservers;
	/* DEBUGINFOD_IMA_CERT_PATH's keys, loaded when a server is
	 * "ima:enforcing"; read-only after (the committers use them). */
	struct ds_ima_keys *ima_keys;
	struct job *table[TABLE_SIZE]; /* under lock */
	struct job *incoming; /* under lock */
	struct job *active, *active_tail; /* loop thread */
	unsigned int admitted;

	/* Committers: one from the start, more (up to COMMITTERS_MAX) when
	 * a commit finds none idle, so that the fsync()s of a burst of
	 * downloads overlap (the filesystem's journal takes them in one
	 * commit) instead of queueing behind one another.  As many as a
	 * server's connections (max_per_server's default): with four, a
	 * wave of 32 misses answered by dsostore serve waited for eight
	 * fsync()s in turn (ext4, 4-12 ms each here; docs/debuginfod.md). */
	pthread_t committers[COMMITTERS_MAX];
	unsigned int ncommitters, commit_idle; /* under commit_lock */
	pthread_mutex_t commit_lock;
	pthread_cond_t commit_cond;
	struct commit *commit_q, *commit_q_tail, *commit_done; /* under commit_lock */
	bool commit_stop;
	/* A job waits for admission (loop: job_step()): a commit's end is
	 * then told to the loop at once, for its slot.  Else the loop takes
	 * finished commits back when it next wakes (within REAP_MS). */
	atomic_bool starved;
	unsigned int ncommits; /* loop: handed to committers, not taken back */
	atomic_uint_fast64_t requests, downloads, bytes, cache_hits, joined, retries, rejected;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const char *artifact_name(enum ds_artifact what)
{
	switch (what) {
	case DS_ARTIFACT_DEBUGINFO:
		return "debuginfo";
	case DS_ARTIFACT_EXECUTABLE:
		return "executable";
	case DS_ARTIFACT_SOURCE:
		return "source";
	case DS_ARTIFACT_SECTION:
		return "section";
	}
	return "?";
}

/* ------------------------------------------------------------ configuration */

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return dflt;
	n = strtol(v, &end, 10);
	return *end || n > INT_MAX || n < INT_MIN ? dflt : (int)n;
}

/*
 * DEBUGINFOD_URLS: servers separated by blanks, and, as elfutils >= 0.192
 * reads it, "ima:enforcing" or "ima:ignore" words that set the IMA policy
 * of the servers after them (ignore until one says otherwise).  Any other
 * "ima:" word is skipped with a warning; no "ima:" word is ever a server.
 * *policy: one per server.
 */
static char **split_urls(const char *s, unsigned char **policy, const struct ds_log *log)
{
	size_t n = 0, cap = 4;
	char **v = calloc(cap + 1, sizeof(*v));
	unsigned char *pol = malloc(cap), mode = DS_IMA_IGNORE;

	while (v && pol && s && *s) {
		size_t len;
		char *url;

		s += strspn(s, " \t\n");
		len = strcspn(s, " \t\n");
		if (!len)
			break;
		if (len >= 4 && !strncmp(s, "ima:", 4)) {
			if (len == 13 && !strncmp(s + 4, "enforcing", 9))
				mode = DS_IMA_ENFORCING;
			else if (len == 10 && !strncmp(s + 4, "ignore", 6))
				mode = DS_IMA_IGNORE;
			else
				ds__logf(log, DS_LOG_WARN,
					 "DEBUGINFOD_URLS: IMA mode \"%.*s\" not recognized (ima:enforcing or ima:ignore); skipped",
					 (int)(len < 64 ? len : 64), s);
			s += len;
			continue;
		}
		if (n == cap) {
			char **nv = realloc(v, (2 * cap + 1) * sizeof(*v));
			unsigned char *np;

			if (!nv)
				goto fail;
			v = nv;
			if (!(np = realloc(pol, 2 * cap)))
				goto fail;
			pol = np;
			cap *= 2;
		}
		while (len > 1 && s[len - 1] == '/')
			len--; /* "http://h:8002/" and "http://h:8002" alike */
		if (!(url = strndup(s, len)))
			goto fail;
		s += strcspn(s, " \t\n");
		pol[n] = mode;
		v[n++] = url;
		v[n] = NULL;
	}
	if (!v || !pol)
		goto fail;
	*policy = pol;
	return v;
fail:
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
	free(pol);
	return NULL;
}

/* DEBUGINFOD_HEADERS_FILE: one header a line, blank lines skipped. */
static char **read_headers(const char *path)
{
	char **v = calloc(1, sizeof(*v)), line[4096];
	size_t n = 0;
	FILE *f;

	if (!v || !path || !*path || !(f = fopen(path, "re")))
		return v;
	while (fgets(line, sizeof(line), f) && n < 64) {
		char **nv;

		line[strcspn(line, "\r\n")] = 0;
		if (!line[strspn(line, " \t")] || !strchr(line, ':'))
			continue;
		nv = realloc(v, (n + 2) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		if (!(v[n] = strdup(line)))
			break;
		v[++n] = NULL;
	}
	fclose(f);
	return v;
}

static void free_strv(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/* A source file of tens of MiB is already extreme (sqlite3.c: 9 MB); a
 * server that sends a gigabyte for one is broken or hostile. */
#define SOURCE_MAXSIZE_DEFAULT (64ULL << 20)

/* The source cap: opt, else $DSOSTORE_SOURCE_MAXSIZE, else the default; a
 * negative one (or a bad variable: the default) means none (0). */
static uint64_t source_maxsize(int64_t opt)
{
	const char *v = getenv("DSOSTORE_SOURCE_MAXSIZE");

	if (!opt && v && *v) {
		char *end;
		long long n = strtoll(v, &end, 10);

		opt = end != v && !*end && n ? n : 0;
	}
	if (!opt)
		return SOURCE_MAXSIZE_DEFAULT;
	return opt < 0 ? 0 : (uint64_t)opt;
}

int ds__fetch_config_init(struct ds_fetch_config *cfg, const struct ds_context_opts *opts,
			  const struct ds_log *log)
{
	const char *urls = DS_OPT(opts, urls, NULL);
	const char *certs = DS_OPT(opts, ima_cert_path, NULL);
	const char *hdrs = DS_OPT(opts, headers_file, NULL);
	long long maxsize = DS_OPT(opts, maxsize, 0);

	memset(cfg, 0, sizeof(*cfg));
	cfg->urls = split_urls(urls ? urls : getenv("DEBUGINFOD_URLS"), &cfg->ima, log);
	cfg->headers = read_headers(hdrs ? hdrs : getenv("DEBUGINFOD_HEADERS_FILE"));
	if (!certs)
		certs = getenv("DEBUGINFOD_IMA_CERT_PATH");
	if (!cfg->urls || !cfg->headers || (certs && !(cfg->ima_cert_path = strdup(certs))))
		return -ENOMEM;
	cfg->timeout_s = DS_OPT(opts, timeout_s, 0) ?: env_int("DEBUGINFOD_TIMEOUT", 90);
	cfg->connect_timeout_s = DS_OPT(opts, connect_timeout_s, 0) ?: 10;
	if (cfg->timeout_s > 0 && cfg->timeout_s < cfg->connect_timeout_s)
		cfg->connect_timeout_s = cfg->timeout_s;
	cfg->maxtime_s = DS_OPT(opts, maxtime_s, 0) ?: env_int("DEBUGINFOD_MAXTIME", 0);
	if (!maxsize) {
		const char *v = getenv("DEBUGINFOD_MAXSIZE");

		maxsize = v ? strtoll(v, NULL, 10) : 0;
	}
	cfg->maxsize = maxsize;
	cfg->source_maxsize = source_maxsize(DS_OPT(opts, source_maxsize, 0));
	cfg->retry_limit = DS_OPT(opts, retry_limit, 0) ?: env_int("DEBUGINFOD_RETRY_LIMIT", 2);
	cfg->max_transfers = DS_OPT(opts, max_transfers, 0u) ?: 64;
	cfg->max_per_server = DS_OPT(opts, max_per_server, 0u) ?: 32;
	return 0;
}

void ds__fetch_config_release(struct ds_fetch_config *cfg)
{
	free_strv(cfg->urls);
	free_strv(cfg->headers);
	free(cfg->ima);
	free(cfg->ima_cert_path);
	cfg->urls = cfg->headers = NULL;
	cfg->ima = NULL;
	cfg->ima_cert_path = NULL;
}

/* ------------------------------------------------------------- job table */

static uint64_t job_hash(const struct ds_build_id *bid, enum ds_artifact what, const char *arg)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (unsigned i = 0; i < bid->size; i++)
		h = (h ^ bid->data[i]) * 0x100000001b3ULL;
	h = (h ^ (unsigned)what) * 0x100000001b3ULL;
	for (const char *p = arg; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return h;
}

static struct job *table_find(struct ds_fetcher *f, const struct ds_build_id *bid,
			      enum ds_artifact what, const char *arg, uint64_t h)
{
	for (struct job *j = f->table[h % TABLE_SIZE]; j; j = j->hnext)
		if (j->hash == h && j->what == what && ds_build_id_equal(&j->bid, bid) &&
		    !strcmp(j->arg ? j->arg : "", arg ? arg : ""))
			return j;
	return NULL;
}

static void table_del(struct ds_fetcher *f, struct job *job)
{
	struct job **pp = &f->table[job->hash % TABLE_SIZE];

	for (; *pp; pp = &(*pp)->hnext)
		if (*pp == job) {
			*pp = job->hnext;
			return;
		}
}

static void job_free(struct job *job)
{
	free(job->headers);
	free(job->srv);
	free(job->arg);
	free(job->name);
	free(job);
}

/* ------------------------------------------------------- finishing a job */

/* What a download holds in memory is what ds_fetch_start() promises to
 * hand over from there (dsostore.h). */
_Static_assert(DS_FETCH_BODY_MAX == DS__XFER_SPOOL, "DS_FETCH_BODY_MAX is the spool's size");

/* Hand the result to everyone attached, and take the job out of the
 * table (a later request makes a new job, which finds the file).
 * ds_fetch_start()'s callers are put on *later, for answer_later() once
 * f->lock is let go.  f->lock held. */
static void job_answer(struct ds_fetcher *f, struct job *job, int err, const char *path,
		       enum ds_source source, struct attach **later)
{
	uint64_t bytes = atomic_load(&job->bytes);

	table_del(f, job);
	for (struct attach *a = job->attached, *next; a; a = next) {
		next = a->next;
		a->req->err = err;
		a->req->source = source;
		a->req->bytes = bytes;
		a->whole = err && job->whole;
		if (!err && !(a->req->path = strdup(path)))
			a->req->err = -ENOMEM;
		a->job = NULL;
		if (!a->w) {
			a->next = *later;
			*later = a;
			continue;
		}
		a->w->pending--;
		pthread_cond_broadcast(&a->w->cond);
	}
	job->attached = NULL;
}

/* ds_fetch_start()'s callers answered, without f->lock: a callback may
 * start another fetch.  body: the download's (done_body), NULL if none. */
static void answer_later(struct attach *a, const struct ds_fetch_body *body)
{
	while (a) {
		struct attach *next = a->next;

		if (a->done_body)
			a->done_body(a->user, a->req, a->req->err ? NULL : body);
		else
			a->done(a->user, a->req);
		free(a);
		a = next;
	}
}

/* Hand the result to everyone still attached, then forget the job. */
static void job_finish(struct ds_fetcher *f, struct job *job, int err, const char *path,
		       enum ds_source source, const struct ds_fetch_body *body)
{
	struct attach *later = NULL;

	if (job->dirfd >= 0) {
		/* A failure leaves no empty entry behind (a miss is a file). */
		if (err)
			ds__cache_entry_prune(f->cache, job->hex);
		close(job->dirfd); /* releases the flock */
		job->dirfd = -1;
	}
	pthread_mutex_lock(&f->lock);
	job_answer(f, job, err, path, source, &later);
	pthread_mutex_unlock(&f->lock);
	answer_later(later, body);

	if (job->admitted)
		f->admitted--;
	if (job->prev)
		job->prev->next = job->next;
	else
		f->active = job->next;
	if (job->next)
		job->next->prev = job->prev;
	else
		f->active_tail = job->prev;
	job_free(job);
}

/* ------------------------------------------------------------- transfers */

static void xfer_free(struct ds_fetcher *f, struct xfer *x)
{
	ds__transfer_stop(x);
	free(x->xhdrs);
	free(x->spool);
	if (x->fd >= 0)
		close(x->fd);
	if (x->tmpname) {
		ds__cache_abort(x->job->dirfd, x->tmpname);
		free(x->tmpname);
	}
	free(x);
}

static void xfer_unlink(struct xfer *x)
{
	for (struct xfer **pp = &x->job->xfers; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			return;
		}
}

/* The cache cannot take this file: say where and why, once per job. */
static void cache_failed(struct ds_fetcher *f, struct job *job, int err)
{
	ds_warn(f->ctx, "cache %s/%s/%s: %s", f->cache->root, job->hex, job->name,
		ds_strerror(err));
}

/* End a job now with err: its transfers dropped, no other server asked. */
static void job_fail(struct ds_fetcher *f, struct job *job, int err)
{
	while (job->xfers) {
		struct xfer *x = job->xfers;

		job->xfers = x->next;
		xfer_free(f, x);
	}
	job->winner = NULL;
	job_finish(f, job, err, NULL, DS_SOURCE_NONE, NULL);
}

/* The entry directory was removed under the job (rm -rf of the cache, a
 * clean): make it again, and ask again.  Twice at most. */
static bool job_reopen(struct ds_fetcher *f, struct job *job)
{
	int err, fd;

	if (job->reopens >= 2)
		return false;
	job->reopens++;
	err = ds__cache_entry_open(f->cache, job->hex, true, &fd);
	if (err == -EWOULDBLOCK) /* a process that came after the removal */
		err = ds__cache_entry_open(f->cache, job->hex, false, &fd);
	if (err)
		return false;
	ds_info(f->ctx, "cache %s/%s: removed during the download; made again", f->cache->root,
		job->hex);
	close(job->dirfd);
	job->dirfd = fd;
	return true;
}

/* An ELF artifact arriving: once its headers are in, its extent is known,
 * and a body running past it (padding) or a file that cannot be whole is
 * stopped there, not after a gigabyte. */
static void watch_elf(struct ds_fetcher *f, struct xfer *x)
{
	struct job *job = x->job;
	const char *why = NULL;
	uint64_t ext = 0;
	int err;

	if (job->what != DS_ARTIFACT_DEBUGINFO && job->what != DS_ARTIFACT_EXECUTABLE)
		return;
	/* Not before WATCH_FROM bytes: a shorter body is checked whole when
	 * it ends (verify()), and until its section headers (last, most
	 * often) are in, its extent cannot be told anyway.  On bench_serve's
	 * 16 KB files that was five pread()s a download, on the one thread
	 * that moves every transfer. */
	if (x->bytes < WATCH_FROM || x->fd < 0) /* (< WATCH_FROM: in x->spool) */
		return;
	if (!x->extent && x->bytes >= x->elf_need) {
		err = ds__elf_extent(x->fd, x->bytes, job->what == DS_ARTIFACT_EXECUTABLE, &ext, &why);
		if (err == -EAGAIN)
			x->elf_need = ext;
		else if (!err)
			x->extent = ext ? ext : 1;
		else
			x->bad = why ? why : "not an ELF file";
	}
	if (x->extent && x->bytes > x->extent + DS_ELF_SLACK)
		x->bad = "more bytes than the ELF it holds (padded)";
	if (x->bad)
		x->bad_err = -EBADMSG;
}

/* A 200's body, n more bytes of it about to be kept: the first transfer
 * to deliver wins (its bytes are kept: transfer.h); a loser, or a body
 * past its limit, is stopped (false). */
static bool on_body(struct xfer *x, size_t n)
{
	struct job *job = x->job;
	struct ds_fetcher *f = x->f;
	const char *why;

	if (job->winner && job->winner != x) {
		x->loser = true;
		return false;
	}
	if (!job->winner) {
		job->winner = x;
		job->winner_new = true;
	}
	if (x->bytes + n > ds__transfer_body_limit(x, &why)) {
		ds_warn(f->ctx, "%s: %s/%s decodes past %s; stopped", f->servers[x->server].url,
			job->hex, job->name, why);
		x->too_big = true;
		return false;
	}
	return true;
}

/* The winner's temporary file in its entry, with what its spool held:
 * made by the loop when the body outgrows the spool, else by the
 * committer (a small download: the loop, which moves every transfer,
 * makes no file for it).  0 or -errno. */
static int on_file(struct xfer *x)
{
	struct job *job = x->job;
	char tmp[PATH_MAX];
	int fd = ds__cache_tmp_open(job->dirfd, job->name, tmp, sizeof(tmp)), err;

	/* The entry went since the job took it (rm -rf of the cache): it is
	 * made again, and the bytes in hand go there. */
	if (fd == -ENOENT && job_reopen(x->f, job))
		fd = ds__cache_tmp_open(job->dirfd, job->name, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	if (!(x->tmpname = strdup(tmp))) {
		unlinkat(job->dirfd, tmp, 0);
		close(fd);
		return -ENOMEM;
	}
	x->fd = fd;
	err = x->bytes ? ds__write_all(fd, x->spool, x->bytes) : 0; /* (gone by xfer_free()) */
	free(x->spool);
	x->spool = NULL;
	return err;
}

/* n bytes of the body kept: counted, and an ELF watched. */
static void on_wrote(struct xfer *x, size_t n)
{
	atomic_fetch_add(&x->job->bytes, n);
	atomic_fetch_add(&x->f->bytes, n);
	watch_elf(x->f, x);
}

static char *job_url(struct ds_fetcher *f, struct job *job, int s, struct xfer *x)
{
	const char *base = f->servers[s].url;
	char *url = NULL, *tail = NULL;

	switch (job->what) {
	case DS_ARTIFACT_SOURCE:
		tail = ds__transfer_url_path(x, job->arg);
		if (!tail)
			return NULL;
		if (asprintf(&url, "%s/buildid/%s/source%s", base, job->hex, tail) < 0)
			url = NULL;
		free(tail);
		return url;
	case DS_ARTIFACT_SECTION:
		tail = ds__transfer_escape(x, job->arg);
		if (tail && asprintf(&url, "%s/buildid/%s/section/%s", base, job->hex, tail) < 0)
			url = NULL;
		free(tail);
		return url;
	default:
		if (asprintf(&url, "%s/buildid/%s/%s", base, job->hex, artifact_name(job->what)) <
		    0)
			return NULL;
		return url;
	}
}

/* "file:///a%20b" -> "/a b"; NULL for another host or a bad escape. */
static char *file_url_path(const char *url)
{
	const char *p = url + strlen("file://");
	char *out, *q;

	if (!strncmp(p, "localhost/", 10))
		p += strlen("localhost");
	if (*p != '/' || !(out = malloc(strlen(p) + 1)))
		return NULL;
	for (q = out; *p; p++) {
		unsigned int c;

		if (*p != '%') {
			*q++ = *p;
			continue;
		}
		if (!isxdigit((unsigned char)p[1]) || !isxdigit((unsigned char)p[2]) ||
		    sscanf(p + 1, "%2x", &c) != 1 || !c) {
			free(out);
			return NULL;
		}
		*q++ = (char)c;
		p += 2;
	}
	*q = 0;
	return out;
}

/*
 * A file:// server is a directory laid out as the URLs are.  The file a
 * request names is resolved here, and read only if it lies inside that
 * directory once every symlink and ".." is followed: never a file
 * elsewhere on this machine cached as a build ID's artifact.  The URL
 * curl gets is the resolved path.  -ENOENT: not there (as a 404).
 */
static int file_job_url(struct ds_fetcher *f, struct job *job, int s, struct xfer *x, char **out)
{
	char *root = file_url_path(f->servers[s].url), *rroot = NULL, *want = NULL, *got = NULL;
	size_t rlen;
	int err = -ENOMEM;

	if (!root) {
		ds_warn(f->ctx, "%s: not a local file:// URL", f->servers[s].url);
		return -EINVAL;
	}
	if (asprintf(&want, "%s/buildid/%s/%s%s%s", root, job->hex, artifact_name(job->what),
		     job->what == DS_ARTIFACT_SECTION ? "/" : "", job->arg ? job->arg : "") < 0) {
		want = NULL;
		goto out;
	}
	rroot = realpath(root, NULL);
	got = realpath(want, NULL);
	if (!rroot || !got) {
		err = errno == ENOTDIR || errno == ENOENT ? -ENOENT : -errno;
		goto out;
	}
	rlen = strlen(rroot);
	if (strncmp(got, rroot, rlen) != 0 || (got[rlen] != '/' && rlen > 1)) {
		ds_warn(f->ctx, "%s: %s resolves to %s, outside the server's directory; refused",
			f->servers[s].url, want + strlen(root) + 1, got);
		err = -EACCES;
		goto out;
	}
	{
		char *tail = ds__transfer_url_path(x, got);

		if (!tail || asprintf(out, "file://%s", tail) < 0) {
			free(tail);
			goto out;
		}
		free(tail);
	}
	err = 0;
out:
	free(root);
	free(rroot);
	free(want);
	free(got);
	return err;
}

static int xfer_start(struct ds_fetcher *f, struct job *job, int s)
{
	struct xfer *x = calloc(1, sizeof(*x));
	char *url = NULL;
	int err = -ENOMEM;

	if (!x)
		return -ENOMEM;
	x->fd = -1;
	x->f = f;
	x->job = job;
	x->server = s;
	x->extra_headers = job->headers;
	if (job->what == DS_ARTIFACT_SOURCE)
		x->maxsize = f->cfg->source_maxsize;
	if (!ds__transfer_new(&f->t, x, f->servers[s].is_file)) {
		if (f->servers[s].is_file)
			err = file_job_url(f, job, s, x, &url);
		else if ((url = job_url(f, job, s, x)))
			err = 0;
	}
	if (!err)
		err = ds__transfer_start(x, url);
	free(url);
	if (err) {
		ds__transfer_stop(x);
		free(x);
		return err;
	}
	x->next = job->xfers;
	job->xfers = x;
	job->srv[s].status = S_RUNNING;
	atomic_fetch_add(&f->requests, 1);
	return 0;
}

/* Ask every server that may still have it.  Returns how many run. */
static int start_servers(struct ds_fetcher *f, struct job *job)
{
	int64_t now = now_ns();
	int running = 0;

	for (int s = 0; s < f->nservers; s++) {
		struct job_server *js = &job->srv[s];

		if (js->status == S_RETRY && js->retry_at_ns <= now)
			js->status = S_ASK;
		if (js->status == S_ASK && f->servers[s].down_until_ns > now) {
			js->status = S_FAILED;
			js->err = f->servers[s].down_err;
		}
		if (js->status == S_ASK && job->what == DS_ARTIFACT_SECTION &&
		    f->servers[s].ima == DS_IMA_ENFORCING) {
			/* As elfutils: a section's bytes carry no signature.
			 * The whole debuginfo (or executable), verified, is
			 * fetched to cut it from (job->whole, then
			 * section_fallback()).  Not a miss: nothing is cached. */
			ds_info(f->ctx, "%s: not asked for section %s of %s: a section cannot be verified (ima:enforcing)",
				f->servers[s].url, job->arg, job->hex);
			js->status = S_FAILED;
			js->err = -EKEYREJECTED;
		}
		if (js->status == S_ASK) {
			int err = xfer_start(f, job, s);

			if (err == -ENOENT) {
				js->status = S_NOTFOUND;
			} else if (err) {
				js->status = S_FAILED;
				js->err = err;
			}
		}
		running += js->status == S_RUNNING;
	}
	return running;
}

/* Which answer a finished job gives: not found only if every server said
 * so; otherwise the most telling failure. */
static int job_verdict(struct ds_fetcher *f, struct job *job, bool *pending)
{
	int err = -ENOENT;

	*pending = false;
	for (int s = 0; s < f->nservers; s++) {
		struct job_server *js = &job->srv[s];

		if (js->status == S_ASK || js->status == S_RUNNING || js->status == S_RETRY)
			*pending = true;
		else if (js->status == S_FAILED &&
			 (err == -ENOENT || js->err == -EBADMSG || js->err == -EKEYREJECTED))
			err = js->err;
	}
	return err;
}

/*
 * A section nobody gave: is the whole file worth fetching to cut it from?
 * Yes when an ima:enforcing server was not asked (it may have the
 * debuginfo, verified), or a server answered that it cannot give sections
 * (503, debuginfod's answer then, and dsostore serve's over an enforcing
 * upstream: -EPROTO, as any 4xx but 404).  elfutils 0.192
 * (debuginfod_find_section()) takes the whole file when no server was
 * left to ask (all enforcing) or one said 503; not when those it asked
 * said 404 while an enforcing one was skipped (docs/oracles.md).
 */
static bool section_wants_whole(struct ds_fetcher *f, const struct job *job)
{
	for (int s = 0; s < f->nservers; s++)
		if (job->srv[s].status == S_FAILED &&
		    (job->srv[s].err == -EKEYREJECTED || job->srv[s].err == -EPROTO))
			return true;
	return false;
}

static void job_conclude(struct ds_fetcher *f, struct job *job)
{
	bool pending;
	int err;

	if (job->winner || job->xfers || job->committing)
		return;
	if (start_servers(f, job) > 0)
		return;
	err = job_verdict(f, job, &pending);
	if (pending) {
		int64_t wake = INT64_MAX;

		for (int s = 0; s < f->nservers; s++)
			if (job->srv[s].status == S_RETRY && job->srv[s].retry_at_ns < wake)
				wake = job->srv[s].retry_at_ns;
		job->wake_at_ns = wake;
		return;
	}
	if (job->what == DS_ARTIFACT_SECTION && err)
		job->whole = section_wants_whole(f, job);
	if (err == -ENOENT && job->dirfd >= 0)
		ds__cache_write_miss(job->dirfd, job->name);
	ds_debug(f->ctx, "%s/%s: %s", job->hex, job->name, ds_strerror(err));
	job_finish(f, job, err, NULL, DS_SOURCE_NONE, NULL);
}

static void server_down(struct ds_fetcher *f, int s, int err)
{
	bool was_down = f->servers[s].down_until_ns > now_ns();

	f->servers[s].down_until_ns = now_ns() + SERVER_DOWN_NS;
	f->servers[s].down_err = err;
	if (!was_down)
		ds_warn(f->ctx, "%s: %s; not asked again for %d s", f->servers[s].url, ds_strerror(err),
		(int)(SERVER_DOWN_NS / 1000000000));
}
/* A finished download: is it what we asked for?  Read from the spool
 * while it holds the body (x->fd < 0), else from the file. */
static int verify(struct ds_fetcher *f, struct xfer *x, const char *url)
{
	const char *server = f->servers[x->server].url;
	struct job *job = x->job;
	const char *bad;
	char why[160];

	if (x->bytes == 0)
		return -EBADMSG; /* empty is how a miss looks in the cache */
	bad = x->fd < 0 ? ds__elf_artifact_bad_mem(x->spool, x->bytes, &job->bid, job->what, why,
						   sizeof(why))
			: ds__elf_artifact_bad(x->fd, x->bytes, &job->bid, job->what, why, sizeof(why));
	if (bad) {
		ds_warn(f->ctx, "%s%s%s sent %s for %s/%s; rejected", server, url ? ", from " : "",
			url ? url : "", bad, job->hex, job->name);
		atomic_fetch_add(&f->rejected, 1);
		return -EBADMSG;
	}
	if (f->servers[x->server].ima == DS_IMA_ENFORCING) {
		char iwhy[160];

		/* (on the file: winner_done() leaves such a body to the
		 * committer, which makes its file first) */
		if (ds__ima_verify(f->ima_keys, x->xhdrs, x->fd, x->bytes, iwhy, sizeof(iwhy))) {
			ds_warn(f->ctx, "%s: %s/%s refused (ima:enforcing): %s", server, job->hex,
				job->name, iwhy);
			atomic_fetch_add(&f->rejected, 1);
			return -EKEYREJECTED;
		}
		ds_info(f->ctx, "%s: %s/%s: valid IMA signature", server, job->hex, job->name);
	}
	return 0;
}

static void *committer(void *arg);

/* The callers that take a body (ds_fetch_opts.done_body) answered from
 * the spool, the body verified there: they need not wait for its file to
 * be written, fsync()ed and renamed (4-12 ms on ext4 here, on every miss
 * `dsostore serve` relays).  The job stays in the table until its commit,
 * so that later callers join it and get the file.  Loop thread. */
static void answer_bodies(struct ds_fetcher *f, struct job *job, struct xfer *x, time_t mtime)
{
	struct ds_fetch_body body = { .data = x->spool, .size = x->bytes, .headers = x->xhdrs,
				      .mtime = mtime };
	uint64_t bytes = atomic_load(&job->bytes);
	struct attach *later = NULL;

	pthread_mutex_lock(&f->lock);
	for (struct attach **pp = &job->attached; *pp;) {
		struct attach *a = *pp;

		if (!a->done_body) {
			pp = &a->next;
			continue;
		}
		*pp = a->next;
		a->req->err = 0;
		a->req->path = NULL;
		a->req->source = DS_SOURCE_DEBUGINFOD;
		a->req->bytes = bytes;
		a->job = NULL;
		a->next = later;
		later = a;
	}
	pthread_mutex_unlock(&f->lock);
	answer_later(later, &body);
}

/* The winner's body is complete: hand it to a committer.  Its curl
 * handle goes now (the connection is free for the next transfer); the
 * losers were dropped when it won.  A body whole in the spool is verified
 * here first (it is in memory: a few microseconds), and given to the
 * callers that take it; an ima:enforcing server's is left to the
 * committer, which checks the signature on the file. */
static void winner_done(struct ds_fetcher *f, struct xfer *x)
{
	struct job *job = x->job;
	struct commit *c = calloc(1, sizeof(*c));
	time_t mtime = ds__transfer_filetime(x);
	int err = c ? 0 : -ENOMEM;

	if (c)
		c->url = ds__transfer_url(x);
	xfer_unlink(x);
	ds__transfer_stop(x);
	job->winner = NULL;
	if (!err && x->fd < 0 && f->servers[x->server].ima != DS_IMA_ENFORCING) {
		err = verify(f, x, c->url);
		c->verified = !err;
	}
	if (err) {
		job->srv[x->server].status = S_FAILED;
		job->srv[x->server].err = err;
		xfer_free(f, x);
		if (c)
			free(c->url);
		free(c);
		job_conclude(f, job); /* the other servers, if any */
		return;
	}
	if (c->verified)
		answer_bodies(f, job, x, mtime);
	c->job = job;
	c->x = x;
	c->mtime = mtime;
	job->committing = x;
	f->ncommits++;
	pthread_mutex_lock(&f->commit_lock);
	c->next = NULL;
	if (f->commit_q_tail)
		f->commit_q_tail->next = c;
	else
		f->commit_q = c;
	f->commit_q_tail = c;
	if (!f->commit_idle && !f->commit_stop && f->ncommitters < COMMITTERS_MAX &&
	    !pthread_create(&f->committers[f->ncommitters], NULL, committer, f))
		f->ncommitters++; /* (if none could start, those running take it) */
	pthread_cond_signal(&f->commit_cond);
	pthread_mutex_unlock(&f->commit_lock);
}

/* Committer thread: verify, fsync and rename, so that a slow disk (or a
 * large file) does not stall every other transfer. */
static void *committer(void *arg)
{
	struct ds_fetcher *f = arg;

	pthread_mutex_lock(&f->commit_lock);
	for (;;) {
		struct commit *c = f->commit_q;

		if (!c) {
			if (f->commit_stop)
				break;
			f->commit_idle++;
			pthread_cond_wait(&f->commit_cond, &f->commit_lock);
			f->commit_idle--;
			continue;
		}
		f->commit_q = c->next;
		if (!f->commit_q)
			f->commit_q_tail = NULL;
		pthread_mutex_unlock(&f->commit_lock);

		/* A body the spool held becomes a file now (not by the loop). */
		c->err = c->x->fd < 0 && c->x->bytes ? on_file(c->x) : 0;
		if (!c->err && !c->verified)
			c->err = verify(f, c->x, c->url);
		if (!c->err) {
			c->err = ds__cache_commit(f->cache, c->job->hex, c->job->dirfd,
						  c->x->tmpname, c->job->name, c->x->fd, c->mtime,
						  true);
			free(c->x->tmpname);
			c->x->tmpname = NULL; /* renamed, or removed by commit */
			if (!c->err)
				ds__cache_write_hdr(f->cache, c->job->hex, c->job->name, c->x->xhdrs);
		}
		if (!c->err) {
			/* The callers answered from here, the file and its
			 * headers in place: not one more thread woken (the
			 * loop's) before theirs.  On a loaded machine each
			 * wakeup can wait for a CPU; `dsostore serve`'s misses
			 * (bench_serve.sh) paid it once per request.  The loop
			 * forgets the job when it takes the commit back. */
			char *path = NULL;

			/* The entry's lock goes now, the file in place: the
			 * job's next artifact (the executable after the
			 * debuginfo) need not wait for the loop to take the
			 * job back.  (The loop leaves dirfd alone while the
			 * job is here: job->committing.) */
			close(c->job->dirfd);
			c->job->dirfd = -1;
			if (asprintf(&path, "%s/%s/%s", f->cache->root, c->job->hex,
				     c->job->name) >= 0) {
				struct ds_fetch_body body = { .headers = c->x->xhdrs,
							      .mtime = c->mtime };
				struct attach *later = NULL;

				atomic_fetch_add(&f->downloads, 1);
				c->answered = true;
				pthread_mutex_lock(&f->lock);
				job_answer(f, c->job, 0, path, DS_SOURCE_DEBUGINFOD, &later);
				pthread_mutex_unlock(&f->lock);
				free(path);
				answer_later(later, &body);
			}
		}

		pthread_mutex_lock(&f->commit_lock);
		c->next = f->commit_done;
		f->commit_done = c;
		/* Its callers have their answer: the loop is woken only when
		 * it has more to do with it (a refused file: the job's other
		 * servers) or a job waits for its slot.  A wakeup per miss
		 * was a third of the loop's wakeups in bench_serve.sh's
		 * misses, each a sleep and a wakeup of a thread, dear on a
		 * paravirtualized machine. */
		if (!c->answered || atomic_load(&f->starved))
			ds__transfers_wakeup(&f->t);
	}
	pthread_mutex_unlock(&f->commit_lock);
	return NULL;
}

/* Loop thread: what the committer finished. */
static void commits_done(struct ds_fetcher *f)
{
	struct commit *c;

	pthread_mutex_lock(&f->commit_lock);
	c = f->commit_done;
	f->commit_done = NULL;
	pthread_mutex_unlock(&f->commit_lock);
	while (c) {
		struct commit *next = c->next;
		struct job *job = c->job;
		char *path = NULL;
		int err = c->err;

		job->committing = NULL;
		f->ncommits--;
		if (!err && !c->answered &&
		    asprintf(&path, "%s/%s/%s", f->cache->root, job->hex, job->name) < 0)
			err = -ENOMEM;
		if (!err) {
			struct ds_fetch_body body = { .headers = c->x->xhdrs, .mtime = c->mtime };

			if (!c->answered)
				atomic_fetch_add(&f->downloads, 1);
			c->x->xhdrs = NULL; /* (body's, past xfer_free()) */
			xfer_free(f, c->x);
			job_finish(f, job, 0, path, DS_SOURCE_DEBUGINFOD, &body);
			free((char *)body.headers);
			free(path);
		} else if (err == -EBADMSG || err == -EKEYREJECTED) {
			job->srv[c->x->server].status = S_FAILED;
			job->srv[c->x->server].err = err;
			xfer_free(f, c->x);
			job_conclude(f, job); /* the other servers, if any */
		} else {
			/* Ours, not the server's (a full disk): no other server
			 * would do better. */
			cache_failed(f, job, err);
			xfer_free(f, c->x);
			job_fail(f, job, err);
		}
		free(c->url);
		free(c);
		c = next;
	}
}

static void xfer_done(void *arg, struct xfer *x, int err, long code, bool down)
{
	struct ds_fetcher *f = arg;
	struct job *job = x->job;
	int s = x->server;

	ds_info(f->ctx, "%s %s from %s: %ld %s%s%s, %.0f ms, %llu bytes", artifact_name(job->what),
		job->hex, f->servers[s].url, code, err ? ds_strerror(err) : "ok", x->bad ? ": " : "",
		x->bad ? x->bad : "", (now_ns() - x->started_ns) / 1e6, (unsigned long long)x->bytes);
	if (err == -EFBIG && !x->too_big && !x->loser) {
		/* (on_body() said why when the body passed the limit.) */
		const char *why;
		uint64_t limit = ds__transfer_body_limit(x, &why);

		if (code == 406)
			ds_warn(f->ctx, "%s: %s/%s is over DEBUGINFOD_MAXSIZE (the server says); not fetched",
				f->servers[s].url, job->hex, job->name);
		else
			ds_warn(f->ctx, "%s: %s/%s announced past %s, %llu bytes; not fetched",
				f->servers[s].url, job->hex, job->name, why, (unsigned long long)limit);
	}
	if (x->local_err && !x->loser) {
		int lerr = -x->local_err;

		if (x == job->winner)
			job->winner = NULL;
		xfer_unlink(x);
		xfer_free(f, x);
		if (lerr == -ENOENT && job_reopen(f, job)) {
			job->srv[s].status = S_ASK;
			job_conclude(f, job);
			return;
		}
		/* Ours, not the server's: not retried, no server marked down. */
		cache_failed(f, job, lerr);
		job_fail(f, job, lerr);
		return;
	}
	if (x->bad && !x->loser) {
		ds_warn(f->ctx, "%s sent %s for %s/%s; rejected", f->servers[s].url, x->bad, job->hex,
			job->name);
		atomic_fetch_add(&f->rejected, 1);
	}
	if (x->loser) {
		job->srv[s].status = S_ASK; /* may be asked again if the winner fails */
		xfer_unlink(x);
		xfer_free(f, x);
		return;
	}
	if (x == job->winner) {
		if (!err) {
			winner_done(f, x);
			return;
		}
		/* Broke mid-body: the others are asked again (they were
		 * dropped as losers) and this one may be retried. */
		job->winner = NULL;
	} else if (!err) {
		err = -EBADMSG; /* a 200 with no body at all */
	}
	xfer_unlink(x);
	xfer_free(f, x);
	if (err == -ENOENT) {
		job->srv[s].status = S_NOTFOUND;
	} else if (ds__transfer_transient(err) && job->srv[s].attempts < f->cfg->retry_limit) {
		int64_t backoff = (100LL << job->srv[s].attempts) * 1000000;

		job->srv[s].attempts++;
		job->srv[s].status = S_RETRY;
		job->srv[s].retry_at_ns = now_ns() + (backoff > 2000000000 ? 2000000000 : backoff);
		atomic_fetch_add(&f->retries, 1);
	} else {
		job->srv[s].status = S_FAILED;
		job->srv[s].err = err;
		if (err == -EFBIG || err == -EPROTO)
			atomic_fetch_add(&f->rejected, 1);
		if (down || err == -ECONNREFUSED)
			server_down(f, s, err);
		else if (err == -EMFILE || err == -ENFILE)
			ds_warn(f->ctx, "out of file descriptors: %s", ds_strerror(err));
	}
	job_conclude(f, job);
}

/* A server just went down: everything else waiting on it fails now. */
static void fail_down_servers(struct ds_fetcher *f)
{
	int64_t now = now_ns();

	for (struct job *j = f->active, *jn; j; j = jn) {
		bool changed = false;

		jn = j->next;
		for (struct xfer *x = j->xfers, *xn; x; x = xn) {
			xn = x->next;
			if (f->servers[x->server].down_until_ns > now && x != j->winner) {
				j->srv[x->server].status = S_FAILED;
				j->srv[x->server].err = f->servers[x->server].down_err;
				xfer_unlink(x);
				xfer_free(f, x);
				changed = true;
			}
		}
		if (changed)
			job_conclude(f, j);
	}
}

/* ------------------------------------------------------------ job steps */

static int lock_wait_bound_s(struct ds_fetcher *f)
{
	return f->cfg->timeout_s > 0 ? f->cfg->timeout_s : LOCK_WAIT_DEFAULT_S;
}

/*
 * Another process holds the entry's flock: wait for it while it gets
 * somewhere, as long as a download of our own would be given (its
 * temporary file grows by LOCK_PROGRESS_BYTES per DEBUGINFOD_TIMEOUT,
 * within DEBUGINFOD_MAXTIME).  A holder that is stopped (SIGSTOP), hung,
 * or not a downloader at all (flock(1) on the entry) would otherwise
 * block every process sharing the cache.  true: stop waiting; the caller
 * downloads into its own temporary file and renames it into place, which
 * is safe beside another writer.
 */
static bool lock_wait_over(struct ds_fetcher *f, struct job *job, int64_t now)
{
	int64_t bound = (int64_t)lock_wait_bound_s(f) * 1000000000;
	uint64_t bytes;

	if (!job->lock_wait_ns) {
		job->lock_wait_ns = job->lock_progress_ns = job->lock_looked_ns = now;
		job->lock_progress_bytes = ds__cache_tmp_bytes(f->cache, job->hex, job->name);
		return false;
	}
	if (f->cfg->maxtime_s > 0 && now - job->lock_wait_ns > (int64_t)f->cfg->maxtime_s * 1000000000)
		return true;
	if (now - job->lock_looked_ns < LOCK_PROGRESS_NS)
		return false;
	job->lock_looked_ns = now;
	bytes = ds__cache_tmp_bytes(f->cache, job->hex, job->name);
	/* Shrinking: the holder renamed its file into place, or began anew. */
	if (bytes >= job->lock_progress_bytes + LOCK_PROGRESS_BYTES ||
	    bytes < job->lock_progress_bytes) {
		job->lock_progress_ns = now;
		job->lock_progress_bytes = bytes;
	}
	return now - job->lock_progress_ns > bound;
}

static void job_step(struct ds_fetcher *f, struct job *job)
{
	char *path = NULL;
	int err;

	if (job->state != J_RUNNING) {
		/* Admission: a bounded number of jobs hold a directory and
		 * transfers; the rest wait holding nothing. */
		if (f->admitted >= f->cfg->max_transfers) {
			atomic_store(&f->starved, true);
			/* (A lock waiter's time has come: not again at every
			 * turn of the loop, which would then not sleep.) */
			if (job->state == J_LOCK_WAIT)
				job->wake_at_ns = now_ns() + LOCK_RETRY_NS;
			return;
		}
		/* Another process's download may have ended while we waited
		 * for its lock.  (A new job's caller has just looked: the
		 * look after the lock is enough then.) */
		err = job->state == J_LOCK_WAIT ? ds__cache_lookup(f->cache, &job->bid, job->hex,
								   job->what, job->name, &path)
						: -ENODATA;
		if (err != -ENODATA) {
			job_finish(f, job, err, path, DS_SOURCE_DEBUGINFOD_CACHE, NULL);
			free(path);
			return;
		}
		err = ds__cache_entry_open(f->cache, job->hex, true, &job->dirfd);
		if (err == -EWOULDBLOCK && lock_wait_over(f, job, now_ns())) {
			ds_info(f->ctx,
				"%s/%s: the process holding its lock made no progress for %d s; "
				"downloading without it",
				job->hex, job->name, lock_wait_bound_s(f));
			err = ds__cache_entry_open(f->cache, job->hex, false, &job->dirfd);
		}
		if (err == -EWOULDBLOCK) {
			job->state = J_LOCK_WAIT; /* another process downloads it */
			job->wake_at_ns = now_ns() + LOCK_RETRY_NS;
			return;
		}
		if (err) {
			ds_warn(f->ctx, "cache %s: %s", f->cache->root, ds_strerror(err));
			/* A cache that cannot be written is not "not found". */
			job_finish(f, job, err == -ENOENT ? -EIO : err, NULL, DS_SOURCE_NONE, NULL);
			return;
		}
		job->admitted = true;
		f->admitted++;
		/* It may have arrived while we waited for the lock. */
		err = ds__cache_lookup(f->cache, &job->bid, job->hex, job->what, job->name, &path);
		if (err != -ENODATA) {
			job_finish(f, job, err, path, DS_SOURCE_DEBUGINFOD_CACHE, NULL);
			free(path);
			return;
		}
		job->state = J_RUNNING;
	}
	job->wake_at_ns = INT64_MAX;
	job_conclude(f, job);
}

static void job_cancel(struct ds_fetcher *f, struct job *job)
{
	if (job->committing)
		return; /* finishes when the committer hands it back */
	while (job->xfers) {
		struct xfer *x = job->xfers;

		job->xfers = x->next;
		xfer_free(f, x);
	}
	job->winner = NULL;
	job_finish(f, job, -ECANCELED, NULL, DS_SOURCE_NONE, NULL);
}

/* Let the committers finish what they have, then end them. */
static void stop_committer(struct ds_fetcher *f)
{
	unsigned int n;

	if (!f->commit_stop) {
		pthread_mutex_lock(&f->commit_lock);
		f->commit_stop = true;
		pthread_cond_broadcast(&f->commit_cond);
		n = f->ncommitters; /* (no more start: the loop has ended) */
		pthread_mutex_unlock(&f->commit_lock);
		for (unsigned int i = 0; i < n; i++)
			pthread_join(f->committers[i], NULL);
	}
}

/* The first committer: the cache cleaned first, like the elfutils client
 * when cache_clean_interval_s has passed; here off the event loop, so the
 * first fetches do not wait for a walk of a large cache. */
static void *first_committer(void *arg)
{
	struct ds_fetcher *f = arg;
	int removed = ds__cache_clean(f->cache, false);

	if (removed > 0)
		ds_info(f->ctx, "cache %s: cleaned, %d files removed", f->cache->root, removed);
	return committer(f);
}

static void *loop(void *arg)
{
	struct ds_fetcher *f = arg;

	for (;;) {
		int64_t now, wake = INT64_MAX;
		struct job *incoming;
		bool stop;

		pthread_mutex_lock(&f->lock);
		stop = f->stop;
		incoming = f->incoming;
		f->incoming = NULL;
		for (struct job *j = f->active; j; j = j->next)
			if (!j->attached && !j->cancel && !j->committing) {
				/* Every waiter left.  Out of the table now, in the
				 * same critical section, so nobody joins a job
				 * that is about to be cancelled. */
				j->cancel = true;
				table_del(f, j);
			}
		pthread_mutex_unlock(&f->lock);

		/* incoming is newest first; the active list oldest first. */
		for (struct job *rev = NULL, *n;; incoming = n) {
			if (!incoming) {
				incoming = rev;
				break;
			}
			n = incoming->next;
			incoming->next = rev;
			rev = incoming;
		}
		while (incoming) {
			struct job *j = incoming;

			incoming = j->next;
			j->next = NULL;
			j->prev = f->active_tail;
			if (f->active_tail)
				f->active_tail->next = j;
			else
				f->active = j;
			f->active_tail = j;
		}
		if (stop)
			stop_committer(f);
		commits_done(f);
		for (struct job *j = f->active, *jn; j; j = jn) {
			jn = j->next;
			if (j->cancel || stop)
				job_cancel(f, j);
		}
		if (stop)
			break;

		now = now_ns();
		atomic_store(&f->starved, false); /* (job_step() says if one is) */
		for (struct job *j = f->active, *jn; j; j = jn) {
			jn = j->next;
			if (j->state == J_NEW || j->wake_at_ns <= now)
				job_step(f, j);
		}
		for (struct job *j = f->active; j; j = j->next)
			if (j->wake_at_ns < wake)
				wake = j->wake_at_ns;
		now = now_ns();
		if (f->ncommits && wake > now + REAP_MS * 1000000LL)
			wake = now + REAP_MS * 1000000LL;
		ds__transfers_run(&f->t, wake == INT64_MAX ? 1000
					 : wake <= now	   ? 0
							   : (int)((wake - now) / 1000000 + 1));

		/* Losers are dropped outside curl's callbacks. */
		for (struct job *j = f->active; j; j = j->next) {
			if (!j->winner_new)
				continue;
			j->winner_new = false;
			for (struct xfer *x = j->xfers, *xn; x; x = xn) {
				xn = x->next;
				if (x != j->winner) {
					j->srv[x->server].status = S_ASK;
					xfer_unlink(x);
					xfer_free(f, x);
				}
			}
		}
		ds__transfers_ended(&f->t, xfer_done, f);
		commits_done(f);
		fail_down_servers(f);
	}
	return NULL;
}

/* -------------------------------------------------------- the fetcher */

void ds__fetcher_free(struct ds_fetcher *f)
{
	if (!f)
		return;
	if (f->t.multi) {
		pthread_mutex_lock(&f->lock);
		f->stop = true;
		pthread_mutex_unlock(&f->lock);
		ds__transfers_wakeup(&f->t);
		pthread_join(f->thread, NULL);
	}
	ds__transfers_release(&f->t);
	ds__ima_keys_free(f->ima_keys);
	for (int s = 0; s < f->nservers; s++)
		free(f->servers[s].url);
	free(f->servers);
	pthread_mutex_destroy(&f->lock);
	pthread_mutex_destroy(&f->commit_lock);
	pthread_cond_destroy(&f->commit_cond);
	free(f);
}

static struct ds_fetcher *fetcher_new(struct ds_context *ctx, int *err)
{
	const struct ds_fetch_config *cfg = &ctx->fetch_cfg;
	static const struct ds__transfer_hooks hooks = { .body = on_body,
							 .wrote = on_wrote,
							 .file = on_file };
	struct ds_fetcher *f = calloc(1, sizeof(*f));
	int n = 0;

	if (!f) {
		*err = -ENOMEM;
		return NULL;
	}
	if (!ds__transfer_load()) {
		ds_err(ctx, "cannot load libcurl.so.4: debuginfod servers cannot be asked");
		free(f);
		*err = -ENOSYS;
		return NULL;
	}
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->commit_lock, NULL);
	pthread_cond_init(&f->commit_cond, NULL);
	f->ctx = ctx;
	f->cfg = cfg;
	f->cache = &ctx->cache;
	while (cfg->urls[n])
		n++;
	f->servers = calloc(n ? n : 1, sizeof(*f->servers));
	if (!f->servers)
		goto nomem;
	for (int i = 0; i < n; i++) {
		if (!(f->servers[i].url = strdup(cfg->urls[i])))
			goto nomem;
		f->servers[i].is_file = !strncmp(cfg->urls[i], "file://", 7);
		f->servers[i].ima = cfg->ima[i];
		f->nservers++;
	}
	for (int i = 0; i < n; i++)
		if (f->servers[i].ima == DS_IMA_ENFORCING) {
			f->ima_keys = ds__ima_keys_load(cfg->ima_cert_path, &ctx->log);
			if (!f->ima_keys)
				ds_warn(ctx, "%s is ima:enforcing but DEBUGINFOD_IMA_CERT_PATH (%s) has no key: "
					"its files are refused", f->servers[i].url,
					cfg->ima_cert_path ? cfg->ima_cert_path : "unset");
			break;
		}
	if (ds__transfers_init(&f->t, cfg, &hooks))
		goto nomem;
	if (pthread_create(&f->committers[0], NULL, first_committer, f) != 0) {
		ds__transfers_release(&f->t);
		goto nomem;
	}
	f->ncommitters = 1;
	if (pthread_create(&f->thread, NULL, loop, f) != 0) {
		stop_committer(f);
		ds__transfers_release(&f->t);
		goto nomem;
	}
	return f;
nomem:
	ds__fetcher_free(f);
	*err = -ENOMEM;
	return NULL;
}

struct ds_fetcher *ds__fetcher(struct ds_context *ctx, int *err)
{
	struct ds_fetcher *f = atomic_load_explicit(&ctx->fetcher, memory_order_acquire);

	if (f)
		return f;
	pthread_mutex_lock(&ctx->fetcher_lock);
	f = atomic_load_explicit(&ctx->fetcher, memory_order_relaxed);
	if (!f) {
		f = fetcher_new(ctx, err);
		atomic_store_explicit(&ctx->fetcher, f, memory_order_release);
	}
	pthread_mutex_unlock(&ctx->fetcher_lock);
	return f;
}

/* ------------------------------------------------------------ the API */

static bool valid_req(const struct ds_fetch_req *r)
{
	return r->build_id.size && r->build_id.size <= DS_BUILD_ID_MAX &&
	       (unsigned)r->what <= DS_ARTIFACT_SECTION;
}

/* ------------------------------------------------ sections cut from files */

/*
 * A section as elfutils' client takes it when it does not ask a server
 * for it (debuginfod-client.c: extract_section(), cache_find_section(),
 * debuginfod_find_section()): cut from the debuginfo, or from the
 * executable when the debuginfo has it without bytes (SHT_NOBITS: .text
 * or .gnu_debugdata in an --only-keep-debug file), and cached under the
 * section's own name.  The bytes are the section's as they are in the
 * file (elf_rawdata(): a compressed section stays compressed), what a
 * debuginfod server sends for /section/NAME.
 */

/* Section sec of the file from (a checked debuginfo or executable of
 * hex) cut into the entry's file name.  0 and *out; -ENOENT: from has no
 * such section; -EEXIST: it has one without bytes (SHT_NOBITS, or empty:
 * an empty file in the cache is a miss); -ENODATA: from cannot be read
 * as ELF; else the cache's error (said). */
static int cut_section(struct ds_context *ctx, const char *hex, const char *sec,
		       const char *name, const char *from, char **out)
{
	int fd = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), err;
	uint64_t off, size;

	if (fd < 0)
		return -ENODATA;
	err = ds__elf_section_find(fd, sec, &off, &size);
	if (err == -ENODATA || (!err && !size))
		err = -EEXIST;
	else if (err && err != -ENOENT)
		err = -ENODATA;
	else if (!err && (err = ds__cache_write_range(&ctx->cache, hex, name, fd, off, size)))
		ds_warn(ctx, "cache %s/%s/%s: %s", ctx->cache.root, hex, name, ds_strerror(err));
	else if (!err && asprintf(out, "%s/%s/%s", ctx->cache.root, hex, name) < 0)
		err = -ENOMEM;
	else if (!err)
		ds_info(ctx, "%s/%s: cut from %s (%llu bytes)", hex, name, from,
			(unsigned long long)size);
	close(fd);
	return err;
}

/* cut_section() from the cached debuginfo or executable: -ENODATA when
 * none is cached (or it is unusable). */
static int cut_from_cached(struct ds_context *ctx, const struct ds_build_id *bid,
			   const char *hex, enum ds_artifact what, const char *sec,
			   const char *name, char **out)
{
	char *from = NULL;
	int err = ds__cache_lookup(&ctx->cache, bid, hex, what, artifact_name(what), &from);

	if (!err)
		err = cut_section(ctx, hex, sec, name, from, out);
	else
		err = -ENODATA;
	free(from);
	return err;
}

/* A section not cached, cut from the debuginfo or executable that is
 * (elfutils' cache_find_section(), before any request): 0 and *out;
 * -ENOENT: it is confirmed absent; -ENODATA: the servers must be asked;
 * else the cache's error. */
static int section_from_cache(struct ds_context *ctx, const struct ds_build_id *bid,
			      const char *hex, const char *sec, const char *name, char **out)
{
	int derr = cut_from_cached(ctx, bid, hex, DS_ARTIFACT_DEBUGINFO, sec, name, out), err;

	if (derr != -EEXIST && derr != -ENODATA)
		return derr;
	err = cut_from_cached(ctx, bid, hex, DS_ARTIFACT_EXECUTABLE, sec, name, out);
	if (err == -EEXIST)
		return -ENOENT; /* without bytes in both: nothing to give */
	if (err == -ENOENT && derr == -ENODATA)
		return -ENODATA; /* the debuginfo, not cached, may have it */
	return err;
}

/* A section request being answered from the whole file, when no server
 * could be asked for it (ds_fetch_batch(), section_fallback()). */
struct whole {
	struct ds_fetch_req sub; /* the debuginfo, then the executable */
	int stage; /* 0, then 1: the debuginfo asked, 2: the executable asked, 3: done */
	int derr; /* why the debuginfo gave no section; -EEXIST: it has it without bytes */
};

static int submit(struct ds_fetcher *f, struct ds_fetch_req *r, struct attach *a,
		  struct waiter *w, const char *const *headers);

/* Ask for what (the stage's file) for r: true, r waits for it. */
static bool ask_whole(struct ds_fetcher *f, struct ds_fetch_req *r, struct attach *a,
		      struct whole *wh, struct waiter *w, const char *const *headers,
		      enum ds_artifact what, int stage)
{
	int err;

	memset(&wh->sub, 0, sizeof(wh->sub));
	wh->sub.build_id = r->build_id;
	wh->sub.what = what;
	wh->stage = stage;
	err = submit(f, &wh->sub, a, w, headers);
	if (!err)
		return true;
	wh->stage = 3;
	r->err = err;
	return false;
}

/*
 * The next step of section request r whose servers gave it no section
 * (a->whole): as elfutils' debuginfod_find_section(), the debuginfo,
 * downloaded and checked as any (its IMA signature verified under
 * ima:enforcing), and the section cut from it; the executable when the
 * debuginfo has the section without bytes or cannot be had.  true: r
 * waits for a file; false: r has its answer (r->err, r->path).  Caller's
 * thread, without f->lock.
 */
static bool section_fallback(struct ds_context *ctx, struct ds_fetcher *f,
			     struct ds_fetch_req *r, struct attach *a, struct whole *wh,
			     struct waiter *w, const char *const *headers)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];
	char *name = NULL;
	int err;

	a->whole = false;
	ds_build_id_format(&r->build_id, hex, sizeof(hex));
	if (wh->stage == 0) {
		ds_info(ctx, "section %s of %s: no server may be asked for it or can give it; "
			     "cut from the debuginfo",
			r->arg, hex);
		return ask_whole(f, r, a, wh, w, headers, DS_ARTIFACT_DEBUGINFO, 1);
	}
	err = ds__cache_entry_name(DS_ARTIFACT_SECTION, r->arg, &name);
	r->bytes += wh->sub.bytes;
	if (!err)
		err = wh->sub.err;
	if (!err)
		err = cut_section(ctx, hex, r->arg, name, wh->sub.path, &r->path);
	if (err == -ENODATA)
		err = -EIO; /* a checked file: it changed under us */
	free(wh->sub.path);
	wh->sub.path = NULL;
	free(name);
	if (wh->stage == 1 && (err == -EEXIST || wh->sub.err)) {
		wh->derr = err;
		return ask_whole(f, r, a, wh, w, headers, DS_ARTIFACT_EXECUTABLE, 2);
	}
	if (wh->stage == 2) {
		if (err == -EEXIST)
			err = -ENOENT; /* without bytes in both */
		/* Not in the executable (or no executable either): the
		 * debuginfo's reason, unless it had the section bytes-less. */
		if (err == -ENOENT && wh->derr != -EEXIST && wh->derr)
			err = wh->derr;
	}
	wh->stage = 3;
	r->err = err;
	if (!err)
		r->source = wh->sub.source;
	return false;
}

/* What the caller's thread can answer by itself: the cache. */
static bool answer_from_cache(struct ds_context *ctx, struct ds_fetch_req *r)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];
	char *name, *path = NULL;
	int err;

	if (!valid_req(r)) {
		r->err = -EINVAL;
		return true;
	}
	err = ds__cache_entry_name(r->what, r->arg, &name);
	if (err) {
		r->err = err;
		ds_err(ctx, "%s %s: %s", artifact_name(r->what), r->arg ? r->arg : "",
		       err == -EINVAL ? (r->what == DS_ARTIFACT_SOURCE
					 ? "a source path must be absolute, name a file, "
					   "and have no '.' or '..' component"
					 : "a section name must be one name, not '.' or '..'")
				      : "too long to be a cache entry's name");
		return true;
	}
	ds_build_id_format(&r->build_id, hex, sizeof(hex));
	err = ds__cache_lookup(&ctx->cache, &r->build_id, hex, r->what, name, &path);
	if (err == -ENODATA && r->what == DS_ARTIFACT_SECTION)
		err = section_from_cache(ctx, &r->build_id, hex, r->arg, name, &path);
	free(name);
	if (err == -ENODATA)
		return false;
	r->err = err;
	r->path = path;
	r->source = DS_SOURCE_DEBUGINFOD_CACHE;
	if (!err)
		atomic_fetch_add(&ctx->cache_hits, 1);
	return true;
}

/* A caller's extra request headers: each one "Name: value" line.  A CR
 * or LF would let whoever chose a value (a federating server's client,
 * through X-Forwarded-For or User-Agent) add headers of its own to our
 * request; without a name before a ':' curl would send it as it is. */
bool ds__fetch_valid_headers(const char *const *h)
{
	for (; h && *h; h++) {
		const char *colon = strchr(*h, ':');

		if (!colon || colon == *h || strpbrk(*h, "\r\n"))
			return false;
	}
	return true;
}

/* h (valid, not empty) copied into one malloc()ed block: the pointers,
 * NULL-ended, then the strings.  NULL: no memory. */
static char **headers_copy(const char *const *h)
{
	size_t n = 0, bytes = 0;
	char **v, *p;

	for (; h[n]; n++)
		bytes += strlen(h[n]) + 1;
	if (!(v = malloc((n + 1) * sizeof(*v) + bytes)))
		return NULL;
	p = (char *)(v + n + 1);
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(h[i]) + 1;

		v[i] = memcpy(p, h[i], l);
		p += l;
	}
	v[n] = NULL;
	return v;
}

/* Joining a job already in flight adds nothing to it: its transfers are
 * under way with the headers of the call that made it. */
static int submit(struct ds_fetcher *f, struct ds_fetch_req *r, struct attach *a,
		  struct waiter *w, const char *const *headers)
{
	uint64_t h = job_hash(&r->build_id, r->what, r->arg);
	struct job *job;

	a->w = w;
	a->req = r;
	pthread_mutex_lock(&f->lock);
	job = table_find(f, &r->build_id, r->what, r->arg, h);
	if (job) {
		atomic_fetch_add(&f->joined, 1);
	} else {
		job = calloc(1, sizeof(*job));
		if (!job || !(job->srv = calloc(f->nservers ? f->nservers : 1, sizeof(*job->srv))) ||
		    ds__cache_entry_name(r->what, r->arg, &job->name) ||
		    (r->arg && !(job->arg = strdup(r->arg))) ||
		    (headers && *headers && !(job->headers = headers_copy(headers)))) {
			pthread_mutex_unlock(&f->lock);
			if (job)
				job_free(job);
			return -ENOMEM;
		}
		job->bid = r->build_id;
		ds_build_id_format(&r->build_id, job->hex, sizeof(job->hex));
		job->what = r->what;
		job->hash = h;
		job->dirfd = -1;
		job->wake_at_ns = INT64_MAX;
		job->hnext = f->table[h % TABLE_SIZE];
		f->table[h % TABLE_SIZE] = job;
		job->next = f->incoming;
		f->incoming = job;
	}
	a->job = job;
	a->next = job->attached;
	job->attached = a;
	if (w)
		w->pending++;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

/* Leave every job still running for us; the loop cancels those nobody
 * else waits for.  f->lock held. */
static void detach_all(struct attach *as, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct job *job = as[i].job;

		if (!job)
			continue;
		for (struct attach **pp = &job->attached; *pp; pp = &(*pp)->next)
			if (*pp == &as[i]) {
				*pp = as[i].next;
				break;
			}
		as[i].job = NULL;
		as[i].req->err = -ECANCELED;
		as[i].w->pending--;
	}
}

static void progress_of(struct ds_fetch_req *reqs, size_t n, struct attach *as,
			int64_t start, struct ds_fetch_progress *p)
{
	memset(p, 0, sizeof(*p));
	p->total = n;
	for (size_t i = 0; i < n; i++) {
		if (as[i].job) {
			p->bytes += atomic_load(&as[i].job->bytes);
			continue;
		}
		p->done++;
		p->failed += reqs[i].err != 0;
		p->bytes += reqs[i].bytes;
	}
	p->elapsed_s = (now_ns() - start) / 1e9;
}

DS_API int ds_fetch_batch(struct ds_context *ctx, struct ds_fetch_req *reqs, size_t n,
			  const struct ds_fetch_opts *opts)
{
	ds_fetch_progress_fn progress = DS_OPT(opts, progress, NULL);
	void (*done_fn)(void *, struct ds_fetch_req *) = DS_OPT(opts, done, NULL);
	void *user = DS_OPT(opts, user, NULL);
	const char *const *headers = DS_OPT(opts, headers, NULL);
	unsigned int every_ms = DS_OPT(opts, progress_ms, 0u) ?: 100;
	struct waiter w = { .pending = 0 };
	struct ds_fetcher *f = NULL;
	pthread_mutex_t *lk;
	pthread_condattr_t ca;
	struct attach *as;
	struct whole *wh = NULL; /* sections cut from the whole file, made when one is */
	bool *reported;
	int64_t start = now_ns();
	int failed = 0, err = 0;

	if (!ctx || (!reqs && n) || !ds__fetch_valid_headers(headers))
		return -EINVAL;
	as = calloc(n ? n : 1, sizeof(*as));
	reported = calloc(n ? n : 1, sizeof(*reported));
	if (!as || !reported) {
		free(as);
		free(reported);
		return -ENOMEM;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cond, &ca);
	pthread_condattr_destroy(&ca);
	for (size_t i = 0; i < n; i++) {
		struct ds_fetch_req *r = &reqs[i];

		r->err = 0;
		r->path = NULL;
		r->bytes = 0;
		r->source = DS_SOURCE_NONE;
		as[i].req = r;
		if (answer_from_cache(ctx, r))
			continue;
		if (!ctx->fetch_cfg.urls[0]) {
			r->err = -ENOSYS;
			continue;
		}
		if (!f && !(f = ds__fetcher(ctx, &err))) {
			r->err = err;
			continue;
		}
		/* Set only on failure: once submitted, the result is the
		 * loop's to write (and it may already have). */
		if ((err = submit(f, r, &as[i], &w, headers)))
			r->err = err;
		err = 0;
	}
	if (f)
		ds__transfers_wakeup(&f->t);

	lk = f ? &f->lock : &ctx->fetcher_lock;
	pthread_mutex_lock(lk);
	for (;;) {
		struct ds_fetch_progress p;
		struct timespec until;
		int64_t t;

		/* Report finished requests, and progress, without the lock. */
		for (size_t i = 0; i < n; i++) {
			bool more;

			if (reported[i] || as[i].job)
				continue;
			if (as[i].whole || (wh && wh[i].stage > 0 && wh[i].stage < 3)) {
				if (!wh && !(wh = calloc(n, sizeof(*wh)))) {
					as[i].whole = false;
					reqs[i].err = -ENOMEM;
				} else {
					pthread_mutex_unlock(lk);
					more = section_fallback(ctx, f, &reqs[i], &as[i], &wh[i], &w,
								headers);
					pthread_mutex_lock(lk);
					if (more)
						continue;
				}
			}
			reported[i] = true;
			if (done_fn) {
				pthread_mutex_unlock(lk);
				done_fn(user, &reqs[i]);
				pthread_mutex_lock(lk);
			}
		}
		if (!w.pending)
			break;
		/* The host's cancel, looked at every progress_ms: the jobs
		 * nobody waits for any more are dropped by the loop, their
		 * temporary files with them. */
		if (ds__cancelled(ctx)) {
			detach_all(as, n);
			err = -ECANCELED;
			break;
		}
		if (progress) {
			int cancel;

			progress_of(reqs, n, as, start, &p);
			pthread_mutex_unlock(lk);
			cancel = progress(user, &p);
			pthread_mutex_lock(lk);
			if (cancel) {
				detach_all(as, n);
				err = -ECANCELED;
				break;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		t = until.tv_nsec + (int64_t)every_ms * 1000000;
		until.tv_sec += t / 1000000000;
		until.tv_nsec = t % 1000000000;
		pthread_cond_timedwait(&w.cond, lk, &until);
	}
	pthread_mutex_unlock(lk);
	for (size_t i = 0; wh && i < n; i++) {
		if (wh[i].stage > 0 && wh[i].stage < 3)
			reqs[i].err = -ECANCELED; /* (detached while its file was asked) */
		free(wh[i].sub.path);
	}
	free(wh);
	if (f && err == -ECANCELED)
		ds__transfers_wakeup(&f->t);
	if (progress && !err) {
		struct ds_fetch_progress p;

		progress_of(reqs, n, as, start, &p);
		progress(user, &p);
	}
	pthread_cond_destroy(&w.cond);
	free(as);
	free(reported);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		failed += reqs[i].err != 0;
	return failed;
}

DS_API int ds_fetch_start(struct ds_context *ctx, struct ds_fetch_req *r,
			  const struct ds_fetch_opts *opts)
{
	void (*done_fn)(void *, struct ds_fetch_req *) = DS_OPT(opts, done, NULL);
	void (*body_fn)(void *, struct ds_fetch_req *, const struct ds_fetch_body *) =
		DS_OPT(opts, done_body, NULL);
	const char *const *headers = DS_OPT(opts, headers, NULL);
	struct ds_fetcher *f;
	struct attach *a;
	int err = 0;

	if (!ctx || !r || (!done_fn && !body_fn) || !ds__fetch_valid_headers(headers))
		return -EINVAL;
	/* A section may need its file's whole debuginfo or executable
	 * first (section_fallback()): more than one job, waited for. */
	if (r->what == DS_ARTIFACT_SECTION)
		return -EOPNOTSUPP;
	r->err = 0;
	r->path = NULL;
	r->bytes = 0;
	r->source = DS_SOURCE_NONE;
	if (answer_from_cache(ctx, r))
		return 0;
	if (!ctx->fetch_cfg.urls[0])
		r->err = -ENOSYS;
	else if (!(f = ds__fetcher(ctx, &err)))
		r->err = err;
	else if (!(a = calloc(1, sizeof(*a))))
		r->err = -ENOMEM;
	else {
		/* (set before submit(): the job may end, and call done,
		 * before submit() has returned) */
		a->done = done_fn;
		a->done_body = body_fn;
		a->user = DS_OPT(opts, user, NULL);
		if ((err = submit(f, r, a, NULL, headers)) == 0) {
			ds__transfers_wakeup(&f->t);
			return 1;
		}
		free(a);
		r->err = err;
	}
	return 0;
}

DS_API int ds_fetch(struct ds_context *ctx, const struct ds_build_id *bid, enum ds_artifact what,
		    const char *arg, char **path_out, const struct ds_fetch_opts *opts)
{
	struct ds_fetch_req r = { .what = what, .arg = arg };
	int err;

	if (!ctx || !bid || !path_out)
		return -EINVAL;
	r.build_id = *bid;
	err = ds_fetch_batch(ctx, &r, 1, opts);
	if (err < 0)
		return err;
	if (!r.err)
		*path_out = r.path;
	return r.err;
}

DS_API int ds_fetch_headers(struct ds_context *ctx, const struct ds_build_id *bid,
			    enum ds_artifact what, const char *arg, char **out)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];
	char *name = NULL, *path = NULL;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!ctx || !bid || !bid->size || bid->size > DS_BUILD_ID_MAX ||
	    (unsigned)what > DS_ARTIFACT_SECTION)
		return -EINVAL;
	if ((err = ds__cache_entry_name(what, arg, &name)))
		return err;
	ds_build_id_format(bid, hex, sizeof(hex));
	/* Only the headers of a file that is there, and checked: known
	 * checked, else looked up (and checked) first. */
	err = ds__cache_read_hdr(&ctx->cache, hex, name, true, out);
	if (err == -EAGAIN) {
		err = ds__cache_lookup(&ctx->cache, bid, hex, what, name, &path);
		free(path);
		if (!err)
			err = ds__cache_read_hdr(&ctx->cache, hex, name, false, out);
		else if (err == -ENODATA)
			err = -ENOENT;
	}
	free(name);
	return err;
}

DS_API void ds_fetch_stats(struct ds_context *ctx, struct ds_fetch_stats *out)
{
	struct ds_fetcher *f = ctx ? atomic_load(&ctx->fetcher) : NULL;

	memset(out, 0, sizeof(*out));
	if (ctx)
		out->cache_hits = atomic_load(&ctx->cache_hits);
	if (!f)
		return;
	out->requests = atomic_load(&f->requests);
	out->downloads = atomic_load(&f->downloads);
	out->bytes = atomic_load(&f->bytes);
	out->cache_hits += atomic_load(&f->cache_hits);
	out->joined = atomic_load(&f->joined);
	out->retries = atomic_load(&f->retries);
	out->rejected = atomic_load(&f->rejected);
}

int ds__fetch_found_req(struct ds_context *ctx, const struct ds_fetch_req *r,
			struct ds_found *found, struct ds_strbuf *why)
{
	const char *reason = "";
	int err;

	if (r->err == -ENOSYS) {
		ds__strbuf_addf(why, "\n  %s (debuginfod cache): absent; no servers (DEBUGINFOD_URLS)",
				ctx->cache.root);
		return -ENOENT;
	}
	if (r->err) {
		ds__strbuf_addf(why, "\n  debuginfod: %s", ds_strerror(r->err));
		return r->err;
	}
	err = ds__open_candidate(r->path, &r->build_id, DS_ARTIFACT_DEBUGINFO, found, &reason);
	if (err)
		ds__strbuf_addf(why, "\n  %s (debuginfod): %s", r->path, reason);
	else
		found->source = r->source;
	return err;
}

int ds__fetch_found(struct ds_context *ctx, const struct ds_build_id *bid, struct ds_found *found,
		    struct ds_strbuf *why)
{
	struct ds_fetch_req r = { .what = DS_ARTIFACT_DEBUGINFO };
	int err;

	r.build_id = *bid;
	err = ds_fetch_batch(ctx, &r, 1, NULL);
	if (err < 0)
		return err;
	err = ds__fetch_found_req(ctx, &r, found, why);
	free(r.path);
	return err;
}

DS_API const char *ds_cache_path(struct ds_context *ctx)
{
	return ctx ? ctx->cache.root : NULL;
}

DS_API int ds_cache_stats(struct ds_context *ctx, struct ds_cache_stats *out)
{
	memset(out, 0, sizeof(*out));
	return ctx ? ds__cache_stats(&ctx->cache, out) : -EINVAL;
}

DS_API int ds_cache_clean(struct ds_context *ctx, bool force)
{
	return ctx ? ds__cache_clean(&ctx->cache, force) : -EINVAL;
}
