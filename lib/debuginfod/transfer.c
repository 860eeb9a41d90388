/* SPDX-License-Identifier: MIT */
/*
 * The fetcher's transfer machinery: libcurl, loaded when first needed, and
 * the HTTP side of a download.  One multi handle per fetcher, moved along
 * by the fetcher's event loop; one easy handle per transfer, set up with
 * the configured timeouts, size limits, headers and redirect rules; a
 * body's headers bounded and read (X-DEBUGINFOD-SIZE, Content-Encoding),
 * its bytes written to the file the fetcher gives, and the end of a
 * transfer told as an errno.  The only file that uses libcurl.
 *
 * Apart from fetch.c, which holds the requests (jobs, which servers, the
 * cache, verification, retries per server, the batch API): that logic
 * reads no curl, and this file knows no job.  What fetch.c decides while a
 * body arrives (which transfer wins, where it is written, when it is too
 * big or not an ELF) it gives as hooks, function pointers this file calls
 * through (struct ds__transfer_hooks); nothing here calls fetch.c by name.
 */
#define _GNU_SOURCE
#include "transfer.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* libcurl's receive buffer, per transfer (64 at most at once: 4 MiB). */
#define DS__XFER_BUFFER (64 << 10)

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

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

bool ds__transfer_load(void)
{
	pthread_once(&curl_once, load_curl);
	return cu_loaded;
}

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

/* ------------------------------------------------------------ the transfers */

int ds__transfers_init(struct ds__transfers *t, const struct ds_fetch_config *cfg,
		       const struct ds__transfer_hooks *hooks)
{
	char maxsize[64];

	t->cfg = cfg;
	t->hooks = *hooks;
	snprintf(t->user_agent, sizeof(t->user_agent), "dsostore/%d.%d.%d", DS_VERSION_MAJOR,
		 DS_VERSION_MINOR, DS_VERSION_PATCH);
	for (char **h = cfg->headers; *h; h++) {
		struct curl_slist *l = curl_slist_append(t->headers, *h);

		if (!l)
			return -ENOMEM;
		t->headers = l;
	}
	if (cfg->maxsize > 0) {
		struct curl_slist *l;

		snprintf(maxsize, sizeof(maxsize), "X-DEBUGINFOD-MAXSIZE: %lld",
			 (long long)cfg->maxsize);
		if (!(l = curl_slist_append(t->headers, maxsize)))
			return -ENOMEM;
		t->headers = l;
	}
	t->multi = curl_multi_init();
	if (!t->multi)
		return -ENOMEM;
	curl_multi_setopt(t->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)cfg->max_transfers);
	curl_multi_setopt(t->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)cfg->max_per_server);
	/* HTTP/2 servers take many requests on one connection. */
	curl_multi_setopt(t->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	return 0;
}

void ds__transfers_release(struct ds__transfers *t)
{
	if (t->multi)
		curl_multi_cleanup(t->multi);
	t->multi = NULL;
	curl_slist_free_all(t->headers);
	t->headers = NULL;
}

void ds__transfers_wakeup(struct ds__transfers *t)
{
	curl_multi_wakeup(t->multi);
}

/*
 * curl_multi_poll() and _perform(), not curl's socket API: an epoll loop
 * over curl_multi_socket_action() was tried (6 December).  It cut the
 * poll() calls of `dsostore serve`'s misses from 7.4 to 2.9 per download,
 * but added 2.2 epoll_ctl() calls, left bench_serve's miss wall time where
 * it was, and made bench_fetch's burst without latency slower and
 * unsteady (200 files: 50-74 ms against 48-56 ms).
 */
void ds__transfers_run(struct ds__transfers *t, int timeout_ms)
{
	int left;

	curl_multi_poll(t->multi, NULL, 0, timeout_ms, NULL);
	curl_multi_perform(t->multi, &left);
}

static int classify(struct xfer *x, CURLcode rc, long code, bool *down)
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
	if (code == 200 || (code == 0 && x->is_file))
		return 0;
	if (code == 404)
		return -ENOENT;
	if (code == 503 || (code >= 400 && code < 500))
		return -EPROTO; /* debuginfod's "invalid request" */
	return -EIO;
}

/* Transient: worth another try at the same server. */
bool ds__transfer_transient(int err)
{
	return err == -ECONNREFUSED || err == -ECONNRESET || err == -EIO;
}

void ds__transfers_ended(struct ds__transfers *t, ds__transfer_ended_fn *ended, void *arg)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(t->multi, &left))) {
		struct xfer *x = NULL;
		long code = 0;
		bool down;
		int err;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		if (!x)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
		err = classify(x, msg->data.result, code, &down);
		if (msg->data.result == CURLE_COULDNT_CONNECT) {
			long os_errno = 0;

			/* Out of descriptors here is not the server's fault. */
			curl_easy_getinfo(msg->easy_handle, CURLINFO_OS_ERRNO, &os_errno);
			if (os_errno == EMFILE || os_errno == ENFILE)
				err = -(int)os_errno;
		}
		ended(arg, x, err, code, down);
	}
}

/* ------------------------------------------------------------- one transfer */

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
		x->xhdrs_len = 0; /* a redirect's are not the file's */
		if (x->xhdrs)
			x->xhdrs[0] = 0;
	}
	x->header_bytes += n;
	if (x->header_bytes > MAX_HEADER_BYTES) {
		x->bad = "response headers too large";
		x->bad_err = -EMSGSIZE;
		return 0;
	}
	if (n > 13 && !strncasecmp(buf, "X-DEBUGINFOD-", 13) && memchr(buf, ':', n)) {
		/* elfutils' block: the line without its CR LF, then "\n"
		 * (bounded: by MAX_HEADER_BYTES above) */
		size_t len = n;
		char *nb;

		while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			len--;
		if (memchr(buf, 0, len))
			return n; /* not text: not kept */
		nb = realloc(x->xhdrs, x->xhdrs_len + len + 2);
		if (!nb) {
			x->local_err = ENOMEM;
			return 0;
		}
		memcpy(nb + x->xhdrs_len, buf, len);
		x->xhdrs_len += len;
		nb[x->xhdrs_len++] = '\n';
		nb[x->xhdrs_len] = 0;
		x->xhdrs = nb;
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
uint64_t ds__transfer_body_limit(struct xfer *x, const char **why)
{
	const struct ds_fetch_config *cfg = x->t->cfg;
	uint64_t limit = cfg->maxsize > 0 ? (uint64_t)cfg->maxsize : DEFAULT_MAXSIZE;
	curl_off_t clen = -1;

	*why = cfg->maxsize > 0 ? "DEBUGINFOD_MAXSIZE" : "the default size limit";
	if (x->maxsize && x->maxsize < limit) {
		limit = x->maxsize;
		*why = x->maxsize_why ? x->maxsize_why
				      : "the source size limit (DSOSTORE_SOURCE_MAXSIZE)";
	}
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

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user)
{
	struct xfer *x = user;
	size_t n = size * nmemb;
	long code = 0;

	if (x->loser)
		return 0; /* aborts this transfer: another server won */
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	if (!(code == 200 || (code == 0 && x->is_file)))
		return n; /* an error page: the status code is the answer */
	if (!x->t->hooks.body(x, n))
		return 0;
	if (x->t->hooks.take) {
		if (!x->t->hooks.take(x, ptr, n))
			return 0;
		x->bytes += n;
		return x->bad ? 0 : n;
	}
	if (x->fd < 0 && x->bytes + n <= DS__XFER_SPOOL) {
		if (!x->spool && !(x->spool = malloc(DS__XFER_SPOOL))) {
			x->local_err = ENOMEM;
			return 0;
		}
		memcpy(x->spool + x->bytes, ptr, n);
	} else {
		int err = x->fd < 0 ? x->t->hooks.file(x) : 0;

		if (err) {
			x->local_err = -err;
			return 0;
		}
		if ((err = ds__write_all(x->fd, ptr, n))) {
			x->local_err = -err;
			return 0;
		}
	}
	x->bytes += n;
	x->t->hooks.wrote(x, n);
	return x->bad ? 0 : n;
}

/* Each path component of a source file, %-escaped. */
char *ds__transfer_url_path(struct xfer *x, const char *path)
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
		esc = curl_easy_escape(x->easy, path + 1, (int)len - 1);
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

char *ds__transfer_escape(struct xfer *x, const char *s)
{
	char *esc = curl_easy_escape(x->easy, s, 0), *out = esc ? strdup(esc) : NULL;

	curl_free(esc);
	return out;
}

int ds__transfer_new(struct ds__transfers *t, struct xfer *x, bool is_file)
{
	x->t = t;
	x->is_file = is_file;
	x->easy = curl_easy_init();
	return x->easy ? 0 : -ENOMEM;
}

/* The shared headers, then x's own: one list of x's (curl keeps using
 * the list it is given until the transfer ends).  A custom User-Agent
 * replaces curl's CURLOPT_USERAGENT. */
static int own_headers(struct xfer *x)
{
	struct curl_slist *l = NULL;

	for (const struct curl_slist *h = x->t->headers; h; h = h->next)
		if (!(l = curl_slist_append(x->own_headers, h->data)))
			return -ENOMEM;
		else
			x->own_headers = l;
	for (char *const *h = x->extra_headers; *h; h++)
		if (!(l = curl_slist_append(x->own_headers, *h)))
			return -ENOMEM;
		else
			x->own_headers = l;
	return 0;
}

int ds__transfer_start(struct xfer *x, const char *url)
{
	const struct ds__transfers *t = x->t;
	const struct ds_fetch_config *cfg = t->cfg;

	if (x->extra_headers && *x->extra_headers && own_headers(x)) {
		curl_easy_cleanup(x->easy);
		x->easy = NULL;
		return -ENOMEM;
	}

	curl_easy_setopt(x->easy, CURLOPT_URL, url);
	curl_easy_setopt(x->easy, CURLOPT_PRIVATE, x);
	curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
	/* A read (and a write to the temporary file) per 64 KiB, not
	 * libcurl's 16: a 16 KiB debuginfo with its headers took two reads,
	 * often a trip round the loop apart. */
	curl_easy_setopt(x->easy, CURLOPT_BUFFERSIZE, (long)DS__XFER_BUFFER);
	curl_easy_setopt(x->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, x);
	/* The path is ours, checked and escaped: curl must not resolve it. */
	curl_easy_setopt(x->easy, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x->easy, CURLOPT_USERAGENT, t->user_agent);
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->own_headers ? x->own_headers : t->headers);
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
	/* curl refuses a Content-Length above it before any body byte; what
	 * has none, or decodes past it, is stopped by on_body(). */
	{
		uint64_t max = cfg->maxsize > 0 ? (uint64_t)cfg->maxsize : 0;

		if (x->maxsize && (!max || x->maxsize < max))
			max = x->maxsize;
		if (max && max <= INT64_MAX)
			curl_easy_setopt(x->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max);
	}
	x->started_ns = ds__now_ns();
	if (curl_multi_add_handle(t->multi, x->easy) != CURLM_OK) {
		curl_easy_cleanup(x->easy);
		x->easy = NULL;
		return -ENOMEM;
	}
	return 0;
}

void ds__transfer_stop(struct xfer *x)
{
	if (x->easy) {
		curl_multi_remove_handle(x->t->multi, x->easy);
		curl_easy_cleanup(x->easy);
		x->easy = NULL;
	}
	curl_slist_free_all(x->own_headers);
	x->own_headers = NULL;
}

time_t ds__transfer_filetime(struct xfer *x)
{
	curl_off_t filetime = -1;

	curl_easy_getinfo(x->easy, CURLINFO_FILETIME_T, &filetime);
	return filetime > 0 ? (time_t)filetime : 0;
}

char *ds__transfer_url(struct xfer *x)
{
	char *url = NULL;

	curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &url);
	return url ? strdup(url) : NULL;
}
