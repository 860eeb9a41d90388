/* SPDX-License-Identifier: MIT */
/*
 * The debuginfod client: one fetcher per context, one event-loop thread on
 * a libcurl multi handle.  The only module that uses libcurl.
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
 *      A body is bounded as it arrives (body_limit(), watch_elf());
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
 */
#define _GNU_SOURCE
#include "debuginfod.h"

#include <curl/curl.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/*
 * libcurl is loaded when the first fetch needs it, not at program start:
 * linked directly it brings ~30 libraries (TLS, GSSAPI, LDAP...) whose
 * loading cost 20-60 ms at every start of the CLI, most of whose runs
 * (buildid, find, symbolize from the cache) never fetch.  The names below
 * are libcurl's, routed through pointers filled by dlsym().
 */
static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	char *(*easy_escape)(CURL *, const char *, int);
	void (*free)(void *);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
	CURLMcode (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd[], unsigned int, int, int *);
	CURLMcode (*multi_perform)(CURLM *, int *);
	CURLMsg *(*multi_info_read)(CURLM *, int *);
	CURLMcode (*multi_wakeup)(CURLM *);
	CURLMcode (*multi_cleanup)(CURLM *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} cu;
static bool cu_loaded;

/* curl.h's type-checking macros wrap some of these names: ours replace them. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
#define curl_global_init cu.global_init
#define curl_easy_init cu.easy_init
#define curl_easy_setopt cu.easy_setopt
#define curl_easy_getinfo cu.easy_getinfo
#define curl_easy_cleanup cu.easy_cleanup
#define curl_easy_escape cu.easy_escape
#define curl_free cu.free
#define curl_multi_init cu.multi_init
#define curl_multi_setopt cu.multi_setopt
#define curl_multi_add_handle cu.multi_add_handle
#define curl_multi_remove_handle cu.multi_remove_handle
#define curl_multi_poll cu.multi_poll
#define curl_multi_perform cu.multi_perform
#define curl_multi_info_read cu.multi_info_read
#define curl_multi_wakeup cu.multi_wakeup
#define curl_multi_cleanup cu.multi_cleanup
#define curl_slist_append cu.slist_append
#define curl_slist_free_all cu.slist_free_all

static void load_curl(void)
{
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	void **fn = (void **)&cu;
	static const char *const names[] = {
		"curl_global_init",	    "curl_easy_init",	       "curl_easy_setopt",
		"curl_easy_getinfo",	    "curl_easy_cleanup",       "curl_easy_escape",
		"curl_free",		    "curl_multi_init",	       "curl_multi_setopt",
		"curl_multi_add_handle",    "curl_multi_remove_handle", "curl_multi_poll",
		"curl_multi_perform",	    "curl_multi_info_read",    "curl_multi_wakeup",
		"curl_multi_cleanup",	    "curl_slist_append",       "curl_slist_free_all",
	};

	_Static_assert(sizeof(cu) == sizeof(names) / sizeof(names[0]) * sizeof(void *),
		       "one name per libcurl pointer");
	if (!h)
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		/* POSIX: a function pointer and void * convert through dlsym. */
		fn[i] = dlsym(h, names[i]);
		if (!fn[i])
			return; /* h stays open: harmless, and keeps it simple */
	}
	cu.global_init(CURL_GLOBAL_DEFAULT);
	cu_loaded = true;
}

#define SERVER_DOWN_NS (60 * 1000000000LL)
#define LOCK_RETRY_NS (25 * 1000000LL)
/* How often a lock waiter looks at the holder's temporary file. */
#define LOCK_PROGRESS_NS (500 * 1000000LL)
/* A lock holder making less progress than a download may (elfutils'
 * DEBUGINFOD_TIMEOUT: 100 KiB within that many seconds) is given up on. */
#define LOCK_PROGRESS_BYTES (100 << 10)
/* The lock wait's bound when DEBUGINFOD_TIMEOUT is 0 (no low-speed limit). */
#define LOCK_WAIT_DEFAULT_S 90
/*
 * Bounds on what a body may decode to, without DEBUGINFOD_MAXSIZE: the
 * size the server announced (X-DEBUGINFOD-SIZE, which debuginfod sends
 * for the file it serves, before any Content-Encoding); else, for an
 * encoded body, DECODE_RATIO times its Content-Length (DWARF deflates
 * 3-10x; a gzip bomb ~1000x); and always DEFAULT_MAXSIZE.
 */
#define DECODE_RATIO 128
#define DEFAULT_MAXSIZE (8ULL << 30)
/* Response headers of one answer; curl's own limit is 100 KiB. */
#define MAX_HEADER_BYTES (64 << 10)
#define MAX_REDIRECTS 5
#define TABLE_SIZE 1024 /* buckets; chains grow past it, that is fine */

enum srv_status { S_ASK, S_RUNNING, S_RETRY, S_NOTFOUND, S_FAILED };

struct server {
	char *url; /* without trailing slash */
	bool is_file;
	int64_t down_until_ns;
	int down_err;
};

struct job_server {
	enum srv_status status;
	int attempts;
	int err;
	int64_t retry_at_ns;
};

struct job;

struct xfer {
	struct ds_fetcher *f;
	struct job *job;
	int server;
	CURL *easy;
	struct xfer *next;
	int fd; /* temporary file, winner only */
	char *tmpname;
	uint64_t bytes;
	bool loser, too_big;
	int local_err; /* an errno of ours (writing the cache), not the server's */
	const char *bad; /* why the body is not what was asked for: reject it */
	int bad_err; /* and the error it gives */
	uint64_t header_bytes, announced; /* X-DEBUGINFOD-SIZE, 0 if none */
	bool encoded; /* Content-Encoding: curl decodes */
	uint64_t elf_need; /* bytes before the ELF's extent can be told */
	uint64_t extent; /* the ELF's own extent, once known (else 0) */
	int64_t started_ns;
	char errbuf[CURL_ERROR_SIZE];
};

struct attach {
	struct waiter *w;
	struct ds_fetch_req *req;
	struct job *job; /* NULL once the result is in */
	struct attach *next; /* in job->attached */
};

struct waiter {
	pthread_cond_t cond;
	size_t pending;
};

/* NEW: queued, holding nothing (so a batch of thousands holds no fds);
 * LOCK_WAIT: another process downloads it; RUNNING: admitted. */
enum job_state { J_NEW, J_LOCK_WAIT, J_RUNNING };

/* A finished download on its way through the committer thread, which
 * verifies, fsync()s and renames it off the event loop. */
struct commit {
	struct job *job;
	struct xfer *x;
	char *url; /* where the bytes came from, after redirects */
	time_t mtime;
	int err;
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
};

struct ds_fetcher {
	struct ds_context *ctx;
	const struct ds_fetch_config *cfg;
	struct ds_cache *cache;
	pthread_mutex_t lock;
	pthread_t thread;
	bool stop; /* under lock */
	CURLM *multi;
	struct curl_slist *headers;
	struct server *servers;
	int nservers;
	struct job *table[TABLE_SIZE]; /* under lock */
	struct job *incoming; /* under lock */
	struct job *active, *active_tail; /* loop thread */
	unsigned int admitted;

	pthread_t committer;
	pthread_mutex_t commit_lock;
	pthread_cond_t commit_cond;
	struct commit *commit_q, *commit_done; /* under commit_lock */
	bool commit_stop;
	char user_agent[64];
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

static char **split_urls(const char *s)
{
	size_t n = 0, cap = 4;
	char **v = calloc(cap + 1, sizeof(*v));

	while (v && s && *s) {
		size_t len;

		s += strspn(s, " \t\n");
		len = strcspn(s, " \t\n");
		if (!len)
			break;
		if (n == cap) {
			char **nv = realloc(v, (2 * cap + 1) * sizeof(*v));

			if (!nv)
				goto fail;
			v = nv;
			cap *= 2;
		}
		while (len > 1 && s[len - 1] == '/')
			len--; /* "http://h:8002/" and "http://h:8002" alike */
		if (!(v[n++] = strndup(s, len)))
			goto fail;
		v[n] = NULL;
		s += strcspn(s, " \t\n");
	}
	return v;
fail:
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
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

int ds__fetch_config_init(struct ds_fetch_config *cfg, const struct ds_context_opts *opts)
{
	const char *urls = DS_OPT(opts, urls, NULL);
	const char *hdrs = DS_OPT(opts, headers_file, NULL);
	long long maxsize = DS_OPT(opts, maxsize, 0);

	memset(cfg, 0, sizeof(*cfg));
	cfg->urls = split_urls(urls ? urls : getenv("DEBUGINFOD_URLS"));
	cfg->headers = read_headers(hdrs ? hdrs : getenv("DEBUGINFOD_HEADERS_FILE"));
	if (!cfg->urls || !cfg->headers)
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
	cfg->retry_limit = DS_OPT(opts, retry_limit, 0) ?: env_int("DEBUGINFOD_RETRY_LIMIT", 2);
	cfg->max_transfers = DS_OPT(opts, max_transfers, 0u) ?: 64;
	cfg->max_per_server = DS_OPT(opts, max_per_server, 0u) ?: 32;
	return 0;
}

void ds__fetch_config_release(struct ds_fetch_config *cfg)
{
	free_strv(cfg->urls);
	free_strv(cfg->headers);
	cfg->urls = cfg->headers = NULL;
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
	free(job->srv);
	free(job->arg);
	free(job->name);
	free(job);
}

/* ------------------------------------------------------- finishing a job */

/* Hand the result to everyone attached, then forget the job. */
static void job_finish(struct ds_fetcher *f, struct job *job, int err, const char *path,
		       enum ds_source source)
{
	uint64_t bytes = atomic_load(&job->bytes);

	if (job->dirfd >= 0) {
		/* A failure leaves no empty entry behind (a miss is a file). */
		if (err)
			ds__cache_entry_prune(f->cache, job->hex);
		close(job->dirfd); /* releases the flock */
		job->dirfd = -1;
	}
	pthread_mutex_lock(&f->lock);
	table_del(f, job);
	for (struct attach *a = job->attached; a; a = a->next) {
		a->req->err = err;
		a->req->source = source;
		a->req->bytes = bytes;
		if (!err && !(a->req->path = strdup(path)))
			a->req->err = -ENOMEM;
		a->job = NULL;
		a->w->pending--;
		pthread_cond_broadcast(&a->w->cond);
	}
	job->attached = NULL;
	pthread_mutex_unlock(&f->lock);

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
	if (x->easy) {
		curl_multi_remove_handle(f->multi, x->easy);
		curl_easy_cleanup(x->easy);
	}
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
	job_finish(f, job, err, NULL, DS_SOURCE_NONE);
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

/* Response headers: bounded, and X-DEBUGINFOD-SIZE / Content-Encoding
 * noted.  Each answer (a redirect's too) starts with its status line. */
static size_t on_header(char *buf, size_t size, size_t nitems, void *user)
{
	struct xfer *x = user;
	size_t n = size * nitems;

	if (n >= 5 && !strncmp(buf, "HTTP/", 5)) {
		x->header_bytes = 0;
		x->announced = 0;
		x->encoded = false;
	}
	x->header_bytes += n;
	if (x->header_bytes > MAX_HEADER_BYTES) {
		x->bad = "response headers too large";
		x->bad_err = -EMSGSIZE;
		return 0;
	}
	if (n > 18 && !strncasecmp(buf, "X-DEBUGINFOD-SIZE:", 18)) {
		char num[32];
		size_t len = n - 18 < sizeof(num) - 1 ? n - 18 : sizeof(num) - 1;
		unsigned long long v;
		char *end;

		memcpy(num, buf + 18, len);
		num[len] = 0;
		v = strtoull(num, &end, 10);
		if (end != num && v > 0)
			x->announced = v;
	} else if (n > 17 && !strncasecmp(buf, "Content-Encoding:", 17)) {
		const char *v = buf + 17 + strspn(buf + 17, " \t");

		x->encoded = strncasecmp(v, "identity", 8) != 0 && *v != '\r' && *v != '\n';
	}
	return n;
}

/* The most this body may decode to (see DECODE_RATIO); why, for the log. */
static uint64_t body_limit(struct ds_fetcher *f, struct xfer *x, const char **why)
{
	uint64_t limit = f->cfg->maxsize > 0 ? (uint64_t)f->cfg->maxsize : DEFAULT_MAXSIZE;
	curl_off_t clen = -1;

	*why = f->cfg->maxsize > 0 ? "DEBUGINFOD_MAXSIZE" : "the default size limit";
	if (x->announced && x->announced < limit) {
		limit = x->announced;
		*why = "the size it announced (X-DEBUGINFOD-SIZE)";
	}
	curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &clen);
	if (x->encoded && clen > 0 && (uint64_t)clen < limit / DECODE_RATIO) {
		limit = (uint64_t)clen * DECODE_RATIO;
		*why = "128 times its compressed Content-Length";
	}
	return limit;
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

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user)
{
	struct xfer *x = user;
	struct job *job = x->job;
	struct ds_fetcher *f = x->f;
	size_t n = size * nmemb;
	const char *why;
	long code = 0;

	if (x->loser)
		return 0; /* aborts this transfer: another server won */
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	if (!(code == 200 || (code == 0 && f->servers[x->server].is_file)))
		return n; /* an error page: the status code is the answer */
	if (job->winner && job->winner != x) {
		x->loser = true;
		return 0;
	}
	if (!job->winner) {
		char tmp[PATH_MAX];
		int fd = ds__cache_tmp_open(job->dirfd, job->name, tmp, sizeof(tmp));

		if (fd < 0 || !(x->tmpname = strdup(tmp))) {
			if (fd >= 0) {
				unlinkat(job->dirfd, tmp, 0);
				close(fd);
			}
			x->local_err = fd < 0 ? -fd : ENOMEM;
			return 0;
		}
		x->fd = fd;
		job->winner = x;
		job->winner_new = true;
	}
	if (x->bytes + n > body_limit(f, x, &why)) {
		ds_warn(f->ctx, "%s: %s/%s decodes past %s; stopped", f->servers[x->server].url,
			job->hex, job->name, why);
		x->too_big = true;
		return 0;
	}
	for (size_t done = 0; done < n;) {
		ssize_t w = write(x->fd, ptr + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			x->local_err = w < 0 ? errno : EIO;
			return 0;
		}
		done += (size_t)w;
	}
	x->bytes += n;
	atomic_fetch_add(&job->bytes, n);
	atomic_fetch_add(&f->bytes, n);
	watch_elf(f, x);
	return x->bad ? 0 : n;
}

/* Each path component of a source file, %-escaped. */
static char *source_url_path(CURL *easy, const char *path)
{
	struct ds_strbuf sb = { 0 };

	while (*path) {
		size_t len = strcspn(path + 1, "/") + 1;
		char *esc;

		if (len == 1) { /* "//": an empty component (0 would mean strlen) */
			ds__strbuf_addf(&sb, "/");
			path += len;
			continue;
		}
		esc = curl_easy_escape(easy, path + 1, (int)len - 1);
		if (!esc) {
			ds__strbuf_release(&sb);
			return NULL;
		}
		ds__strbuf_addf(&sb, "/%s", esc);
		curl_free(esc);
		path += len;
	}
	return sb.buf;
}

static char *job_url(struct ds_fetcher *f, struct job *job, int s, CURL *easy)
{
	const char *base = f->servers[s].url;
	char *url = NULL, *tail = NULL;

	switch (job->what) {
	case DS_ARTIFACT_SOURCE:
		tail = source_url_path(easy, job->arg);
		if (!tail)
			return NULL;
		if (asprintf(&url, "%s/buildid/%s/source%s", base, job->hex, tail) < 0)
			url = NULL;
		free(tail);
		return url;
	case DS_ARTIFACT_SECTION:
		tail = curl_easy_escape(easy, job->arg, 0);
		if (tail && asprintf(&url, "%s/buildid/%s/section/%s", base, job->hex, tail) < 0)
			url = NULL;
		curl_free(tail);
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
static int file_job_url(struct ds_fetcher *f, struct job *job, int s, CURL *easy, char **out)
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
		char *tail = source_url_path(easy, got);

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
	const struct ds_fetch_config *cfg = f->cfg;
	struct xfer *x = calloc(1, sizeof(*x));
	char *url = NULL;
	int err = -ENOMEM;

	if (!x)
		return -ENOMEM;
	x->fd = -1;
	x->f = f;
	x->job = job;
	x->server = s;
	x->easy = curl_easy_init();
	if (x->easy && f->servers[s].is_file)
		err = file_job_url(f, job, s, x->easy, &url);
	else if (x->easy && (url = job_url(f, job, s, x->easy)))
		err = 0;
	if (err) {
		if (x->easy)
			curl_easy_cleanup(x->easy);
		free(x);
		return err;
	}
	curl_easy_setopt(x->easy, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(x->easy, CURLOPT_PRIVATE, x);
	curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(x->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, x);
	/* The path is ours, checked and escaped: curl must not resolve it. */
	curl_easy_setopt(x->easy, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x->easy, CURLOPT_USERAGENT, f->user_agent);
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, f->headers);
	curl_easy_setopt(x->easy, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(x->easy, CURLOPT_FILETIME, 1L);
	curl_easy_setopt(x->easy, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(x->easy, CURLOPT_MAXREDIRS, (long)MAX_REDIRECTS);
	/* A remote server must not send us to a local file. */
	curl_easy_setopt(x->easy, CURLOPT_PROTOCOLS_STR, "http,https,file");
	curl_easy_setopt(x->easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	if (cfg->connect_timeout_s > 0)
		curl_easy_setopt(x->easy, CURLOPT_CONNECTTIMEOUT, (long)cfg->connect_timeout_s);
	if (cfg->timeout_s > 0) {
		/* elfutils: "at least 100K of data within this many seconds". */
		long limit = 100 * 1024 / cfg->timeout_s;

		curl_easy_setopt(x->easy, CURLOPT_LOW_SPEED_TIME, (long)cfg->timeout_s);
		curl_easy_setopt(x->easy, CURLOPT_LOW_SPEED_LIMIT, limit > 0 ? limit : 1L);
	}
	if (cfg->maxtime_s > 0)
		curl_easy_setopt(x->easy, CURLOPT_TIMEOUT, (long)cfg->maxtime_s);
	if (cfg->maxsize > 0)
		curl_easy_setopt(x->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)cfg->maxsize);
	x->started_ns = now_ns();
	if (curl_multi_add_handle(f->multi, x->easy) != CURLM_OK) {
		curl_easy_cleanup(x->easy);
		free(x);
		return -ENOMEM;
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
		else if (js->status == S_FAILED && (err == -ENOENT || js->err == -EBADMSG))
			err = js->err;
	}
	return err;
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
	if (err == -ENOENT && job->dirfd >= 0)
		ds__cache_write_miss(job->dirfd, job->name);
	ds_debug(f->ctx, "%s/%s: %s", job->hex, job->name, ds_strerror(err));
	job_finish(f, job, err, NULL, DS_SOURCE_NONE);
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

/* Transient: worth another try at the same server. */
static bool transient(int err)
{
	return err == -ECONNREFUSED || err == -ECONNRESET || err == -EIO;
}

static int classify(struct ds_fetcher *f, struct xfer *x, CURLcode rc, long code, bool *down)
{
	*down = false;
	if (x->local_err)
		return -x->local_err;
	if (x->bad)
		return x->bad_err;
	if (x->too_big || rc == CURLE_FILESIZE_EXCEEDED || code == 406)
		return -EFBIG;
	switch (rc) {
	case CURLE_OK:
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		*down = true;
		return -EHOSTUNREACH;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		*down = true;
		return -ETIMEDOUT;
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_TOO_MANY_REDIRECTS:
		return -EPROTO;
	case CURLE_FILE_COULDNT_READ_FILE:
	case CURLE_REMOTE_FILE_NOT_FOUND:
		return -ENOENT;
	default:
		return -ECONNRESET; /* recv/send errors, partial file, nothing */
	}
	if (code == 200 || (code == 0 && f->servers[x->server].is_file))
		return 0;
	if (code == 404)
		return -ENOENT;
	if (code == 503 || (code >= 400 && code < 500))
		return -EPROTO; /* debuginfod's "invalid request" */
	return -EIO;
}

/* A finished download: is it what we asked for? */
static int verify(struct ds_fetcher *f, struct xfer *x, const char *url)
{
	const char *server = f->servers[x->server].url;
	struct job *job = x->job;
	const char *bad;
	char why[160];

	if (x->bytes == 0)
		return -EBADMSG; /* empty is how a miss looks in the cache */
	bad = ds__elf_artifact_bad(x->fd, x->bytes, &job->bid, job->what, why, sizeof(why));
	if (!bad)
		return 0;
	ds_warn(f->ctx, "%s%s%s sent %s for %s/%s; rejected", server, url ? ", from " : "",
		url ? url : "", bad, job->hex, job->name);
	atomic_fetch_add(&f->rejected, 1);
	return -EBADMSG;
}

/* The winner's body is complete: hand it to the committer.  Its curl
 * handle goes now (the connection is free for the next transfer); the
 * losers were dropped when it won. */
static void winner_done(struct ds_fetcher *f, struct xfer *x)
{
	struct job *job = x->job;
	struct commit *c = calloc(1, sizeof(*c));
	curl_off_t filetime = -1;

	curl_easy_getinfo(x->easy, CURLINFO_FILETIME_T, &filetime);
	if (c) {
		char *url = NULL;

		curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &url);
		c->url = url ? strdup(url) : NULL;
	}
	xfer_unlink(x);
	curl_multi_remove_handle(f->multi, x->easy);
	curl_easy_cleanup(x->easy);
	x->easy = NULL;
	job->winner = NULL;
	if (!c) {
		job->srv[x->server].status = S_FAILED;
		job->srv[x->server].err = -ENOMEM;
		xfer_free(f, x);
		job_conclude(f, job);
		return;
	}
	c->job = job;
	c->x = x;
	c->mtime = filetime > 0 ? (time_t)filetime : 0;
	job->committing = x;
	pthread_mutex_lock(&f->commit_lock);
	c->next = f->commit_q;
	f->commit_q = c;
	pthread_cond_signal(&f->commit_cond);
	pthread_mutex_unlock(&f->commit_lock);
}

/* Committer thread: verify, fsync and rename, so that a slow disk (or a
 * large file) does not stall every other transfer. */
static void *committer(void *arg)
{
	struct ds_fetcher *f = arg;
	int removed;

	/* Like the elfutils client, clean the cache when the interval of
	 * cache_clean_interval_s has passed; here off the event loop, so the
	 * first fetches do not wait for a walk of a large cache. */
	removed = ds__cache_clean(f->cache, false);
	if (removed > 0)
		ds_info(f->ctx, "cache %s: cleaned, %d files removed", f->cache->root, removed);

	pthread_mutex_lock(&f->commit_lock);
	for (;;) {
		struct commit *c = f->commit_q;

		if (!c) {
			if (f->commit_stop)
				break;
			pthread_cond_wait(&f->commit_cond, &f->commit_lock);
			continue;
		}
		f->commit_q = c->next;
		pthread_mutex_unlock(&f->commit_lock);

		c->err = verify(f, c->x, c->url);
		if (!c->err) {
			c->err = ds__cache_commit(f->cache, c->job->hex, c->job->dirfd,
						  c->x->tmpname, c->job->name, c->x->fd, c->mtime);
			free(c->x->tmpname);
			c->x->tmpname = NULL; /* renamed, or removed by commit */
		}

		pthread_mutex_lock(&f->commit_lock);
		c->next = f->commit_done;
		f->commit_done = c;
		curl_multi_wakeup(f->multi);
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
		if (!err && asprintf(&path, "%s/%s/%s", f->cache->root, job->hex, job->name) < 0)
			err = -ENOMEM;
		if (!err) {
			atomic_fetch_add(&f->downloads, 1);
			xfer_free(f, c->x);
			job_finish(f, job, 0, path, DS_SOURCE_DEBUGINFOD);
			free(path);
		} else if (err == -EBADMSG) {
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

static void xfer_done(struct ds_fetcher *f, CURL *easy, CURLcode rc)
{
	struct xfer *x = NULL;
	struct job *job;
	long code = 0;
	bool down;
	int err, s;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
	if (!x)
		return;
	job = x->job;
	s = x->server;
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
	err = classify(f, x, rc, code, &down);
	if (rc == CURLE_COULDNT_CONNECT) {
		long os_errno = 0;

		/* Out of descriptors here is not the server's fault. */
		curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_errno);
		if (os_errno == EMFILE || os_errno == ENFILE)
			err = -(int)os_errno;
	}
	ds_info(f->ctx, "%s %s from %s: %ld %s%s%s, %.0f ms, %llu bytes", artifact_name(job->what),
		job->hex, f->servers[s].url, code, err ? ds_strerror(err) : "ok", x->bad ? ": " : "",
		x->bad ? x->bad : "", (now_ns() - x->started_ns) / 1e6, (unsigned long long)x->bytes);
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
	} else if (transient(err) && job->srv[s].attempts < f->cfg->retry_limit) {
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
		if (f->admitted >= f->cfg->max_transfers)
			return;
		err = ds__cache_lookup(f->cache, &job->bid, job->hex, job->what, job->name, &path);
		if (err != -ENODATA) {
			job_finish(f, job, err, path, DS_SOURCE_DEBUGINFOD_CACHE);
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
			job_finish(f, job, err == -ENOENT ? -EIO : err, NULL, DS_SOURCE_NONE);
			return;
		}
		job->admitted = true;
		f->admitted++;
		/* It may have arrived while we waited for the lock. */
		err = ds__cache_lookup(f->cache, &job->bid, job->hex, job->what, job->name, &path);
		if (err != -ENODATA) {
			job_finish(f, job, err, path, DS_SOURCE_DEBUGINFOD_CACHE);
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
	job_finish(f, job, -ECANCELED, NULL, DS_SOURCE_NONE);
}

/* Let the committer finish what it has, then end it. */
static void stop_committer(struct ds_fetcher *f)
{
	if (!f->commit_stop) {
		pthread_mutex_lock(&f->commit_lock);
		f->commit_stop = true;
		pthread_cond_signal(&f->commit_cond);
		pthread_mutex_unlock(&f->commit_lock);
		pthread_join(f->committer, NULL);
	}
}

static void *loop(void *arg)
{
	struct ds_fetcher *f = arg;

	for (;;) {
		int64_t now, wake = INT64_MAX;
		struct job *incoming;
		CURLMsg *msg;
		bool stop;
		int left;

		pthread_mutex_lock(&f->lock);
		stop = f->stop;
		incoming = f->incoming;
		f->incoming = NULL;
		for (struct job *j = f->active; j; j = j->next)
			if (!j->attached && !j->cancel) {
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
		for (struct job *j = f->active, *jn; j; j = jn) {
			jn = j->next;
			if (j->state == J_NEW || j->wake_at_ns <= now)
				job_step(f, j);
		}
		for (struct job *j = f->active; j; j = j->next)
			if (j->wake_at_ns < wake)
				wake = j->wake_at_ns;
		now = now_ns();
		curl_multi_poll(f->multi, NULL, 0,
				wake == INT64_MAX ? 1000
				: wake <= now	  ? 0
						  : (int)((wake - now) / 1000000 + 1),
				NULL);
		curl_multi_perform(f->multi, &left);

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
		while ((msg = curl_multi_info_read(f->multi, &left)))
			if (msg->msg == CURLMSG_DONE)
				xfer_done(f, msg->easy_handle, msg->data.result);
		commits_done(f);
		fail_down_servers(f);
	}
	return NULL;
}

/* -------------------------------------------------------- the fetcher */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

void ds__fetcher_free(struct ds_fetcher *f)
{
	if (!f)
		return;
	if (f->multi) {
		pthread_mutex_lock(&f->lock);
		f->stop = true;
		pthread_mutex_unlock(&f->lock);
		curl_multi_wakeup(f->multi);
		pthread_join(f->thread, NULL);
		curl_multi_cleanup(f->multi);
	}
	for (int s = 0; s < f->nservers; s++)
		free(f->servers[s].url);
	free(f->servers);
	curl_slist_free_all(f->headers);
	pthread_mutex_destroy(&f->lock);
	pthread_mutex_destroy(&f->commit_lock);
	pthread_cond_destroy(&f->commit_cond);
	free(f);
}

static struct ds_fetcher *fetcher_new(struct ds_context *ctx, int *err)
{
	const struct ds_fetch_config *cfg = &ctx->fetch_cfg;
	struct ds_fetcher *f = calloc(1, sizeof(*f));
	char maxsize[64];
	int n = 0;

	if (!f) {
		*err = -ENOMEM;
		return NULL;
	}
	pthread_once(&curl_once, load_curl);
	if (!cu_loaded) {
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
	snprintf(f->user_agent, sizeof(f->user_agent), "dsostore/%d.%d.%d", DS_VERSION_MAJOR,
		 DS_VERSION_MINOR, DS_VERSION_PATCH);
	while (cfg->urls[n])
		n++;
	f->servers = calloc(n ? n : 1, sizeof(*f->servers));
	if (!f->servers)
		goto nomem;
	for (int i = 0; i < n; i++) {
		if (!(f->servers[i].url = strdup(cfg->urls[i])))
			goto nomem;
		f->servers[i].is_file = !strncmp(cfg->urls[i], "file://", 7);
		f->nservers++;
	}
	for (char **h = cfg->headers; *h; h++) {
		struct curl_slist *l = curl_slist_append(f->headers, *h);

		if (!l)
			goto nomem;
		f->headers = l;
	}
	if (cfg->maxsize > 0) {
		struct curl_slist *l;

		snprintf(maxsize, sizeof(maxsize), "X-DEBUGINFOD-MAXSIZE: %lld",
			 (long long)cfg->maxsize);
		if (!(l = curl_slist_append(f->headers, maxsize)))
			goto nomem;
		f->headers = l;
	}
	f->multi = curl_multi_init();
	if (!f->multi)
		goto nomem;
	curl_multi_setopt(f->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)cfg->max_transfers);
	curl_multi_setopt(f->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)cfg->max_per_server);
	/* HTTP/2 servers take many requests on one connection. */
	curl_multi_setopt(f->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	if (pthread_create(&f->committer, NULL, committer, f) != 0) {
		curl_multi_cleanup(f->multi);
		f->multi = NULL;
		goto nomem;
	}
	if (pthread_create(&f->thread, NULL, loop, f) != 0) {
		stop_committer(f);
		curl_multi_cleanup(f->multi);
		f->multi = NULL;
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

static int submit(struct ds_fetcher *f, struct ds_fetch_req *r, struct attach *a,
		  struct waiter *w)
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
		    (r->arg && !(job->arg = strdup(r->arg)))) {
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
	unsigned int every_ms = DS_OPT(opts, progress_ms, 0u) ?: 100;
	struct waiter w = { .pending = 0 };
	struct ds_fetcher *f = NULL;
	pthread_mutex_t *lk;
	pthread_condattr_t ca;
	struct attach *as;
	bool *reported;
	int64_t start = now_ns();
	int failed = 0, err = 0;

	if (!ctx || (!reqs && n))
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
		if ((err = submit(f, r, &as[i], &w)))
			r->err = err;
		err = 0;
	}
	if (f)
		curl_multi_wakeup(f->multi);

	lk = f ? &f->lock : &ctx->fetcher_lock;
	pthread_mutex_lock(lk);
	for (;;) {
		struct ds_fetch_progress p;
		struct timespec until;
		int64_t t;

		/* Report finished requests, and progress, without the lock. */
		for (size_t i = 0; i < n; i++) {
			if (reported[i] || as[i].job)
				continue;
			reported[i] = true;
			if (done_fn) {
				pthread_mutex_unlock(lk);
				done_fn(user, &reqs[i]);
				pthread_mutex_lock(lk);
			}
		}
		if (!w.pending)
			break;
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
	if (f && err == -ECANCELED)
		curl_multi_wakeup(f->multi);
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
