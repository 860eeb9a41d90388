/* SPDX-License-Identifier: MIT */
/*
 * The transfer machinery (transfer.c) as the fetcher (fetch.c) uses it:
 * libcurl loaded, a multi handle, one transfer per (job, server), and how
 * each ended, as an errno.  Include from those two only.
 */
#ifndef DS_DEBUGINFOD_TRANSFER_H
#define DS_DEBUGINFOD_TRANSFER_H

#include "debuginfod.h"

#include <curl/curl.h>
#include <time.h>

struct ds_fetcher;
struct job;
struct ds__transfers;

/*
 * One transfer.  f, job, server, next, tmpname, elf_need and extent are
 * the fetcher's (transfer.c only carries them); the rest is set as the
 * answer arrives.  loser, bad and too_big are the fetcher's to set (from
 * its hooks or its loop), local_err either's; the transfer stops on them.
 */
struct xfer {
	struct ds_fetcher *f;
	struct job *job;
	void *user; /* another caller's (metadata.c's query), instead of f and job */
	int server;
	struct ds__transfers *t;
	bool is_file; /* from a file:// server: no status code */
	CURL *easy;
	struct xfer *next;
	int fd; /* temporary file, winner only */
	char *tmpname;
	/* A body's first DS__XFER_SPOOL bytes, held until it outgrows them
	 * (then hooks.file() makes the file): a small download costs the
	 * loop no file of its own (the committer writes it). */
	unsigned char *spool;
	uint64_t bytes;
	bool loser, too_big;
	int local_err; /* an errno of ours (writing the cache), not the server's */
	const char *bad; /* why the body is not what was asked for: reject it */
	int bad_err; /* and the error it gives */
	uint64_t header_bytes, announced; /* X-DEBUGINFOD-SIZE, 0 if none */
	bool encoded; /* Content-Encoding: curl decodes */
	/* The answer's X-DEBUGINFOD-* headers as the elfutils client keeps
	 * them: "Name: value\n" each (malloc()ed, NUL-terminated; NULL: none;
	 * the caller frees it) */
	char *xhdrs;
	size_t xhdrs_len;
	uint64_t elf_need; /* bytes before the ELF's extent can be told */
	uint64_t extent; /* the ELF's own extent, once known (else 0) */
	int64_t started_ns;
	uint64_t maxsize; /* the fetcher's cap of this file (a source's), 0: none */
	const char *maxsize_why; /* what that cap is called (NULL: the source's) */
	/* The job's own request headers (ds_fetch_opts.headers; NULL: none),
	 * sent after the shared ones, in own_headers while it runs. */
	char *const *extra_headers;
	struct curl_slist *own_headers;
	char errbuf[CURL_ERROR_SIZE];
};

/* What the fetcher decides as a body (of a 200) arrives, in curl's
 * callback: body() before n more bytes are kept, false to stop the
 * transfer; wrote() once they are (x->bad stops it).  They are kept in
 * x->spool up to DS__XFER_SPOOL bytes, then in x->fd, which file() makes
 * (with what the spool held) when they first outgrow it: 0 or -errno. */
#define DS__XFER_SPOOL (64u << 10)
struct ds__transfer_hooks {
	bool (*body)(struct xfer *x, size_t n);
	void (*wrote)(struct xfer *x, size_t n);
	int (*file)(struct xfer *x);
	/* Optional: the body's bytes kept by the caller instead of written
	 * to x->fd (a metadata answer, held in memory); false stops it. */
	bool (*take)(struct xfer *x, const char *p, size_t n);
};

/* The transfers of one fetcher: its multi handle and what every transfer
 * shares. */
struct ds__transfers {
	const struct ds_fetch_config *cfg;
	struct ds__transfer_hooks hooks;
	CURLM *multi; /* NULL until made, and once released */
	struct curl_slist *headers;
	char user_agent[64];
};

/* libcurl.so.4 loaded (once, when first asked); false: it cannot be. */
bool ds__transfer_load(void);

/* t made for cfg (headers, user agent, the multi handle and its connection
 * limits); -ENOMEM (then release it).  Only once ds__transfer_load(). */
int ds__transfers_init(struct ds__transfers *t, const struct ds_fetch_config *cfg,
		       const struct ds__transfer_hooks *hooks);
void ds__transfers_release(struct ds__transfers *t);
/* Ends a ds__transfers_run() that waits, from any thread. */
void ds__transfers_wakeup(struct ds__transfers *t);
/* Wait for the transfers (timeout_ms at most) and move them along: the
 * hooks run in here. */
void ds__transfers_run(struct ds__transfers *t, int timeout_ms);
/* Each transfer that ended, told: err 0 for a whole answer, else as the
 * transfer or the server failed (-ENOENT: not there, -EFBIG: too big...);
 * code the HTTP status; down: the server cannot be reached (do not ask it
 * again for a while).  ended() may stop and free x. */
typedef void ds__transfer_ended_fn(void *arg, struct xfer *x, int err, long code, bool down);
void ds__transfers_ended(struct ds__transfers *t, ds__transfer_ended_fn *ended, void *arg);
/* Transient: worth another try at the same server. */
bool ds__transfer_transient(int err);

/* x's easy handle made (x->t, x->is_file set): -ENOMEM. */
int ds__transfer_new(struct ds__transfers *t, struct xfer *x, bool is_file);
/* x, made, asked for url: -ENOMEM (then its handle is gone). */
int ds__transfer_start(struct xfer *x, const char *url);
/* x's handle out of the transfers and gone (x itself is the caller's). */
void ds__transfer_stop(struct xfer *x);
/* The most x's body may decode to; why, for the log. */
uint64_t ds__transfer_body_limit(struct xfer *x, const char **why);
/* Each component of path %-escaped, and s; malloc()ed, NULL: no memory. */
char *ds__transfer_url_path(struct xfer *x, const char *path);
char *ds__transfer_escape(struct xfer *x, const char *s);
/* The time the server gave for x's file (0: none), and the URL its bytes
 * came from, after redirects (malloc()ed; NULL: no memory). */
time_t ds__transfer_filetime(struct xfer *x);
char *ds__transfer_url(struct xfer *x);

#endif
