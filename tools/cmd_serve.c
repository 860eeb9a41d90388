/* dsostore serve: a node of the debuginfod federation (tools/serve.h).
 *
 * Threads: libmicrohttpd's pool (--threads) parses requests and sends
 * answers; an answer it has at hand (a file of the -F directories or of
 * the debuginfod cache, the metrics) is made there.  A debuginfo or
 * executable to download is started there (ds_fetch_start()) with the
 * connection suspended, and the library's thread that puts the file in
 * place makes the answer and resumes it (fetch_start()).  Anything else
 * that may wait (sections and sources from upstreams, source files'
 * DWARF, /metadata, /symbolize) is handed to a worker the same way: a
 * pool thread never waits on the network.  A client that goes away does
 * not stop a download: it is finished and cached for the next one.  The
 * main thread waits for signals: SIGTERM/SIGINT drain and stop, SIGUSR1
 * (or SIGHUP) rescans the
 * directories; a scanner thread rescans them every --rescan seconds, and
 * a reaper thread closes connections that send no whole request in time
 * (struct track).  Bounds: docs/serve.md, "Bounds". */
#define _GNU_SOURCE
#include "cli.h"
#include "serve.h"
#include "serve_symreq.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
	O_LISTEN = 1,
	O_PORT,
	O_PORT_FILE,
	O_DIR,
	O_RESCAN,
	O_UPSTREAM,
	O_CACHE,
	O_MEM_BUDGET,
	O_THREADS,
	O_TTL,
	O_MAX_BODY,
	O_MAX_FRAMES,
	O_CONNECTIONS,
	O_IDLE,
	O_DRAIN,
};

static const struct cli_opt serve_opts[] = {
	{ O_LISTEN, 0, "listen", "ADDR",
	  "the address to listen on (127.0.0.1; :: or 0.0.0.0 for every interface)", 0 },
	{ O_PORT, 'p', "port", "PORT", "the port (8002, debuginfod's; 0: any free one)", 0 },
	{ O_PORT_FILE, 0, "port-file", "FILE",
	  "when ready, write the port to FILE (replaced whole)", CLI_ARG_FILE },
	{ O_DIR, 'F', NULL, "DIR",
	  "serve the ELF files under DIR by build ID (repeatable; .build-id trees, "
	  "/usr/lib/debug, perf's ~/.debug)",
	  CLI_ARG_DIR },
	{ O_RESCAN, 0, "rescan", "SECONDS",
	  "walk the -F directories again this often (300; 0: only on SIGUSR1)", 0 },
	{ O_UPSTREAM, 0, "upstream", "URLS",
	  "debuginfod servers asked for what is not here ($DEBUGINFOD_URLS; \"\": none)", 0 },
	{ O_CACHE, 0, "cache", "DIR",
	  "the debuginfod client cache downloads go to ($DEBUGINFOD_CACHE_PATH, else the "
	  "client's default)",
	  CLI_ARG_DIR },
	{ O_MEM_BUDGET, 0, "mem-budget", "SIZE",
	  "bytes of debuginfo and indexes /symbolize may hold open (1G; K, M, G allowed)", 0 },
	{ O_THREADS, 0, "threads", "N", "HTTP threads (twice the cores, at least 4)", 0 },
	{ O_TTL, 0, "forwarded-ttl-limit", "N",
	  "a request that has come through N servers (X-Forwarded-For) is not sent "
	  "upstream (8)",
	  0 },
	{ O_MAX_BODY, 0, "max-body", "SIZE",
	  "bytes of a POST body (64M); the bodies held at once: 4 times that", 0 },
	{ O_MAX_FRAMES, 0, "max-frames", "N", "frames of one /symbolize request (1000000)", 0 },
	{ O_CONNECTIONS, 0, "connections", "N", "connections at once (1024)", 0 },
	{ O_IDLE, 0, "idle-timeout", "SECONDS",
	  "a connection that sends nothing for this long, or no whole request line and "
	  "headers, is closed (30)",
	  0 },
	{ O_DRAIN, 0, "drain-timeout", "SECONDS",
	  "at SIGTERM, how long the requests in flight may take to finish before the "
	  "node stops (30)",
	  0 },
	{ CLI_O_VERBOSE, 'v', "verbose", NULL, "log every request on stderr", 0 },
	{ 0 },
};
static const struct cli_opt *const serve_tables[] = { serve_opts, cli_opts_help, NULL };

/* What a request asked for: http_requests_total's type label. */
enum rtype { RT_DEBUGINFO, RT_EXECUTABLE, RT_SOURCE, RT_SECTION, RT_METRICS, RT_ROOT,
	     RT_SYMBOLIZE, RT_METADATA, RT_INVALID, RT_COUNT };
static const char *const rtype_name[RT_COUNT] = { "debuginfo", "executable", "source",
						  "section",   "metrics",    "/",
						  "symbolize", "metadata",   "invalid" };
/* The statuses the node answers with, for the per-code metrics. */
static const unsigned codes[] = { 200, 400, 404, 405, 406, 413, 500, 503 };
#define NCODES (sizeof(codes) / sizeof(codes[0]))
enum result { RES_NONE, RES_FILE, RES_UPSTREAM, RES_ERROR };
/* Of a download answered by its callback (fetch_done()): STARTED, then
 * whichever of the handler (SUSPENDED: it has suspended the connection)
 * and the callback (DONE: the answer is made) comes second resumes the
 * connection.  (The daemon never ends a connection while a download or
 * a worker has its request: drain().) */
enum astate { A_NONE, A_STARTED, A_SUSPENDED, A_DONE };

struct req {
	struct node *n;
	struct MHD_Connection *conn;
	enum rtype type;
	enum result result;
	int64_t start_ns;
	bool post, head;
	bool offsets; /* POST /symbolize?offsets=1 */
	bool suspended; /* a worker has it */
	char *url, *method;
	char *body;
	size_t body_len, body_cap;
	size_t body_expect; /* its Content-Length (bounded by --max-body); 0: not said */
	bool body_too_big;
	struct symparse *early; /* a large text body's parser (serve.h) */
	char *content_type;
	/* /buildid/... */
	struct ds_build_id bid;
	char *arg; /* a source's canonical path, a section's name; /metadata's value */
	bool glob; /* /metadata?key=glob (else file) */
	char *xff, *ua, *via; /* the headers sent upstream */
	bool hops_reached; /* or a loop: not sent upstream */
	int64_t maxsize;
	/* A debuginfo or executable of the cache or upstreams, fetched with
	 * no worker waiting (fetch_start()): its request, and enum astate. */
	struct ds_fetch_req freq;
	_Atomic int astate;
	/* The answer. */
	struct MHD_Response *resp;
	unsigned int status;
	uint64_t size;
	struct req *next; /* in the work queue */
};

/* A connection, for the header deadline (reaper()): MHD's own timeout
 * counts silence, so a client sending its request line and headers a
 * byte at a time (a slowloris) would hold a connection for ever.  A
 * connection waiting for a request (new, or after one) is closed once it
 * has waited --idle-timeout, whether or not bytes came meanwhile. */
struct track {
	int fd;
	bool waiting; /* for the next request's headers */
	bool reaped;
	int64_t since;
	struct track *prev, *next;
};

/* A build ID's source names (ds_source_names()), kept for the next
 * /source request of the same build ID: a big program's DWARF is not read
 * for each of its files. */
#define SRC_CACHE 32
struct srcnames {
	struct ds_build_id bid;
	char **names;
	size_t n;
	uint64_t used;
};

struct node {
	struct serve sv;
	struct MHD_Daemon *d;
	const char *listen;
	unsigned int port, threads, connections, idle_s, rescan_s, drain_s;
	/* This node in Via headers ("1.1 dsostore-<16 hex digits>", random
	 * at start): a request that already passed through it is a loop. */
	char via_id[40];

	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	struct req *qhead, *qtail;
	bool qstop;
	pthread_t *workers;
	unsigned int nworkers;

	pthread_t scanner;
	pthread_mutex_t slock;
	pthread_cond_t scond;
	bool rescan_now, scan_stop, scanning;

	pthread_mutex_t srclock;
	struct srcnames src[SRC_CACHE];
	uint64_t src_clock;

	/* drain() sets stopping, then looks at what is in flight one last
	 * time; a request, counted in inflight from its headers on, is
	 * handed to a worker or a download (its connection suspended) only
	 * if it then finds stopping unset.  Both sequentially consistent:
	 * a request that found it unset is in flight at that look. */
	atomic_bool stopping;

	pthread_t reaper;
	pthread_mutex_t tlock;
	pthread_cond_t tcond;
	struct track *tracks; /* under tlock */
	bool reaper_stop;

	_Atomic int inflight;
	/* Bytes of POST bodies held (their buffers' sizes), at most
	 * body_total (4 x --max-body): outside --mem-budget, so bounded on
	 * their own; a body that would pass it is answered 503. */
	_Atomic uint64_t body_bytes;
	uint64_t body_total;
	_Atomic uint64_t requests[RT_COUNT];
	_Atomic uint64_t results[4];
	_Atomic uint64_t by_code[RT_COUNT][NCODES + 1][3]; /* count, bytes, microseconds */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static _Noreturn void oom(void)
{
	cli_error("serve: out of memory");
	exit(2);
}

/* ------------------------------------------------------------- messages */

static void lib_log(void *user, enum ds_log_level level, const char *msg)
{
	(void)level;
	serve_log(user, "%s", msg);
}

/* ---------------------------------------------------------------- files */

/* The 406 of a file over the client's X-DEBUGINFOD-MAXSIZE, else NULL. */
static struct MHD_Response *too_large(struct req *rq, uint64_t size)
{
	if (rq->maxsize <= 0 || size <= (uint64_t)rq->maxsize)
		return NULL;
	rq->status = 406;
	return serve_error(&rq->n->sv, 406, "file too large: %" PRIu64 " bytes, max size=%" PRId64,
			   size, rq->maxsize);
}

static struct MHD_Response *no_memory(struct req *rq)
{
	rq->status = 500;
	return serve_error(&rq->n->sv, 500, "out of memory");
}

/* r, a file's size bytes, made the 200 answer: the headers elfutils'
 * clients read; name (X-DEBUGINFOD-FILE) may be NULL. */
static struct MHD_Response *answer_200(struct req *rq, struct MHD_Response *r, uint64_t size,
				       const char *name, time_t mtime)
{
	char buf[64];
	struct tm tm;

	MHD_add_response_header(r, "Content-Type", "application/octet-stream");
	snprintf(buf, sizeof(buf), "%" PRIu64, size);
	MHD_add_response_header(r, "X-DEBUGINFOD-SIZE", buf);
	if (name) {
		const char *base = strrchr(name, '/');

		MHD_add_response_header(r, "X-DEBUGINFOD-FILE", base ? base + 1 : name);
	}
	if (gmtime_r(&mtime, &tm) && strftime(buf, sizeof(buf), "%a, %d %b %Y %T GMT", &tm))
		MHD_add_response_header(r, "Last-Modified", buf);
	/* A build ID's file never changes: any cache may keep it. */
	MHD_add_response_header(r, "Cache-Control", "public");
	rq->status = 200;
	rq->size = rq->head ? 0 : size; /* (what is sent: HEAD has no body) */
	return r;
}

/* A 200 answer of the file fd, bytes [off, off + size) of it; name
 * (X-DEBUGINFOD-FILE) may be NULL.  Takes fd. */
static struct MHD_Response *file_answer(struct req *rq, int fd, uint64_t off, uint64_t size,
					const char *name, time_t mtime)
{
	struct MHD_Response *r = too_large(rq, size);

	if (!r && (r = MHD_create_response_from_fd_at_offset64(size, fd, off)))
		return answer_200(rq, r, size, name, mtime);
	close(fd);
	return r ? r : no_memory(rq);
}

/* Open path, a regular file; with a build ID to check (debuginfo and
 * executables: a -F file may have been replaced since the scan), only if
 * it carries bid.  -errno, -ESTALE for another build ID. */
static int open_checked(const char *path, const struct ds_build_id *bid, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EISDIR;
	}
	if (bid) {
		struct ds_build_id got;

		if (ds_build_id_read_fd(fd, &got) || !ds_build_id_equal(&got, bid)) {
			close(fd);
			return -ESTALE;
		}
	}
	return fd;
}

/* The whole file at path as the answer; NULL (nothing said) if it cannot
 * be opened as one. */
static struct MHD_Response *path_answer(struct req *rq, const char *path,
					const struct ds_build_id *bid, const char *name)
{
	struct stat st;
	int fd = open_checked(path, bid, &st);

	if (fd < 0)
		return NULL;
	return file_answer(rq, fd, 0, (uint64_t)st.st_size, name, st.st_mtime);
}

/* Of the -F directories' file of rq's build ID for what: the file opened
 * with the scan's word that it holds that build ID (unchanged since:
 * ds_dirindex_open()), else, when it changed, after reading its build ID
 * again.  The fd, or -1; *path malloc()ed then. */
static int local_open(struct req *rq, enum ds_artifact what, char **path, struct stat *st)
{
	int fd, err = ds_dirindex_open(rq->n->sv.dirs, &rq->bid, what, path, &fd);

	if (!err && fstat(fd, st) == 0)
		return fd;
	if (!err) {
		close(fd);
		free(*path);
		*path = NULL;
		return -1;
	}
	if (err != -ESTALE || ds_dirindex_find(rq->n->sv.dirs, &rq->bid, what, path))
		return -1;
	fd = open_checked(*path, &rq->bid, st);
	if (fd < 0) {
		free(*path);
		*path = NULL;
	}
	return fd;
}

/* Section rq->arg of the -F file of what; NULL if it has none. */
static struct MHD_Response *section_answer(struct req *rq, enum ds_artifact what)
{
	struct MHD_Response *r = NULL;
	uint64_t off, size;
	struct stat st;
	char *path = NULL;
	int fd = local_open(rq, what, &path, &st);

	if (fd < 0)
		return NULL;
	if (ds_elf_section_range(fd, rq->arg, &off, &size))
		close(fd);
	else
		r = file_answer(rq, fd, off, size, path, st.st_mtime);
	free(path);
	return r;
}

/* From the -F directories: what, or NULL. */
static struct MHD_Response *local_answer(struct req *rq)
{
	struct MHD_Response *r = NULL;
	char *path = NULL;
	struct stat st;
	int fd;

	if (!rq->n->sv.dirs)
		return NULL;
	switch (rq->type) {
	case RT_DEBUGINFO:
	case RT_EXECUTABLE:
		fd = local_open(rq,
				rq->type == RT_DEBUGINFO ? DS_ARTIFACT_DEBUGINFO : DS_ARTIFACT_EXECUTABLE,
				&path, &st);
		if (fd >= 0)
			r = file_answer(rq, fd, 0, (uint64_t)st.st_size, path, st.st_mtime);
		free(path);
		break;
	case RT_SECTION:
		/* The debuginfo's section, else the executable's (as
		 * debuginfod: .gnu_debugdata or .text are not in a debug
		 * file). */
		if (!(r = section_answer(rq, DS_ARTIFACT_DEBUGINFO)))
			r = section_answer(rq, DS_ARTIFACT_EXECUTABLE);
		break;
	default:
		break;
	}
	if (r)
		rq->result = RES_FILE;
	return r;
}

/* ------------------------------------------------------------- upstream */

/* ds_fetch() of what rq asks, with its X-Forwarded-For and User-Agent.
 * *path_out malloc()ed. */
static int fetch(struct req *rq, enum ds_artifact what, const char *arg, char **path_out)
{
	const char *headers[4] = { rq->xff, rq->via, rq->ua, NULL }; /* (ua may be NULL: last) */
	DS_OPTS(ds_fetch_opts, fo, .headers = headers);

	return ds_fetch(rq->n->sv.ctx, &rq->bid, what, arg, path_out, &fo);
}

/* The answer of a failed fetch. */
static struct MHD_Response *fetch_error(struct req *rq, int err)
{
	struct serve *sv = &rq->n->sv;
	char hex[2 * DS_BUILD_ID_MAX + 1];

	ds_build_id_format(&rq->bid, hex, sizeof(hex));
	rq->result = RES_ERROR;
	switch (err) {
	case -ENOENT:
	case -ENOSYS:
		rq->status = 404;
		return serve_error(sv, 404, "not found: %s %s%s%s", hex, rtype_name[rq->type],
				   rq->arg ? " " : "", rq->arg ? rq->arg : "");
	case -EBADMSG:
		/* A server sent a file that is not what was asked: never
		 * relayed, and not a reason to stop asking. */
		rq->status = 404;
		return serve_error(sv, 404, "not found: %s: upstream answered with a file that failed "
					    "verification",
				   hex);
	case -EKEYREJECTED:
		/* An ima:enforcing upstream's file without a valid signature
		 * (never relayed), or a section not asked of it whose
		 * debuginfo and executable (fetched to cut it from, fetch.c's
		 * section_fallback()) had none: 503, what debuginfod answers
		 * for a section it cannot give. */
		if (rq->type == RT_SECTION) {
			rq->status = 503;
			return serve_error(sv, 503, "%s: section %s: upstream is ima:enforcing", hex,
					   rq->arg ? rq->arg : "");
		}
		rq->status = 404;
		return serve_error(sv, 404, "not found: %s: upstream's file has no valid IMA signature",
				   hex);
	case -EFBIG:
		rq->status = 406;
		return serve_error(sv, 406, "%s: file too large", hex);
	default:
		rq->status = 503;
		return serve_error(sv, 503, "%s: upstream: %s", hex, ds_strerror(err));
	}
}

/* What the upstream said of the file that a client of ours needs too, from
 * the headers the cache keeps beside it (hdr-<entry>, elfutils 0.193's):
 * its IMA signature (a client under ima:enforcing checks it) and the
 * archive it came from, as a federating debuginfod relays them. */
static void relay_lines(struct MHD_Response *r, char *h)
{
	static const char *const relayed[] = { "X-DEBUGINFOD-IMASIGNATURE",
					       "X-DEBUGINFOD-ARCHIVE" };
	char *save = NULL;

	for (char *l = strtok_r(h, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(l, ':');

		if (!colon)
			continue;
		*colon = 0;
		for (size_t i = 0; i < sizeof(relayed) / sizeof(relayed[0]); i++)
			if (!strcasecmp(l, relayed[i]))
				MHD_add_response_header(r, relayed[i],
							colon + 1 + strspn(colon + 1, " \t"));
	}
}

/* Those of the download just made (its body, from ds_fetch_start()),
 * else of the cache's hdr- file. */
static void relay_headers(struct req *rq, struct MHD_Response *r, enum ds_artifact what,
			  const char *arg, const struct ds_fetch_body *body)
{
	char *h = NULL;

	if (body && !body->headers)
		return;
	if (body)
		h = strdup(body->headers);
	else if (ds_fetch_headers(rq->n->sv.ctx, &rq->bid, what, arg, &h))
		return;
	if (h)
		relay_lines(r, h);
	free(h);
}

static struct MHD_Response *hops_answer(struct req *rq)
{
	rq->status = 404;
	rq->result = RES_ERROR;
	return serve_error(&rq->n->sv, 404,
			   "not found here, and not asked upstream: the request has come "
			   "through --forwarded-ttl-limit servers, or through this one");
}

/* A download's bytes, verified, handed over from memory before they are
 * in the cache (ds_fetch_start()): a copy of them. */
static struct MHD_Response *body_answer(struct req *rq, const struct ds_fetch_body *body)
{
	struct MHD_Response *r = too_large(rq, body->size);

	if (r)
		return r;
	r = MHD_create_response_from_buffer(body->size, (void *)body->data, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return no_memory(rq);
	return answer_200(rq, r, body->size, NULL, body->mtime);
}

/* The answer of a fetch that ended with err, or with the file at path
 * (freed here), or with body's bytes (path NULL).  body: the download's,
 * from ds_fetch_start(); NULL: none (then the cache has the headers). */
static struct MHD_Response *fetched_file(struct req *rq, int err, char *path, enum ds_artifact what,
					 const char *arg, const struct ds_fetch_body *body)
{
	struct MHD_Response *r;

	if (err)
		return fetch_error(rq, err);
	if (body && body->data) {
		r = body_answer(rq, body);
	} else {
		/* Not read for its build ID again: ds_fetch() gives only a
		 * file it has checked (a download verified before its
		 * rename, a cache hit looked at as it was found), and the
		 * cache's files are replaced only by renames of other
		 * checked files. */
		r = path_answer(rq, path, NULL, NULL);
		free(path);
		if (!r) {
			rq->status = 503;
			rq->result = RES_ERROR;
			return serve_error(&rq->n->sv, 503, "cached file vanished");
		}
	}
	if (rq->status == 200)
		relay_headers(rq, r, what, arg, body);
	rq->result = RES_UPSTREAM;
	return r;
}

/* What is not in the -F directories: the cache, then upstreams. */
static struct MHD_Response *fetched_answer(struct req *rq, enum ds_artifact what, const char *arg)
{
	char *path = NULL;
	int err;

	if (rq->hops_reached)
		return hops_answer(rq);
	err = fetch(rq, what, arg, &path);
	return fetched_file(rq, err, path, what, arg, NULL); /* (path NULL on err) */
}

static void req_free(struct req *rq)
{
	if (rq->resp)
		MHD_destroy_response(rq->resp);
	symparse_free(rq->early); /* (before its body goes) */
	atomic_fetch_sub(&rq->n->body_bytes, rq->body_cap);
	free(rq->freq.path);
	free(rq->url);
	free(rq->method);
	free(rq->body);
	free(rq->content_type);
	free(rq->arg);
	free(rq->xff);
	free(rq->via);
	free(rq->ua);
	free(rq);
}

/* ds_fetch_start()'s callback, on the library's thread that ended the
 * download: the loop, with a small file's bytes verified in memory (the
 * answer does not wait for the cache's fsync()), or the committer that
 * put a larger file in place. */
static void fetch_done(void *user, struct ds_fetch_req *freq, const struct ds_fetch_body *body)
{
	struct req *rq = user;

	rq->resp = fetched_file(rq, freq->err, freq->path, freq->what, NULL, body);
	freq->path = NULL;
	/* (STARTED: the handler has not suspended it yet, and resumes it) */
	if (atomic_exchange(&rq->astate, A_DONE) == A_SUSPENDED)
		MHD_resume_connection(rq->conn);
}

/* Whether rq may be handed to a worker or a download: not once drain()
 * has given up waiting (then the daemon is about to stop, and
 * libmicrohttpd cannot stop with a connection suspended).  Else the
 * answer to send instead (a 503), with *r. */
static bool may_hold(struct req *rq, struct MHD_Response **r)
{
	struct node *n = rq->n;

	if (!atomic_load(&n->stopping))
		return true;
	rq->status = 503;
	rq->result = RES_ERROR;
	*r = serve_error(&n->sv, 503, "the node is stopping");
	return false;
}

/* A debuginfo or executable of the cache or upstreams, with no thread of
 * ours waiting for its download: the library's thread that ends it
 * answers (fetch_done()).  On a loaded machine each thread woken on the
 * way can wait for a CPU; a worker waiting in ds_fetch() was two more of
 * them per miss (bench_serve.sh's misses).  The answer, or NULL with the
 * connection suspended. */
static struct MHD_Response *fetch_start(struct req *rq)
{
	const char *headers[4] = { rq->xff, rq->via, rq->ua, NULL }; /* (ua may be NULL: last) */
	DS_OPTS(ds_fetch_opts, fo, .headers = headers, .done_body = fetch_done, .user = rq);
	struct MHD_Response *r;
	int rc;

	if (rq->hops_reached)
		return hops_answer(rq);
	if (!may_hold(rq, &r))
		return r;
	rq->freq = (struct ds_fetch_req){ .build_id = rq->bid,
					  .what = rq->type == RT_DEBUGINFO
							  ? DS_ARTIFACT_DEBUGINFO
							  : DS_ARTIFACT_EXECUTABLE };
	atomic_store(&rq->astate, A_STARTED);
	rc = ds_fetch_start(rq->n->sv.ctx, &rq->freq, &fo);
	if (rc != 1) { /* (answered at once: the cache, or a failure) */
		char *path = rq->freq.path;

		rq->freq.path = NULL;
		atomic_store(&rq->astate, A_NONE);
		return fetched_file(rq, rc < 0 ? rc : rq->freq.err, path, rq->freq.what, NULL, NULL);
	}
	rq->suspended = true;
	MHD_suspend_connection(rq->conn);
	if (atomic_exchange(&rq->astate, A_SUSPENDED) == A_DONE)
		MHD_resume_connection(rq->conn);
	return NULL;
}

/* The debuginfo of rq's build ID: local, else the cache or upstream.
 * *local says which. */
static int debuginfo_of(struct req *rq, char **path, bool *local)
{
	*local = rq->n->sv.dirs &&
		 !ds_dirindex_find(rq->n->sv.dirs, &rq->bid, DS_ARTIFACT_DEBUGINFO, path);
	if (*local)
		return 0;
	if (rq->hops_reached)
		return -ENOENT;
	return fetch(rq, DS_ARTIFACT_DEBUGINFO, NULL, path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the DWARF of rq's build ID (the file at debuginfo) names
 * rq->arg: 1, 0, or -errno. */
static int source_named(struct req *rq, const char *debuginfo)
{
	struct node *n = rq->n;
	struct srcnames *e = NULL, *victim = &n->src[0];
	char **names;
	size_t count;
	int err, found;

	pthread_mutex_lock(&n->srclock);
	for (size_t i = 0; i < SRC_CACHE; i++) {
		if (n->src[i].names && ds_build_id_equal(&n->src[i].bid, &rq->bid)) {
			e = &n->src[i];
			break;
		}
		if (n->src[i].used < victim->used)
			victim = &n->src[i];
	}
	if (e) {
		e->used = ++n->src_clock;
		found = bsearch(&rq->arg, e->names, e->n, sizeof(char *), cmp_str) != NULL;
		pthread_mutex_unlock(&n->srclock);
		return found;
	}
	pthread_mutex_unlock(&n->srclock);

	err = ds_source_names(debuginfo, &names, &count);
	if (err)
		return err;
	found = bsearch(&rq->arg, names, count, sizeof(char *), cmp_str) != NULL;
	pthread_mutex_lock(&n->srclock);
	free(victim->names);
	victim->bid = rq->bid;
	victim->names = names;
	victim->n = count;
	victim->used = ++n->src_clock;
	pthread_mutex_unlock(&n->srclock);
	return found;
}

/* /source/PATH: only a file the DWARF of the build ID names; from the
 * disk when the build ID is one of the -F directories' (as debuginfod -F
 * serves sources), else from upstream. */
static struct MHD_Response *source_answer(struct req *rq)
{
	struct MHD_Response *r;
	char *debuginfo = NULL;
	bool local;
	int err = debuginfo_of(rq, &debuginfo, &local);

	if (err)
		return fetch_error(rq, err);
	err = source_named(rq, debuginfo);
	free(debuginfo);
	if (err == -ENODATA || err == -ENOEXEC)
		err = 0; /* no DWARF (or no ELF): it names no source */
	if (err <= 0) {
		rq->status = err ? 503 : 404;
		rq->result = RES_ERROR;
		return err ? serve_error(&rq->n->sv, 503, "%s: %s", rq->arg, ds_strerror(err))
			   : serve_error(&rq->n->sv, 404,
					 "not found: %s is not a source file of this build ID",
					 rq->arg);
	}
	if (local && (r = path_answer(rq, rq->arg, NULL, rq->arg))) {
		rq->result = RES_FILE;
		return r;
	}
	return fetched_answer(rq, DS_ARTIFACT_SOURCE, rq->arg);
}

/* A worker's answer to a /buildid request not answered locally. */
static struct MHD_Response *buildid_answer(struct req *rq)
{
	switch (rq->type) { /* (debuginfo and executables: fetch_start()) */
	case RT_SECTION:
		/* A local debuginfo without the section: it has none, do not
		 * ask upstream (as debuginfod). */
		if (rq->n->sv.dirs) {
			char *path = NULL;
			int err = ds_dirindex_find(rq->n->sv.dirs, &rq->bid, DS_ARTIFACT_DEBUGINFO,
						   &path);

			free(path);
			if (!err) {
				rq->status = 404;
				rq->result = RES_ERROR;
				return serve_error(&rq->n->sv, 404, "not found: no section %s",
						   rq->arg);
			}
		}
		return fetched_answer(rq, DS_ARTIFACT_SECTION, rq->arg);
	case RT_SOURCE:
		return source_answer(rq);
	default:
		rq->status = 500;
		return serve_error(&rq->n->sv, 500, "internal error: no answer");
	}
}

/* ------------------------------------------------------------- metadata */

/* /metadata's bounds on the -F directories' part of an answer (past
 * either, "complete" is false): debuginfod's --metadata-maxtime default,
 * and as many results as make some 20 MB of JSON. */
#define METADATA_MAX_MS 5000
#define METADATA_MAX_RESULTS 100000

/* A worker's answer to GET /metadata?key=file|glob&value=V: the -F
 * directories' files, then the upstreams' answers merged (as debuginfod
 * 0.192 federates it), {"results":[...],"complete":BOOL}. */
static struct MHD_Response *metadata_answer(struct req *rq)
{
	struct serve *sv = &rq->n->sv;
	const char *key = rq->glob ? "glob" : "file";
	struct ds_metadata *m = ds_metadata_new();
	struct MHD_Response *r;
	size_t len;
	char *json;
	int err;

	if (!m)
		oom();
	if (sv->dirs && ds_dirindex_metadata(sv->dirs, key, rq->arg, m, METADATA_MAX_RESULTS,
					     METADATA_MAX_MS) == -ENOMEM)
		oom();
	if (sv->upstreams && rq->hops_reached) {
		m->complete = false; /* the upstreams were not asked */
	} else if (sv->upstreams) {
		const char *headers[4] = { rq->xff, rq->via, rq->ua, NULL };
		DS_OPTS(ds_metadata_opts, mo, .headers = headers);

		err = ds_metadata_query(sv->ctx, key, rq->arg, m, &mo);
		if (err && sv->verbose)
			serve_log(sv, "/metadata %s: upstream: %s", key, ds_strerror(err));
	}
	if (!(json = ds_metadata_json(m, &len)))
		oom();
	ds_metadata_free(m);
	r = MHD_create_response_from_buffer(len, json, MHD_RESPMEM_MUST_FREE);
	if (!r)
		oom();
	MHD_add_response_header(r, "Content-Type", "application/json");
	rq->status = 200;
	rq->size = len;
	rq->result = RES_FILE;
	return r;
}

/* GET /metadata?key=KEY&value=VALUE checked into rq: NULL, or the 400
 * answer.  debuginfod answers 503 to an unknown key; a client's mistake
 * is a 400 here, as for /buildid. */
static struct MHD_Response *parse_metadata(struct req *rq)
{
	struct serve *sv = &rq->n->sv;
	const char *key = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "key");
	const char *value = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "value");

	rq->status = 400;
	if (!key || !value || !*value)
		return serve_error(sv, 400, "/metadata needs a key and a value");
	if (strcmp(key, "file") && strcmp(key, "glob"))
		return serve_error(sv, 400, "/metadata: unsupported key (file, glob)");
	if (strlen(value) > 4096)
		return serve_error(sv, 400, "/metadata: a value of over 4096 bytes");
	rq->glob = !strcmp(key, "glob");
	if (!(rq->arg = strdup(value)))
		oom();
	rq->status = 0;
	return NULL;
}

/* -------------------------------------------------------------- workers */

static void work(struct req *rq)
{
	if (rq->type == RT_SYMBOLIZE) {
		struct serve *sv = &rq->n->sv;
		struct symreq req;
		struct symreq_error perr;
		int err = rq->early ? symparse_take(rq->early, &req, &perr)
				    : symreq_parse(&req, rq->body ? rq->body : "", rq->body_len,
						   rq->content_type, rq->offsets, sv->max_frames,
						   &perr);

		/* Parsed into records: the body (up to --max-body) is let
		 * go before any frame is looked up, not held while a long
		 * answer streams. */
		symparse_free(rq->early);
		rq->early = NULL;
		free(rq->body);
		rq->body = NULL;
		atomic_fetch_sub(&rq->n->body_bytes, rq->body_cap);
		rq->body_cap = 0;
		if (err) {
			rq->status = perr.status;
			rq->resp = serve_error(sv, perr.status, "%s", perr.msg);
		} else {
			rq->resp = serve_symbolize(sv, rq->conn, &req, &rq->status);
		}
		rq->result = rq->status == 200 ? RES_FILE : RES_ERROR;
	} else if (rq->type == RT_METADATA) {
		rq->resp = metadata_answer(rq);
	} else {
		rq->resp = buildid_answer(rq);
	}
}

static void *worker(void *arg)
{
	struct node *n = arg;

	for (;;) {
		struct req *rq;

		pthread_mutex_lock(&n->qlock);
		while (!n->qhead && !n->qstop)
			pthread_cond_wait(&n->qcond, &n->qlock);
		rq = n->qhead;
		if (!rq) {
			pthread_mutex_unlock(&n->qlock);
			return NULL;
		}
		n->qhead = rq->next;
		if (!n->qhead)
			n->qtail = NULL;
		pthread_mutex_unlock(&n->qlock);
		work(rq);
		MHD_resume_connection(rq->conn);
	}
}

/* Hand rq to a worker; the connection waits, suspended.  NULL, or the
 * answer to send at once (may_hold()). */
static struct MHD_Response *defer(struct req *rq)
{
	struct node *n = rq->n;
	struct MHD_Response *r;

	if (!may_hold(rq, &r))
		return r;
	rq->suspended = true;
	MHD_suspend_connection(rq->conn);
	pthread_mutex_lock(&n->qlock);
	rq->next = NULL;
	if (n->qtail)
		n->qtail->next = rq;
	else
		n->qhead = rq;
	n->qtail = rq;
	pthread_cond_signal(&n->qcond);
	pthread_mutex_unlock(&n->qlock);
	return NULL;
}

/* -------------------------------------------------------------- metrics */

struct text {
	char *buf;
	size_t len, cap;
};

static void __attribute__((format(printf, 2, 3))) tprintf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			oom();
		if (t->len + (size_t)n < t->cap)
			break;
		t->cap = 2 * (t->cap + (size_t)n + 1024);
		if (!(t->buf = realloc(t->buf, t->cap)))
			oom();
	}
	t->len += (size_t)n;
}

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

static struct MHD_Response *metrics_answer(struct node *n, struct req *rq)
{
	struct ds_dirindex_stats ds = { 0 };
	struct ds_fetch_stats fs;
	struct ds_store_stats ss;
	struct MHD_Response *r;
	struct text t = { 0 };
	static const char *const result_name[] = { "", "file", "upstream", "error" };
	static const char *const sym_status[] = { "symbolized", "no_symbol", "no_debuginfo",
						  "bad_input", "error" };
	const enum serve_metric sym_metric[] = { SM_SYM_FOUND, SM_SYM_NO_SYMBOL,
						 SM_SYM_NO_DEBUGINFO, SM_SYM_BAD, SM_SYM_ERROR };
	bool scanning;

	if (n->sv.dirs)
		ds_dirindex_stats(n->sv.dirs, &ds);
	ds_fetch_stats(n->sv.ctx, &fs);
	ds_store_stats(n->sv.store, &ss);
	pthread_mutex_lock(&n->slock);
	scanning = n->scanning;
	pthread_mutex_unlock(&n->slock);

	/* debuginfod's own names where the meaning is the same. */
	tprintf(&t, "ready 1\n");
	tprintf(&t, "thread_work_total{role=\"traverse\"} %" PRIu64 "\n", ds.scans);
	tprintf(&t, "thread_work_pending{role=\"scan\"} %d\n", scanning);
	tprintf(&t, "scanned_files_total %" PRIu64 "\n", ds.files_read);
	tprintf(&t, "scanned_bytes_total %" PRIu64 "\n", ds.bytes_read);
	for (int i = 0; i < RT_COUNT; i++)
		if (LOAD(n->requests[i]))
			tprintf(&t, "http_requests_total{type=\"%s\"} %" PRIu64 "\n", rtype_name[i],
				LOAD(n->requests[i]));
	for (int i = RES_FILE; i <= RES_ERROR; i++)
		tprintf(&t, "http_responses_total{result=\"%s\"} %" PRIu64 "\n", result_name[i],
			LOAD(n->results[i]));
	for (int i = 0; i < RT_COUNT; i++)
		for (size_t c = 0; c <= NCODES; c++) {
			uint64_t count = LOAD(n->by_code[i][c][0]);
			char code[16];

			if (!count)
				continue;
			if (c < NCODES)
				snprintf(code, sizeof(code), "%u", codes[c]);
			else
				snprintf(code, sizeof(code), "other");
			tprintf(&t,
				"http_responses_transfer_bytes_sum{code=\"%s\",type=\"%s\"} %" PRIu64
				"\n"
				"http_responses_transfer_bytes_count{code=\"%s\",type=\"%s\"} %" PRIu64
				"\n"
				"http_responses_duration_milliseconds_sum{code=\"%s\",type=\"%s\"} "
				"%.3f\n"
				"http_responses_duration_milliseconds_count{code=\"%s\",type=\"%s\"} "
				"%" PRIu64 "\n",
				code, rtype_name[i], LOAD(n->by_code[i][c][1]), code, rtype_name[i],
				count, code, rtype_name[i], LOAD(n->by_code[i][c][2]) / 1000.0, code,
				rtype_name[i], count);
		}
	/* The node's own. */
	tprintf(&t,
		"dsostore_upstream_requests_total %" PRIu64 "\n"
		"dsostore_upstream_verified_total %" PRIu64 "\n"
		"dsostore_upstream_rejected_total %" PRIu64 "\n"
		"dsostore_upstream_joined_total %" PRIu64 "\n"
		"dsostore_upstream_retries_total %" PRIu64 "\n"
		"dsostore_upstream_bytes_total %" PRIu64 "\n"
		"dsostore_cache_hits_total %" PRIu64 "\n",
		fs.requests, fs.downloads, fs.rejected, fs.joined, fs.retries, fs.bytes,
		fs.cache_hits);
	tprintf(&t, "dsostore_inflight_requests %d\n", atomic_load(&n->inflight) - 1);
	tprintf(&t,
		"dsostore_dirindex_files %" PRIu64 "\n"
		"dsostore_dirindex_build_ids %" PRIu64 "\n",
		ds.elf_files, ds.build_ids);
	tprintf(&t, "dsostore_symbolize_requests_total %" PRIu64 "\n",
		LOAD(n->sv.metrics[SM_SYM_REQUESTS]));
	for (size_t i = 0; i < sizeof(sym_status) / sizeof(sym_status[0]); i++)
		tprintf(&t, "dsostore_symbolize_frames_total{status=\"%s\"} %" PRIu64 "\n",
			sym_status[i], LOAD(n->sv.metrics[sym_metric[i]]));
	tprintf(&t,
		"dsostore_store_dsos %" PRIu64 "\n"
		"dsostore_store_bytes_held %" PRIu64 "\n"
		"dsostore_store_evictions_total %" PRIu64 "\n"
		"dsostore_store_index_loads_total %" PRIu64 "\n"
		"dsostore_store_index_builds_total %" PRIu64 "\n",
		ss.dsos, ss.bytes_held, ss.evictions, ss.symindex_loads,
		ss.dwarf_builds + ss.symtab_builds);
	r = MHD_create_response_from_buffer(t.len, t.buf, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(t.buf);
		oom();
	}
	MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4");
	rq->status = 200;
	rq->size = t.len;
	return r;
}

/* -------------------------------------------------------------- requests */

/* "/buildid/HEX/TYPE[/SUFFIX]" into rq; NULL, or the 400 answer. */
static struct MHD_Response *parse_buildid(struct req *rq, const char *url)
{
	struct serve *sv = &rq->n->sv;
	const char *id = url + strlen("/buildid/"), *end = strchr(id, '/'), *type, *rest;
	char hex[2 * DS_BUILD_ID_MAX + 2];
	size_t len = end ? (size_t)(end - id) : strlen(id);

	rq->type = RT_INVALID;
	rq->status = 400;
	if (!end)
		return serve_error(sv, 400, "/buildid/ needs a build ID and an artifact type");
	/* debuginfod's rule: an even number of lowercase hex digits. */
	if (len < 2 || len % 2 || len >= sizeof(hex) || strspn(id, "0123456789abcdef") < len)
		return serve_error(sv, 400, "invalid build ID (2 to %d lowercase hex digits)",
				   2 * DS_BUILD_ID_MAX);
	memcpy(hex, id, len);
	hex[len] = 0;
	if (ds_build_id_parse(hex, &rq->bid))
		return serve_error(sv, 400, "invalid build ID");
	type = end + 1;
	rest = strchr(type, '/');
	len = rest ? (size_t)(rest - type) : strlen(type);
#define IS(s) (len == strlen(s) && !memcmp(type, s, len))
	if (IS("debuginfo") && !rest)
		rq->type = RT_DEBUGINFO;
	else if (IS("executable") && !rest)
		rq->type = RT_EXECUTABLE;
	else if (IS("source") && rest && rest[1])
		rq->type = RT_SOURCE;
	else if (IS("section") && rest && rest[1] && !strchr(rest + 1, '/'))
		rq->type = RT_SECTION;
	else
		return serve_error(sv, 400, "invalid artifact type (debuginfo, executable, "
					    "source/PATH, section/NAME)");
#undef IS
	if (rq->type == RT_SOURCE) {
		size_t cap = strlen(rest) + 1;

		if (!(rq->arg = malloc(cap)))
			oom();
		if (ds_source_canon(rest, rq->arg, cap)) {
			rq->type = RT_INVALID;
			return serve_error(sv, 400, "invalid source path");
		}
	} else if (rq->type == RT_SECTION && !(rq->arg = strdup(rest + 1))) {
		oom();
	}
	rq->status = 0;
	return NULL;
}

/* The client's address, numeric. */
static void client_addr(struct MHD_Connection *c, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	socklen_t sl = !sa ? 0
		       : sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						   : sizeof(struct sockaddr_in);

	buf[0] = 0;
	if (!sa || getnameinfo(sa, sl, buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST))
		snprintf(buf, len, "?");
}

/* A header value fit to be sent on: printable ASCII, bounded. */
static bool header_ok(const char *v)
{
	size_t n = 0;

	for (; *v; v++, n++)
		if ((unsigned char)*v < 0x20 || (unsigned char)*v >= 0x7f || n > 4096)
			return false;
	return true;
}

/* The headers a request sends upstream, and whether it may be sent
 * there: not when its X-Forwarded-For says it has come through too many
 * servers already (debuginfod's rule), nor when its Via says it has come
 * through this node.  The second ends a loop of nodes at once: without
 * it, the request coming back would join the download it is itself
 * waiting for (one download per key), and every node of the loop would
 * wait for the others until a timeout.  A loop through servers that do
 * not pass Via on (debuginfod) still ends by the hop limit, or by that
 * timeout where a download of the same key is in flight. */
static void forwarding(struct req *rq)
{
	const char *xff = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "X-Forwarded-For");
	const char *ua = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "User-Agent");
	const char *via = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Via");
	unsigned int hops = 0;
	char addr[INET6_ADDRSTRLEN + 8];

	if (xff && !header_ok(xff))
		xff = NULL;
	if (via && !header_ok(via))
		via = NULL;
	if (xff && *xff) {
		/* As debuginfod counts: the commas of "XFF, " */
		hops = 1;
		for (const char *p = xff; *p; p++)
			hops += *p == ',';
	}
	rq->hops_reached = hops >= rq->n->sv.forwarded_ttl_limit;
	if (via && strstr(via, rq->n->via_id)) {
		rq->hops_reached = true;
		if (rq->n->sv.verbose)
			serve_log(&rq->n->sv, "%s: a loop (Via: %s): not asked upstream", rq->url, via);
	}
	client_addr(rq->conn, addr, sizeof(addr));
	if (asprintf(&rq->xff, "X-Forwarded-For: %s%s%s", xff && *xff ? xff : "",
		     xff && *xff ? ", " : "", addr) < 0 ||
	    asprintf(&rq->via, "Via: %s%s1.1 %s", via && *via ? via : "", via && *via ? ", " : "",
		     rq->n->via_id) < 0)
		oom();
	if (ua && *ua && header_ok(ua) && asprintf(&rq->ua, "User-Agent: %s", ua) < 0)
		oom();
}

static int64_t maxsize_of(struct MHD_Connection *c)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-DEBUGINFOD-MAXSIZE");
	char *end;
	long long n;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	return errno || *end || n < 0 ? 0 : n;
}

static struct MHD_Response *root_answer(struct req *rq)
{
	static const char text[] = "dsostore serve: a debuginfod server "
				   "(/buildid/ID/debuginfo|executable|source/PATH|section/NAME, "
				   "/metadata?key=file|glob&value=V, /metrics, POST /symbolize)\n";
	struct MHD_Response *r = MHD_create_response_from_buffer(
		sizeof(text) - 1, (void *)text, MHD_RESPMEM_PERSISTENT);

	if (!r)
		oom();
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	rq->status = 200;
	rq->size = sizeof(text) - 1;
	return r;
}

/* /symbolize?offsets=1 (or true): the text's addresses are file offsets. */
static bool offsets_arg(struct MHD_Connection *c)
{
	const char *o = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "offsets");

	return o && (!strcmp(o, "1") || !strcmp(o, "true"));
}

/* The answer of a request whose headers (and body) are in: now, or
 * NULL with the request deferred to a worker. */
static struct MHD_Response *route(struct req *rq)
{
	struct serve *sv = &rq->n->sv;
	const char *url = rq->url;
	struct MHD_Response *r;

	if (!strncmp(url, "/buildid/", 9)) {
		if (!rq->head && strcmp(rq->method, "GET")) {
			rq->status = 405;
			return serve_error(sv, 405, "%s: GET or HEAD only", url);
		}
		if ((r = parse_buildid(rq, url)))
			return r;
		atomic_fetch_add(&rq->n->requests[rq->type], 1);
		rq->maxsize = maxsize_of(rq->conn);
		if ((r = local_answer(rq)))
			return r;
		forwarding(rq);
		if (rq->type == RT_DEBUGINFO || rq->type == RT_EXECUTABLE)
			return fetch_start(rq);
		return defer(rq);
	}
	if (!strcmp(url, "/metrics") || !strcmp(url, "/")) {
		rq->type = url[1] ? RT_METRICS : RT_ROOT;
		atomic_fetch_add(&rq->n->requests[rq->type], 1);
		if (!rq->head && strcmp(rq->method, "GET")) {
			rq->status = 405;
			return serve_error(sv, 405, "%s: GET or HEAD only", url);
		}
		return rq->type == RT_METRICS ? metrics_answer(rq->n, rq) : root_answer(rq);
	}
	if (!strcmp(url, "/metadata")) {
		rq->type = RT_METADATA;
		atomic_fetch_add(&rq->n->requests[rq->type], 1);
		if (!rq->head && strcmp(rq->method, "GET")) {
			rq->status = 405;
			return serve_error(sv, 405, "%s: GET or HEAD only", url);
		}
		if ((r = parse_metadata(rq)))
			return r;
		forwarding(rq);
		return defer(rq);
	}
	if (!strcmp(url, "/symbolize")) {
		rq->type = RT_SYMBOLIZE;
		atomic_fetch_add(&rq->n->requests[rq->type], 1);
		if (!rq->post) {
			rq->status = 405;
			return serve_error(sv, 405, "/symbolize: POST only");
		}
		rq->offsets = offsets_arg(rq->conn);
		if (rq->body_too_big) {
			rq->status = 413;
			return serve_error(sv, 413, "/symbolize: body over %zu bytes (--max-body)",
					   sv->max_body);
		}
		return defer(rq);
	}
	rq->type = RT_INVALID;
	atomic_fetch_add(&rq->n->requests[rq->type], 1);
	rq->status = 404;
	return serve_error(sv, 404, "unknown path (/buildid/, /metadata, /metrics, /symbolize)");
}

/* The connection's track now waits for a request, or has one. */
static void track_waiting(struct node *n, struct MHD_Connection *c, bool waiting)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct track *t = ci ? ci->socket_context : NULL;

	if (!t)
		return;
	pthread_mutex_lock(&n->tlock);
	t->waiting = waiting;
	t->since = now_ns();
	pthread_mutex_unlock(&n->tlock);
}

static enum MHD_Result queue(struct req *rq)
{
	enum MHD_Result ok;

	if (!rq->resp) {
		rq->status = 500;
		rq->resp = serve_error(&rq->n->sv, 500, "out of memory");
		if (!rq->resp)
			return MHD_NO;
	}
	if (!rq->status)
		rq->status = 500;
	if (rq->status != 200 && rq->result == RES_NONE)
		rq->result = RES_ERROR;
	ok = MHD_queue_response(rq->conn, rq->status, rq->resp);
	MHD_destroy_response(rq->resp);
	rq->resp = NULL;
	return ok;
}

/* A large POST body's memory in 2 MiB pages where the kernel has them
 * (transparent huge pages, "madvise" mode as on Debian): written once,
 * front to back, as it comes.  A 50 MB body took some 12,000 page faults
 * in 4 KiB pages, each dear on a paravirtualized machine: the node's
 * faults for a 1M-frame POST went from ~22,000 to ~7,600-12,000, its CPU
 * (median of 12 POSTs) from 1,195 to 1,100 ms.  A hint: without THP
 * nothing changes. */
static void huge_pages(void *p, size_t len)
{
	const size_t huge = 2u << 20;

	if (len >= 2 * huge)
		cli_advise_pages(p, len, huge, MADV_HUGEPAGE);
}

/* A text body of POST /symbolize of at least this many bytes (its
 * Content-Length) is parsed by a thread of its own as it arrives
 * (serve.h, symparse_start()): a million frames are 50 MB that took some
 * 80 ms to parse after the last byte, on one core while the other
 * waited. */
#define EARLY_MIN (1u << 20)

/* Room in rq's body for need bytes (at most --max-body: checked before),
 * counted in the bytes of bodies held; false: the connection is to be
 * closed (said in the log). */
static bool body_room(struct req *rq, size_t need)
{
	struct node *n = rq->n;
	size_t cap;
	uint64_t more;

	if (need <= rq->body_cap)
		return true;
	if (rq->early) { /* (its parser reads the buffer: never moved) */
		serve_log(&n->sv, "%s: more body than its Content-Length: connection closed",
			  rq->url);
		return false;
	}
	/* The size the client said, at once; else doubling. */
	cap = rq->body_cap ? rq->body_cap : rq->body_expect >= need ? rq->body_expect : 64 << 10;
	while (cap < need)
		cap *= 2;
	if (cap > n->sv.max_body)
		cap = n->sv.max_body;
	more = cap - rq->body_cap;
	if (atomic_fetch_add(&n->body_bytes, more) + more > n->body_total) {
		/* (a body without Content-Length, grown past what the node
		 * holds: no answer can be queued now) */
		atomic_fetch_sub(&n->body_bytes, more);
		serve_log(&n->sv, "%s: request bodies over %" PRIu64 " bytes held: connection closed",
			  rq->url, n->body_total);
		return false;
	}
	if (!(rq->body = realloc(rq->body, cap + 1)))
		oom();
	huge_pages(rq->body, cap);
	rq->body_cap = cap;
	return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_size, void **con_cls)
{
	struct node *n = cls;
	struct req *rq = *con_cls;

	(void)version;
	if (!rq) {
		/* The headers are in; the body (if any) comes in later calls. */
		if (!(rq = calloc(1, sizeof(*rq))) || !(rq->url = strdup(url)) ||
		    !(rq->method = strdup(method)))
			oom();
		rq->n = n;
		rq->conn = c;
		rq->start_ns = now_ns();
		rq->post = !strcmp(method, "POST");
		rq->head = !strcmp(method, "HEAD");
		rq->type = RT_INVALID;
		*con_cls = rq;
		atomic_fetch_add(&n->inflight, 1);
		track_waiting(n, c, false);
		if (rq->post) {
			const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								     "Content-Type");
			const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								     "Content-Length");
			unsigned long long said = cl ? strtoull(cl, NULL, 10) : 0;

			if (ct && !(rq->content_type = strdup(ct)))
				oom();
			if (said > n->sv.max_body) {
				rq->body_too_big = true;
				rq->resp = route(rq); /* (never deferred: too big) */
				return queue(rq);
			}
			rq->body_expect = (size_t)said;
			if (cl && !strcmp(url, "/symbolize") &&
			    said > n->body_total - atomic_load(&n->body_bytes)) {
				rq->type = RT_SYMBOLIZE;
				rq->status = 503;
				rq->resp = serve_error(&n->sv, 503,
						       "/symbolize: busy (request bodies held: %" PRIu64
						       " bytes); try again",
						       atomic_load(&n->body_bytes));
				if (rq->resp)
					MHD_add_response_header(rq->resp, "Retry-After", "1");
				return queue(rq);
			}
			/* A large text body: parsed as it comes (serve.h). */
			if (cl && said >= EARLY_MIN && !strcmp(url, "/symbolize") &&
			    !symreq_is_json(rq->content_type) && body_room(rq, rq->body_expect))
				rq->early = symparse_start(rq->body, offsets_arg(c), n->sv.max_frames);
		}
		return MHD_YES;
	}
	if (*data_size) {
		/* A body: only POST /symbolize takes one, kept whole up to
		 * --max-body (a Content-Length over it was answered 413 at
		 * once, below).  MHD can queue an answer only before the body
		 * or after all of it: a chunked body past the limit, or a
		 * body sent where none is taken past a few KiB, closes the
		 * connection. */
		size_t len = *data_size;

		*data_size = 0;
		if (rq->status)
			return MHD_YES; /* answered before the body: dropped */
		if (!rq->post || strcmp(url, "/symbolize")) {
			rq->body_len += len;
			return rq->body_len <= (64 << 10) ? MHD_YES : MHD_NO;
		}
		if (len > n->sv.max_body - rq->body_len) {
			serve_log(&n->sv, "%s: body over %zu bytes (--max-body): connection closed",
				  url, n->sv.max_body);
			return MHD_NO;
		}
		if (!body_room(rq, rq->body_len + len))
			return MHD_NO;
		memcpy(rq->body + rq->body_len, data, len);
		rq->body_len += len;
		if (rq->early)
			symparse_avail(rq->early, rq->body_len);
		return MHD_YES;
	}
	if (rq->status && !rq->suspended)
		return MHD_YES; /* answered before the body came */
	if (rq->suspended) { /* back from a worker */
		rq->suspended = false;
		return queue(rq);
	}
	if (rq->early)
		symparse_end(rq->early); /* the body is whole */
	{
		/* Deferred: the worker may be done and have set rq->resp
		 * already, for the call after the resume to queue it. */
		struct MHD_Response *r = route(rq);

		if (!r && rq->suspended)
			return MHD_YES;
		rq->resp = r;
	}
	return queue(rq);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode what)
{
	struct node *n = cls;
	struct track *t = *socket_context;

	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		if (!ci || !(t = calloc(1, sizeof(*t))))
			return; /* (no deadline for it: MHD's idle timeout still holds) */
		t->fd = ci->connect_fd;
		t->waiting = true;
		t->since = now_ns();
		pthread_mutex_lock(&n->tlock);
		t->next = n->tracks;
		if (t->next)
			t->next->prev = t;
		n->tracks = t;
		pthread_mutex_unlock(&n->tlock);
		*socket_context = t;
	} else if (t) {
		/* MHD closes the socket after this: the reaper, which shuts
		 * sockets down under tlock, cannot touch it once unlinked. */
		pthread_mutex_lock(&n->tlock);
		if (t->prev)
			t->prev->next = t->next;
		else
			n->tracks = t->next;
		if (t->next)
			t->next->prev = t->prev;
		pthread_mutex_unlock(&n->tlock);
		free(t);
		*socket_context = NULL;
	}
}

static void *reaper(void *arg)
{
	struct node *n = arg;

	pthread_mutex_lock(&n->tlock);
	while (!n->reaper_stop) {
		struct timespec until;
		int64_t now = now_ns(), limit = (int64_t)n->idle_s * 1000000000LL;

		for (struct track *t = n->tracks; t; t = t->next)
			if (t->waiting && !t->reaped && now - t->since > limit) {
				/* MHD sees the end of the stream and closes it. */
				shutdown(t->fd, SHUT_RDWR);
				t->reaped = true;
				if (n->sv.verbose)
					serve_log(&n->sv, "a connection sent no whole request in %u s: "
							  "closed",
						  n->idle_s);
			}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&n->tcond, &n->tlock, &until);
	}
	pthread_mutex_unlock(&n->tlock);
	return NULL;
}

static size_t code_index(unsigned int status)
{
	for (size_t i = 0; i < NCODES; i++)
		if (codes[i] == status)
			return i;
	return NCODES;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct node *n = cls;
	struct req *rq = *con_cls;
	int64_t us;
	size_t ci;

	if (!rq)
		return;
	*con_cls = NULL;
	track_waiting(n, c, true); /* for the next request on the connection */
	us = (now_ns() - rq->start_ns) / 1000;
	ci = code_index(rq->status);
	atomic_fetch_add(&n->by_code[rq->type][ci][0], 1);
	atomic_fetch_add(&n->by_code[rq->type][ci][1], rq->size);
	atomic_fetch_add(&n->by_code[rq->type][ci][2], (uint64_t)us);
	atomic_fetch_add(&n->results[rq->result], 1);
	if (n->sv.verbose) {
		char addr[INET6_ADDRSTRLEN + 8];

		client_addr(c, addr, sizeof(addr));
		serve_log(&n->sv, "%s %s %s %u %" PRIu64 " %.1fms%s", addr, rq->method, rq->url,
			  rq->status, rq->size, us / 1000.0,
			  why == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (not completed)");
	}
	req_free(rq);
	atomic_fetch_sub(&n->inflight, 1);
}

/* URLs unescaped as MHD does (%XX), except that %00 stays as it is: a NUL
 * would cut the path short where it is checked. */
static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *out = s;

	(void)cls;
	(void)c;
	for (char *p = s; *p; p++) {
		int hi, lo;

		if (*p == '%' && p[1] && p[2] && (hi = hexval(p[1])) >= 0 &&
		    (lo = hexval(p[2])) >= 0 && (hi || lo)) {
			*out++ = (char)(hi << 4 | lo);
			p += 2;
		} else {
			*out++ = *p;
		}
	}
	*out = 0;
	return (size_t)(out - s);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct node *n = cls;
	char msg[512];
	size_t len;

	if (!n->sv.verbose)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	while (len && msg[len - 1] == '\n')
		msg[--len] = 0;
	serve_log(&n->sv, "http: %s", msg);
}

/* --------------------------------------------------------------- scanner */

static void scan(struct node *n)
{
	struct ds_dirindex_stats st;
	int rc;

	pthread_mutex_lock(&n->slock);
	n->scanning = true;
	pthread_mutex_unlock(&n->slock);
	rc = ds_dirindex_scan(n->sv.dirs);
	pthread_mutex_lock(&n->slock);
	n->scanning = false;
	pthread_mutex_unlock(&n->slock);
	ds_dirindex_stats(n->sv.dirs, &st);
	if (rc < 0)
		serve_log(&n->sv, "scan: %s", ds_strerror(rc));
	if (n->sv.verbose)
		serve_log(&n->sv,
			  "scan: %" PRIu64 " files, %" PRIu64 " ELF with a build ID, %" PRIu64
			  " build IDs; %d read in %.2f s",
			  st.files, st.elf_files, st.build_ids, rc > 0 ? rc : 0, st.last_scan_s);
}

static void *scanner(void *arg)
{
	struct node *n = arg;

	pthread_mutex_lock(&n->slock);
	while (!n->scan_stop) {
		if (!n->rescan_now) {
			if (n->rescan_s) {
				struct timespec until;

				clock_gettime(CLOCK_REALTIME, &until);
				until.tv_sec += n->rescan_s;
				pthread_cond_timedwait(&n->scond, &n->slock, &until);
			} else {
				pthread_cond_wait(&n->scond, &n->slock);
			}
			if (n->scan_stop)
				break;
		}
		n->rescan_now = false;
		pthread_mutex_unlock(&n->slock);
		scan(n);
		pthread_mutex_lock(&n->slock);
	}
	pthread_mutex_unlock(&n->slock);
	return NULL;
}

/* ------------------------------------------------------------ the command */

static bool parse_count(const char *v, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || n > max)
		return false;
	*out = n;
	return true;
}

/* The port, to FILE: written whole under a temporary name and renamed
 * (cli_output_open()), so a waiting script never reads half of it.  0, or
 * the exit status after saying why. */
static int write_port_file(const char *path, unsigned int port)
{
	struct cli_output o;
	int rc = cli_output_open(&o, "serve", "--port-file", path, NULL, 0, NULL);

	if (rc)
		return rc;
	return cli_output_close(&o, fprintf(o.f, "%u\n", port) > 0);
}

/* --listen ADDR (numeric IPv4 or IPv6) and the port as a socket address. */
static int listen_addr(const char *addr, unsigned int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		return 0;
	}
	return -EINVAL;
}

static void drain(struct node *n)
{
	int64_t until = now_ns() + n->drain_s * 1000000000LL;

	/* No new connections: the listening socket is shut down, so that
	 * a client (a proxy) is refused at once and asks another replica
	 * instead of waiting in a backlog nobody accepts from.  MHD's
	 * threads may still look at the descriptor: it is closed after
	 * them.  What is in flight finishes (a download included), within
	 * --drain-timeout. */
	MHD_socket fd = MHD_quiesce_daemon(n->d);
	int left;

	if (fd != MHD_INVALID_SOCKET)
		shutdown(fd, SHUT_RDWR);
	while (atomic_load(&n->inflight) > 0 && now_ns() < until)
		usleep(20000);
	/* From here no request is handed to a worker or a download
	 * (may_hold()): one that was is still in flight now. */
	atomic_store(&n->stopping, true);
	if ((left = atomic_load(&n->inflight)) > 0) {
		/* Past the wait.  libmicrohttpd aborts when stopped with a
		 * connection suspended, and a worker or a download may still
		 * hold its request: the process ends here instead.  The cache
		 * is whole (a file is committed by a rename; a temporary file
		 * left behind is a clean's, as after kill -9), and the
		 * clients see their connections close. */
		serve_log(&n->sv, "stopping with %d requests unfinished", left);
		_exit(0);
	}
	MHD_stop_daemon(n->d);
	n->d = NULL;
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
}

static int cmd_serve(int argc, char **argv)
{
	static struct node node; /* big (the metrics): not on the stack */
	struct node *n = &node;
	struct cli_common common = { 0 };
	const char *dirs[65], *upstream = NULL, *cache = NULL, *port_file = NULL;
	int ndirs = 0, id, status = 0;
	uint64_t budget = 1ULL << 30, max_body = 64ULL << 20;
	unsigned long v;
	struct cli_parse p;
	struct sockaddr_storage ss;
	sigset_t sigs;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	const union MHD_DaemonInfo *di;

	{
		uint64_t rnd;

		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			rnd = (uint64_t)now_ns() ^ ((uint64_t)getpid() << 32);
		snprintf(n->via_id, sizeof(n->via_id), "dsostore-%016" PRIx64, rnd);
	}
	n->listen = "127.0.0.1";
	n->port = 8002;
	n->threads = cores > 2 ? 2 * (unsigned)cores : 4;
	/* A long /symbolize answer is written on every core (at most 8)
	 * while it is sent. */
	n->sv.sym_threads = cores < 1 ? 1 : cores > 8 ? 8 : (unsigned)cores;
	n->connections = 1024;
	n->idle_s = 30;
	n->drain_s = 30;
	n->rescan_s = 300;
	n->sv.max_frames = 1000000;
	n->sv.forwarded_ttl_limit = 8;
	upstream = getenv("DEBUGINFOD_URLS");

	cli_parse_init(&p, &cli_cmd_serve, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		const char *a = p.arg;

		switch (id) {
		case CLI_BAD:
			return 2;
		case CLI_HELP:
			return 0;
		case O_LISTEN:
			n->listen = a;
			break;
		case O_PORT:
			if (!parse_count(a, 65535, &v))
				return cli_usage_error(&p, "--port needs a port number, not '%s'", a);
			n->port = (unsigned)v;
			break;
		case O_PORT_FILE:
			port_file = a;
			break;
		case O_DIR:
			if (ndirs == 64)
				return cli_usage_error(&p, "at most 64 -F directories");
			dirs[ndirs++] = a;
			break;
		case O_RESCAN:
			if (!parse_count(a, 86400 * 365, &v))
				return cli_usage_error(&p, "--rescan needs seconds, not '%s'", a);
			n->rescan_s = (unsigned)v;
			break;
		case O_UPSTREAM:
			upstream = a;
			break;
		case O_CACHE:
			cache = a;
			break;
		case O_MEM_BUDGET:
			if (!cli_parse_size(a, &budget) || !budget)
				return cli_usage_error(&p, "--mem-budget needs a size, not '%s'", a);
			break;
		case O_THREADS:
			if (!parse_count(a, 1024, &v) || !v)
				return cli_usage_error(&p, "--threads needs 1 to 1024, not '%s'", a);
			n->threads = (unsigned)v;
			break;
		case O_TTL:
			if (!parse_count(a, 1000, &v))
				return cli_usage_error(&p, "--forwarded-ttl-limit needs a number, "
							   "not '%s'",
						       a);
			n->sv.forwarded_ttl_limit = (unsigned)v;
			break;
		case O_MAX_BODY:
			if (!cli_parse_size(a, &max_body) || !max_body || max_body > (1ULL << 32))
				return cli_usage_error(&p, "--max-body needs a size up to 4G, not '%s'",
						       a);
			break;
		case O_MAX_FRAMES:
			if (!parse_count(a, 100000000, &v) || !v)
				return cli_usage_error(&p, "--max-frames needs a number, not '%s'", a);
			n->sv.max_frames = v;
			break;
		case O_CONNECTIONS:
			if (!parse_count(a, 65536, &v) || !v)
				return cli_usage_error(&p, "--connections needs a number, not '%s'",
						       a);
			n->connections = (unsigned)v;
			break;
		case O_IDLE:
			if (!parse_count(a, 86400, &v) || !v)
				return cli_usage_error(&p, "--idle-timeout needs seconds, not '%s'",
						       a);
			n->idle_s = (unsigned)v;
			break;
		case O_DRAIN:
			if (!parse_count(a, 86400, &v))
				return cli_usage_error(&p, "--drain-timeout needs seconds, not '%s'",
						       a);
			n->drain_s = (unsigned)v;
			break;
		case CLI_ARG:
			return cli_usage_error(&p, "unexpected argument '%s'", a);
		}
	}
	dirs[ndirs] = NULL;
	n->sv.verbose = common.verbose;
	n->sv.max_body = (size_t)max_body;
	n->body_total = 4 * max_body;
	if (listen_addr(n->listen, n->port, &ss))
		return cli_usage_error(&p, "--listen needs a numeric IPv4 or IPv6 address, not '%s'",
				       n->listen);
	{
		char err[256];

		if (serve_mhd_load(err, sizeof(err))) {
			cli_error("serve: %s", err);
			return 1;
		}
	}

	/* Signals are the main thread's: blocked before any thread starts,
	 * so every thread inherits the mask, and taken with sigwait(). */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	{
		/* Only what the node serves: its -F directories (through the
		 * index), the cache, its upstreams; not this machine's
		 * /usr/lib/debug or ~/.debug unless -F names them. */
		static const char *const no_dirs[] = { NULL };
		DS_OPTS(ds_context_opts, co, .debug_dirs = no_dirs, .perf_buildid_dir = "",
			.urls = upstream ? upstream : "", .cache_path = cache, .log_fn = lib_log,
			.log_user = &n->sv, .log_level = common.verbose ? DS_LOG_INFO : DS_LOG_WARN);

		if (ndirs) {
			DS_OPTS(ds_dirindex_opts, io, .log_fn = lib_log, .log_user = &n->sv,
				.log_level = common.verbose > 1 ? DS_LOG_DEBUG : DS_LOG_WARN);

			char *real[65] = { NULL };
			const char *use[65];

			/* Each by its real path, as debuginfod names what it
			 * indexes (/metadata's "file" values); as given when it
			 * has none (the scan says why).  The index copies them. */
			for (int i = 0; i <= ndirs; i++)
				use[i] = i < ndirs && (real[i] = realpath(dirs[i], NULL)) ? real[i]
											 : dirs[i];
			n->sv.dirs = ds_dirindex_new(use, &io);
			for (int i = 0; i < ndirs; i++)
				free(real[i]);
			if (!n->sv.dirs)
				oom();
			co.dirindex = n->sv.dirs;
		}
		n->sv.upstreams = upstream && upstream[strspn(upstream, " \t\n")];
		if (!(n->sv.ctx = ds_context_new(&co))) {
			cli_error("serve: cannot create a context: %s", ds_strerror(-errno));
			return 1;
		}
	}
	{
		/* file_offsets: /symbolize?offsets=1's executables are
		 * fetched in the same batch as their debuginfo. */
		DS_OPTS(ds_store_opts, so, .mem_budget = budget, .keep_dsos = 1024,
			.file_offsets = true);

		if (!(n->sv.store = ds_store_new(n->sv.ctx, "serve", &so))) {
			cli_error("serve: cannot create a store: %s", ds_strerror(-errno));
			return 1;
		}
	}
	/* The first scan is done before the node listens: a client is never
	 * told 404 for a file it is about to index. */
	if (n->sv.dirs)
		scan(n);

	pthread_mutex_init(&n->qlock, NULL);
	pthread_cond_init(&n->qcond, NULL);
	pthread_mutex_init(&n->slock, NULL);
	pthread_cond_init(&n->scond, NULL);
	pthread_mutex_init(&n->srclock, NULL);
	pthread_mutex_init(&n->tlock, NULL);
	pthread_cond_init(&n->tcond, NULL);
	if (pthread_create(&n->reaper, NULL, reaper, n)) {
		cli_error("serve: cannot start a thread");
		return 1;
	}
	/* Workers wait on the network: many, each little more than a stack. */
	n->nworkers = 64;
	if (!(n->workers = calloc(n->nworkers, sizeof(*n->workers))))
		oom();
	for (unsigned i = 0; i < n->nworkers; i++)
		if (pthread_create(&n->workers[i], NULL, worker, n)) {
			cli_error("serve: cannot start a thread");
			return 1;
		}
	if (n->sv.dirs && pthread_create(&n->scanner, NULL, scanner, n)) {
		cli_error("serve: cannot start a thread");
		return 1;
	}

	n->d = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
			(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		(uint16_t)n->port, NULL, NULL, on_request, n, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
		n, MHD_OPTION_SOCK_ADDR, &ss,
		MHD_OPTION_THREAD_POOL_SIZE, n->threads, MHD_OPTION_CONNECTION_LIMIT,
		n->connections, MHD_OPTION_CONNECTION_TIMEOUT, n->idle_s,
		/* Request line and headers: 32 KiB, a 431/414 past it. */
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 << 10),
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, n, MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, n, MHD_OPTION_UNESCAPE_CALLBACK,
		unescape, NULL, MHD_OPTION_END);
	if (!n->d) {
		cli_error("serve: cannot listen on %s port %u: %s", n->listen, n->port,
			  strerror(errno));
		status = 1;
		goto out;
	}
	di = MHD_get_daemon_info(n->d, MHD_DAEMON_INFO_BIND_PORT);
	n->port = di ? di->port : n->port;
	if (port_file && (status = write_port_file(port_file, n->port)))
		goto stop; /* (with a fixed -p, a request may be in flight) */
	serve_log(&n->sv, "listening on http://%s%s%s:%u", ss.ss_family == AF_INET6 ? "[" : "",
		  n->listen, ss.ss_family == AF_INET6 ? "]" : "", n->port);

	for (;;) {
		int sig;

		if (sigwait(&sigs, &sig))
			continue;
		if (sig == SIGUSR1 || sig == SIGHUP) {
			pthread_mutex_lock(&n->slock);
			n->rescan_now = true;
			pthread_cond_signal(&n->scond);
			pthread_mutex_unlock(&n->slock);
			continue;
		}
		serve_log(&n->sv, "%s: finishing what is in flight, then stopping",
			  sig == SIGINT ? "SIGINT" : "SIGTERM");
		break;
	}
stop:
	drain(n);
out:
	if (n->d) {
		atomic_store(&n->stopping, true);
		MHD_stop_daemon(n->d);
	}
	pthread_mutex_lock(&n->qlock);
	n->qstop = true;
	pthread_cond_broadcast(&n->qcond);
	pthread_mutex_unlock(&n->qlock);
	for (unsigned i = 0; i < n->nworkers; i++)
		pthread_join(n->workers[i], NULL);
	free(n->workers);
	if (n->sv.dirs) {
		pthread_mutex_lock(&n->slock);
		n->scan_stop = true;
		pthread_cond_signal(&n->scond);
		pthread_mutex_unlock(&n->slock);
		pthread_join(n->scanner, NULL);
	}
	pthread_mutex_lock(&n->tlock);
	n->reaper_stop = true;
	pthread_cond_signal(&n->tcond);
	pthread_mutex_unlock(&n->tlock);
	pthread_join(n->reaper, NULL);
	for (size_t i = 0; i < SRC_CACHE; i++)
		free(n->src[i].names);
	ds_store_free(n->sv.store);
	ds_context_free(n->sv.ctx);
	ds_dirindex_free(n->sv.dirs);
	return status;
}

const struct cli_command cli_cmd_serve = {
	.name = "serve",
	.run = cmd_serve,
	.summary = "serve debuginfo (the debuginfod protocol) and symbolize, for a fleet",
	.usage = "[--listen ADDR] [-p PORT] [-F DIR]... [--upstream URLS] [--cache DIR]\n"
		 "[--mem-budget SIZE] [--threads N] [OPTIONS]",
	.about = "A debuginfod server: GET /buildid/ID/debuginfo, executable, source/PATH and\n"
		 "section/NAME, from the ELF files under the -F directories (indexed by build\n"
		 "ID), then the debuginfod cache, then the --upstream servers (each download\n"
		 "verified before it is cached or relayed; one upstream request per build ID\n"
		 "however many clients wait for it).  A source file is served only if the DWARF\n"
		 "of its build ID names it.  POST /symbolize answers (build ID, address) frames\n"
		 "as llvm-symbolizer's JSON; GET /metrics gives Prometheus' text format.\n"
		 "Listens on 127.0.0.1 unless --listen says otherwise.  SIGTERM finishes what is\n"
		 "in flight and exits; SIGUSR1 walks the -F directories again.\n"
		 "docs/serve.md: running one node, a federation, replicas behind a proxy.\n",
	.notes = "Environment: DEBUGINFOD_URLS (the default --upstream), DEBUGINFOD_CACHE_PATH,\n"
		 "DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME, DEBUGINFOD_MAXSIZE,\n"
		 "DEBUGINFOD_RETRY_LIMIT (how the node's client asks its upstreams).\n",
	.tables = serve_tables,
};
