/* The HTTP side of dsserver: the debuginfod URL API, the faults applied to
 * it, the request log and counters, and the /control endpoints.
 *
 * libmicrohttpd runs one thread per connection, so a request may sleep
 * (latency, bandwidth) or wait forever (hang, stall) in its own thread
 * without holding up the others.  Every wait polls the client socket, so a
 * client that gives up ends its request, and watches `stopping`, so the
 * server can always stop. */
#define _GNU_SOURCE
#include "dsserver.h"

#include <arpa/inet.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BODY_BLOCK (64 * 1024)
#define NO_SIZE	   UINT64_MAX /* as the announced size: no X-DEBUGINFOD-SIZE */
#define PAD_VALUE  1000	      /* bytes of x in a bigheaders line */

static atomic_bool stopping;
static int log_fd = -1;
static bool verbose;
static const char *log_header; /* --log-header: its value ends each log line */

/* One HTTP request, from its headers to its end. */
struct req {
	uint64_t t_ms; /* wall clock at arrival, for the log */
	char method[16];
	char *url;    /* the path as libmicrohttpd gives it: unescaped */
	char *raw;    /* the path as the client sent it (no query string) */
	char *hdr;    /* log_header's value, escaped; NULL: not sent */
	bool started; /* on_request has seen it: it is counted */
	int status;   /* 0 while unanswered */
	uint64_t sent;
	bool counted; /* not a /control request: logged and counted */
	int sock;
	bool raw_done; /* the whole answer was written on sock (bigheaders) */
	char fault[128];
};

/* A response body read from a file, paced and cut short as faults say. */
enum body_end { END_NORMAL, END_CLOSE, END_RESET, END_STALL };

struct body {
	struct req *req; /* only used from the reader, which runs before the request ends */
	int fd;
	struct zbody *z; /* if set, the body is this compressed stream, not fd */
	uint64_t off;	 /* of the served range in fd */
	uint64_t fsize;	 /* bytes that come from fd; zero bytes follow (pad) */
	uint64_t size, limit;
	enum body_end end;
	uint64_t bps;
	uint64_t t0; /* monotonic ns of the first read */
};

/* Counters behind /control/stats. */
struct url_count {
	char *url;
	uint64_t n;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t idle;
	uint64_t requests, in_flight, bytes, connections, status[600];
	struct url_count *urls;
	size_t nurls, cap;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- waiting ---- */

static bool client_gone(int sock, int timeout_ms)
{
	struct pollfd p = {.fd = sock, .events = POLLRDHUP};

	if (sock < 0) {
		poll(NULL, 0, timeout_ms);
		return false;
	}
	return poll(&p, 1, timeout_ms) > 0;
}

/* Sleeps until deadline (monotonic ns; 0 = forever).  False when the client
 * went away or the server is stopping first. */
static bool wait_until(const struct req *r, uint64_t deadline)
{
	for (;;) {
		uint64_t now = mono_ns();
		int slice = 50;

		if (atomic_load(&stopping))
			return false;
		if (deadline && now >= deadline)
			return true;
		if (deadline && deadline - now < 50000000)
			slice = (int)((deadline - now) / 1000000) + 1;
		if (client_gone(r->sock, slice))
			return false;
	}
}

/* ---- counters and log ---- */

static void stats_arrive(const char *url)
{
	size_t i;

	pthread_mutex_lock(&st.lock);
	st.requests++;
	st.in_flight++;
	for (i = 0; i < st.nurls && strcmp(st.urls[i].url, url); i++)
		;
	if (i == st.nurls && st.nurls == st.cap) {
		size_t cap = st.cap ? 2 * st.cap : 64;
		struct url_count *p = realloc(st.urls, cap * sizeof(*p));

		if (p) {
			st.urls = p;
			st.cap = cap;
		}
	}
	if (i == st.nurls && st.nurls < st.cap) {
		st.urls[i].url = strdup(url);
		st.urls[i].n = 0;
		st.nurls += st.urls[i].url != NULL;
	}
	if (i < st.nurls)
		st.urls[i].n++;
	pthread_mutex_unlock(&st.lock);
}

static void stats_done(int status, uint64_t sent)
{
	pthread_mutex_lock(&st.lock);
	st.in_flight--;
	st.bytes += sent;
	if (status >= 0 && status < 600)
		st.status[status]++;
	if (!st.in_flight)
		pthread_cond_broadcast(&st.idle);
	pthread_mutex_unlock(&st.lock);
}

static void stats_reset(void)
{
	pthread_mutex_lock(&st.lock);
	for (size_t i = 0; i < st.nurls; i++)
		free(st.urls[i].url);
	st.nurls = 0;
	st.requests = st.bytes = st.connections = 0;
	memset(st.status, 0, sizeof(st.status));
	pthread_mutex_unlock(&st.lock);
}

/* URLs are logged and redirected to with spaces and controls escaped, so a
 * log line always has the same number of fields.  '%' is escaped too unless
 * s is a raw path, whose '%' are the client's own escapes. */
static char *url_escape(const char *s, bool raw)
{
	size_t n = strlen(s);
	char *out = malloc(3 * n + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		unsigned char c = *s;

		if (c <= 0x20 || c >= 0x7f || (c == '%' && !raw))
			o += sprintf(o, "%%%02X", c);
		else
			*o++ = c;
	}
	*o = 0;
	return out;
}

static void log_request(const struct req *r, bool ok)
{
	char *url = url_escape(r->raw, true), *line = NULL;
	int len;

	len = asprintf(&line, "%llu %s %s %d %llu %s %s%s%s\n", (unsigned long long)r->t_ms,
		       r->method, url ? url : "?", r->status, (unsigned long long)r->sent,
		       r->fault[0] ? r->fault : "-", ok ? "ok" : "aborted", log_header ? " " : "",
		       !log_header ? "" : r->hdr ? r->hdr : "-");
	if (len > 0) {
		if (log_fd >= 0 && write(log_fd, line, len) != len)
			perror("dsserver: log");
		if (verbose)
			fputs(line, stderr);
	}
	free(line);
	free(url);
}

/* ---- responses ---- */

static enum MHD_Result queue(struct MHD_Connection *c, struct req *r, int status,
			     struct MHD_Response *resp)
{
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	r->status = status;
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result answer_text(struct MHD_Connection *c, struct req *r, int status,
				   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static enum MHD_Result answer_text(struct MHD_Connection *c, struct req *r, int status,
				   const char *fmt, ...)
{
	struct MHD_Response *resp;
	char *text = NULL;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (len < 0)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
	r->sent = len;
	return queue(c, r, status, resp);
}

static ssize_t body_end(struct body *b)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	struct sockaddr sa = {.sa_family = AF_UNSPEC};

	switch (b->end) {
	case END_RESET:
		/* connect(AF_UNSPEC) disconnects a TCP socket with a RST now,
		 * before libmicrohttpd can shut it down gracefully with a FIN. */
		setsockopt(b->req->sock, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		connect(b->req->sock, &sa, sizeof(sa));
		break;
	case END_STALL:
		wait_until(b->req, 0);
		break;
	case END_NORMAL:
	case END_CLOSE:
		break;
	}
	return MHD_CONTENT_READER_END_WITH_ERROR;
}

static ssize_t body_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct body *b = cls;
	uint64_t n;
	ssize_t got;

	if (pos >= b->limit)
		return body_end(b);
	n = b->limit - pos < max ? b->limit - pos : max;
	if (b->bps) {
		uint64_t chunk = b->bps / 20 ? b->bps / 20 : 1; /* 50 ms worth */

		if (!b->t0)
			b->t0 = mono_ns();
		if (n > chunk)
			n = chunk;
		if (!wait_until(b->req, b->t0 + (uint64_t)((double)pos * 1e9 / b->bps)))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	if (b->z) {
		got = zbody_read(b->z, pos, buf, n);
	} else if (pos >= b->fsize) {
		memset(buf, 0, n);
		got = n;
	} else {
		if (n > b->fsize - pos)
			n = b->fsize - pos;
		got = pread(b->fd, buf, n, b->off + pos);
	}
	if (got <= 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	b->req->sent += got;
	return got;
}

static void body_free(void *cls)
{
	struct body *b = cls;

	close(b->fd);
	zbody_put(b->z);
	free(b);
}

static bool accepts_gzip(struct MHD_Connection *c)
{
	const char *v =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);

	return v && strstr(v, "gzip");
}

/* The compression a fault asks for: the gzip fault's if the client takes
 * gzip, a bomb's whatever the client takes.  False: none. */
static bool body_zip(struct MHD_Connection *c, const struct fault *f, enum zformat *fmt,
		     uint64_t *n)
{
	*fmt = ZF_GZIP;
	*n = f->num;
	switch (f->kind) {
	case F_GZIP:
		return accepts_gzip(c);
	case F_GZIPBOMB:
	case F_GZIPBOMB_NOSIZE:
		return true;
	case F_DEFLATEBOMB:
	case F_DEFLATEBOMB_NOSIZE:
		*fmt = ZF_ZLIB;
		return true;
	default:
		return false;
	}
}

/* What X-DEBUGINFOD-SIZE says (NO_SIZE: nothing).  short and pad change
 * the body itself and say so like an honest server would: a consistent
 * liar.  The -nosize bombs leave a client only the decoded data to judge. */
static uint64_t body_resize(struct body *b, const struct fault *f)
{
	switch (f->kind) {
	case F_SHORT:
		if (!f->has_num)
			b->fsize = b->size / 2;
		else if (f->num < b->size)
			b->fsize = f->num;
		b->size = b->fsize;
		break;
	case F_PAD:
		b->size += f->num;
		break;
	case F_GZIPBOMB_NOSIZE:
	case F_DEFLATEBOMB_NOSIZE:
		return NO_SIZE;
	default:
		break;
	}
	return b->size;
}

/* How much of a body of size bytes to send, and how to end, per fault. */
static void body_plan(struct body *b, const struct fault *f)
{
	b->limit = b->size;
	b->end = END_NORMAL;
	switch (f->kind) {
	case F_RESET:
		b->end = END_RESET;
		break;
	case F_TRUNCATE:
		b->end = END_CLOSE;
		break;
	case F_STALL:
		b->end = END_STALL;
		break;
	default:
		return;
	}
	b->limit = f->has_num ? f->num : b->size / 2;
	if (b->limit > b->size)
		b->limit = b->size;
}

static uint64_t request_maxsize(struct MHD_Connection *c)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-DEBUGINFOD-MAXSIZE");
	char *end;
	unsigned long long n;

	if (!v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	return errno || end == v ? 0 : n;
}

/*
 * The IMA signature of a served file, for X-DEBUGINFOD-IMASIGNATURE (what
 * debuginfod sends from an IMA-signed RPM): <file>.imasig, its first line
 * as it is (any text: a test's bad one), else <file>.sig (evmctl ima_sign
 * --sigfile's binary signature) in hex.  Both bounded; false: neither.
 */
#define IMASIG_MAX 4096

static bool ima_signature(const char *path, char *out, size_t len)
{
	unsigned char bin[IMASIG_MAX / 2];
	char side[PATH_MAX];
	size_t n;
	FILE *f;

	if (snprintf(side, sizeof(side), "%s.imasig", path) < (int)sizeof(side) &&
	    (f = fopen(side, "re"))) {
		bool ok = fgets(out, (int)len, f) != NULL;

		fclose(f);
		if (ok)
			out[strcspn(out, "\r\n")] = 0;
		return ok;
	}
	if (snprintf(side, sizeof(side), "%s.sig", path) >= (int)sizeof(side) ||
	    !(f = fopen(side, "re")))
		return false;
	n = fread(bin, 1, sizeof(bin), f);
	fclose(f);
	if (!n || 2 * n + 1 > len)
		return false;
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", bin[i]);
	return true;
}

static void add_headers(struct MHD_Response *resp, const char *path, uint64_t size, time_t mtime)
{
	char num[32], date[64], sig[IMASIG_MAX + 1];
	struct tm tm;

	snprintf(num, sizeof(num), "%llu", (unsigned long long)size);
	gmtime_r(&mtime, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (size != NO_SIZE)
		MHD_add_response_header(resp, "X-DEBUGINFOD-SIZE", num);
	MHD_add_response_header(resp, "X-DEBUGINFOD-FILE", path);
	if (ima_signature(path, sig, sizeof(sig)))
		MHD_add_response_header(resp, "X-DEBUGINFOD-IMASIGNATURE", sig);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_LAST_MODIFIED, date);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
}

static enum MHD_Result serve_file(struct MHD_Connection *c, struct req *r, const struct served *s,
				  const struct fault_plan *plan)
{
	struct MHD_Response *resp;
	struct body *b;
	struct stat sb;
	uint64_t maxsize, announced, zip_n;
	enum zformat zip_fmt;
	bool zip = body_zip(c, &plan->outcome, &zip_fmt, &zip_n);
	int fd = open(s->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &sb)) {
		if (fd >= 0)
			close(fd);
		return answer_text(c, r, MHD_HTTP_NOT_FOUND, "cannot open %s\n", s->path);
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		close(fd);
		return MHD_NO;
	}
	*b = (struct body){.req = r, .fd = fd, .off = s->off, .bps = plan->bandwidth.num};
	b->size = b->fsize = s->size == UINT64_MAX ? (uint64_t)sb.st_size : s->size;
	/* A server with a fault does not care for the client's limit: that
	 * is how a test sees the client enforce it. */
	maxsize =
	    plan->outcome.kind == F_NONE || plan->outcome.kind == F_OK ? request_maxsize(c) : 0;
	if (maxsize && b->size > maxsize) {
		body_free(b);
		return answer_text(c, r, MHD_HTTP_NOT_ACCEPTABLE, "file too large\n");
	}
	announced = body_resize(b, &plan->outcome);
	if (zip) {
		b->z = zbody_get(fd, &sb, b->off, b->fsize, zip_n, zip_fmt);
		if (!b->z) {
			body_free(b);
			return answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "cannot compress\n");
		}
		b->size = zbody_size(b->z);
	}
	body_plan(b, &plan->outcome);
	resp = MHD_create_response_from_callback(b->size, BODY_BLOCK, body_read, b, body_free);
	if (!resp) {
		body_free(b);
		return MHD_NO;
	}
	add_headers(resp, s->path, announced, sb.st_mtime);
	if (zip)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING,
					zip_fmt == ZF_GZIP ? "gzip" : "deflate");
	return queue(c, r, MHD_HTTP_OK, resp);
}

/* The path as the client sent it, so that a test sees how its client
 * escaped a source path or a section name.  A path with a CR or LF (which
 * libmicrohttpd refuses in a header) has no X-DSSERVER-PATH. */
static enum MHD_Result echo(struct MHD_Connection *c, struct req *r)
{
	size_t len = strlen(r->raw);
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(len, r->raw, MHD_RESPMEM_MUST_COPY);

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
	MHD_add_response_header(resp, "X-DSSERVER-PATH", r->raw);
	r->sent = len;
	return queue(c, r, MHD_HTTP_OK, resp);
}

/* ---- bigheaders: an answer written on the socket itself ---- */

struct raw_out {
	struct req *req;
	uint64_t bps, t0, pos; /* pacing, as body_read does it */
	char *buf;
	size_t len; /* in buf, not yet sent */
};

/* Sends all of buf, paced; false when the client is gone or the server is
 * stopping.  MSG_DONTWAIT, so that a client that stops reading cannot
 * keep this thread from seeing the server stop. */
static bool raw_send(struct raw_out *o, const char *buf, size_t len, bool body)
{
	while (len) {
		struct pollfd p = {.fd = o->req->sock, .events = POLLOUT};
		size_t n = len;
		ssize_t k;

		if (atomic_load(&stopping))
			return false;
		if (o->bps) {
			uint64_t chunk = o->bps / 20 ? o->bps / 20 : 1; /* 50 ms worth */

			if (n > chunk)
				n = chunk;
			if (!wait_until(o->req, o->t0 + (uint64_t)((double)o->pos * 1e9 / o->bps)))
				return false;
		}
		k = send(o->req->sock, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			poll(&p, 1, 50);
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return false; /* EPIPE, ECONNRESET: the client closed */
		buf += k;
		len -= k;
		o->pos += k;
		if (body)
			o->req->sent += k;
	}
	return true;
}

static bool raw_flush(struct raw_out *o)
{
	bool ok = raw_send(o, o->buf, o->len, false);

	o->len = 0;
	return ok;
}

/* Appends "X-Pad-<i>: xxx...\r\n" lines of n bytes in all to o, sending
 * as its buffer fills.  Lines carry PAD_VALUE x's, the last one the rest,
 * so the total is exact unless n is below one line's minimum. */
static bool raw_pad_headers(struct raw_out *o, uint64_t n)
{
	for (uint64_t i = 0; n; i++) {
		char *line;
		int pre;
		uint64_t len;

		if (BODY_BLOCK - o->len < 2 * PAD_VALUE && !raw_flush(o))
			return false;
		line = o->buf + o->len;
		pre = snprintf(line, 32, "X-Pad-%llu: ", (unsigned long long)i);
		len = pre + PAD_VALUE + 2;
		/* Not enough left after a full line for another (name, one x,
		 * CRLF; 40 bounds any name): this line takes all the rest. */
		if (n < len + 40)
			len = n > (uint64_t)pre + 3 ? n : (uint64_t)pre + 3;
		memset(line + pre, 'x', len - pre - 2);
		memcpy(line + len - 2, "\r\n", 2);
		o->len += len;
		n -= len < n ? len : n;
	}
	return true;
}

/* bigheaders=N: a 200 answer whose headers begin with N bytes of X-Pad
 * lines.  libmicrohttpd builds headers in its per-connection memory pool,
 * far too small for megabytes, so this answer is written on the socket
 * here; the request then ends with MHD_NO, and libmicrohttpd closes the
 * connection (as "Connection: close" said). */
static enum MHD_Result serve_bigheaders(struct MHD_Connection *c, struct req *r,
					const struct served *s, const struct fault_plan *plan)
{
	struct raw_out o = {.req = r, .bps = plan->bandwidth.num, .t0 = mono_ns()};
	bool head = !strcmp(r->method, "HEAD");
	char date[64];
	struct stat sb;
	struct tm tm;
	uint64_t size, pos = 0;
	int fd = open(s->path, O_RDONLY | O_CLOEXEC), len;

	if (fd < 0 || fstat(fd, &sb)) {
		if (fd >= 0)
			close(fd);
		return answer_text(c, r, MHD_HTTP_NOT_FOUND, "cannot open %s\n", s->path);
	}
	o.buf = malloc(BODY_BLOCK);
	if (!o.buf || r->sock < 0)
		goto out;
	size = s->size == UINT64_MAX ? (uint64_t)sb.st_size : s->size;
	gmtime_r(&sb.st_mtime, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	r->status = MHD_HTTP_OK;
	o.len = snprintf(o.buf, BODY_BLOCK, "HTTP/1.1 200 OK\r\n");
	if (!raw_pad_headers(&o, plan->outcome.num) || !raw_flush(&o))
		goto out;
	len = snprintf(o.buf, BODY_BLOCK,
		       "Content-Length: %llu\r\nX-DEBUGINFOD-SIZE: %llu\r\n"
		       "X-DEBUGINFOD-FILE: %s\r\nLast-Modified: %s\r\n"
		       "Content-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
		       (unsigned long long)size, (unsigned long long)size, s->path, date);
	if (len < 0 || len >= BODY_BLOCK)
		goto out;
	o.len = len;
	if (!raw_flush(&o))
		goto out;
	while (!head && pos < size) {
		size_t n = size - pos < BODY_BLOCK ? size - pos : BODY_BLOCK;
		ssize_t got = pread(fd, o.buf, n, s->off + pos);

		if (got <= 0 || !raw_send(&o, o.buf, got, true))
			goto out;
		pos += got;
	}
	r->raw_done = true;
out:
	free(o.buf);
	close(fd);
	return MHD_NO;
}

static enum MHD_Result redirect(struct MHD_Connection *c, struct req *r, const char *target)
{
	struct MHD_Response *resp;
	const char *p = strstr(target, "%p");
	char *path = url_escape(r->url, false), *loc = NULL;
	int len = -1;

	/* "%p" in the target stands for the request's path. */
	if (path)
		len = p ? asprintf(&loc, "%.*s%s%s", (int)(p - target), target, path, p + 2)
			: asprintf(&loc, "%s", target);
	free(path);
	if (len < 0)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(9, "redirect\n", MHD_RESPMEM_PERSISTENT);
	if (resp)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, loc);
	free(loc);
	r->sent = 9;
	return queue(c, r, MHD_HTTP_FOUND, resp);
}

/* ---- /buildid ---- */

struct bid_request {
	char bid[BID_HEX_MAX + 1];
	enum artifact art;
	const char *artname;
	const char *rest; /* source path or section name */
};

/* Parses "<hex>/<artifact>[/...]" as elfutils 0.188 does: false means 503. */
static bool parse_buildid_url(const char *p, struct bid_request *q)
{
	const char *slash = strchr(p, '/'), *a;

	if (!slash || !bid_valid(p, slash - p))
		return false;
	memcpy(q->bid, p, slash - p);
	q->bid[slash - p] = 0;
	a = slash + 1;
	q->rest = NULL;
	if (!strcmp(a, "debuginfo")) {
		q->art = ART_DEBUGINFO;
		q->artname = "debuginfo";
	} else if (!strcmp(a, "executable")) {
		q->art = ART_EXECUTABLE;
		q->artname = "executable";
	} else if (!strncmp(a, "source/", 7) && a[7]) {
		q->art = ART_SOURCE;
		q->artname = "source";
		q->rest = a + 6; /* the absolute path, with its leading '/' */
	} else if (!strncmp(a, "section/", 8) && a[8] && !strchr(a + 8, '/')) {
		q->art = ART_SECTION;
		q->artname = "section";
		q->rest = a + 8;
	} else {
		return false;
	}
	return true;
}

static int lookup(const char *bid, const struct bid_request *q, struct served *s)
{
	if (q->art != ART_SOURCE)
		return index_find(bid, q->art, q->rest, s);
	s->off = 0;
	s->size = UINT64_MAX;
	s->path = index_known(bid) ? index_resolve_under_roots(q->rest) : NULL;
	return s->path ? 0 : -1;
}

/* wrongfile=BUILDID serves that build ID's file for the same artifact (or
 * its other kind of ELF file); wrongfile=/PATH serves a file under a
 * served directory. */
static int lookup_wrong(const char *target, const struct bid_request *q, struct served *s)
{
	struct bid_request other = *q;

	if (target[0] == '/') {
		s->off = 0;
		s->size = UINT64_MAX;
		s->path = index_resolve_under_roots(target);
		return s->path ? 0 : -1;
	}
	if (!lookup(target, q, s))
		return 0;
	if (q->art != ART_DEBUGINFO && q->art != ART_EXECUTABLE)
		return -1;
	other.art = q->art == ART_DEBUGINFO ? ART_EXECUTABLE : ART_DEBUGINFO;
	return lookup(target, &other, s);
}

static enum MHD_Result buildid(struct MHD_Connection *c, struct req *r, const char *p)
{
	struct bid_request q;
	struct fault_plan plan;
	struct served s = {0};
	enum MHD_Result ret;
	int rc;

	if (!parse_buildid_url(p, &q))
		return answer_text(c, r, MHD_HTTP_SERVICE_UNAVAILABLE, "invalid request\n");
	fault_plan(q.bid, q.artname, &plan);
	strcpy(r->fault, plan.names);
	if (plan.latency.num && !wait_until(r, mono_ns() + plan.latency.num * 1000000)) {
		r->status = 0;
		return MHD_NO;
	}
	switch (plan.outcome.kind) {
	case F_HANG:
		wait_until(r, 0);
		return MHD_NO;
	case F_STATUS:
		return answer_text(c, r, (int)plan.outcome.num, "fault: status %d\n",
				   (int)plan.outcome.num);
	case F_REDIRECT:
		return redirect(c, r, plan.outcome.str);
	case F_ECHO:
		return echo(c, r);
	default:
		break;
	}
	if (plan.outcome.kind == F_WRONGFILE)
		rc = lookup_wrong(plan.outcome.str, &q, &s);
	else
		rc = lookup(q.bid, &q, &s);
	if (rc)
		return answer_text(c, r, MHD_HTTP_NOT_FOUND, "not found\n");
	if (plan.outcome.kind == F_BIGHEADERS)
		ret = serve_bigheaders(c, r, &s, &plan);
	else
		ret = serve_file(c, r, &s, &plan);
	free(s.path);
	return ret;
}

/* ---- /metrics, /control ---- */

static enum MHD_Result metrics(struct MHD_Connection *c, struct req *r)
{
	size_t nfiles, nbids;
	uint64_t requests;

	index_counts(&nfiles, &nbids);
	pthread_mutex_lock(&st.lock);
	requests = st.requests;
	pthread_mutex_unlock(&st.lock);
	/* The first three lines are what tests of the real debuginfod poll for. */
	return answer_text(c, r, MHD_HTTP_OK,
			   "ready 1\n"
			   "thread_work_total{role=\"traverse\"} 1\n"
			   "thread_work_pending{role=\"scan\"} 0\n"
			   "dsserver_files %zu\n"
			   "dsserver_buildids %zu\n"
			   "http_requests_total %llu\n",
			   nfiles, nbids, (unsigned long long)requests);
}

static const char *arg(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result control_stats(struct MHD_Connection *c, struct req *r)
{
	const char *url = arg(c, "url"), *prefix = arg(c, "prefix");
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	enum MHD_Result ret;
	uint64_t sum = 0;

	if (!f)
		return MHD_NO;
	pthread_mutex_lock(&st.lock);
	if (url || prefix) {
		for (size_t i = 0; i < st.nurls; i++)
			if (url ? !strcmp(st.urls[i].url, url)
				: !strncmp(st.urls[i].url, prefix, strlen(prefix)))
				sum += st.urls[i].n;
		fprintf(f, "%llu\n", (unsigned long long)sum);
	} else {
		fprintf(f, "requests %llu\nin_flight %llu\nconnections %llu\nbytes %llu\n",
			(unsigned long long)st.requests, (unsigned long long)st.in_flight,
			(unsigned long long)st.connections, (unsigned long long)st.bytes);
		for (int s = 0; s < 600; s++)
			if (st.status[s])
				fprintf(f, "status %d %llu\n", s, (unsigned long long)st.status[s]);
		for (size_t i = 0; i < st.nurls; i++)
			fprintf(f, "url %llu %s\n", (unsigned long long)st.urls[i].n,
				st.urls[i].url);
	}
	pthread_mutex_unlock(&st.lock);
	fclose(f);
	ret = answer_text(c, r, MHD_HTTP_OK, "%s", buf);
	free(buf);
	return ret;
}

/* Waits until no counted request is in progress, so that the log holds the
 * line of every request a client has seen the end of. */
static enum MHD_Result control_idle(struct MHD_Connection *c, struct req *r)
{
	const char *t = arg(c, "timeout_ms");
	uint64_t deadline = mono_ns() + (t ? strtoull(t, NULL, 10) : 5000) * 1000000;
	uint64_t busy;

	pthread_mutex_lock(&st.lock);
	while (st.in_flight && !atomic_load(&stopping) && mono_ns() < deadline) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&st.idle, &st.lock, &ts);
	}
	busy = st.in_flight;
	pthread_mutex_unlock(&st.lock);
	return answer_text(c, r, busy ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK,
			   "in_flight %llu\n", (unsigned long long)busy);
}

static enum MHD_Result control_fault(struct MHD_Connection *c, struct req *r)
{
	const char *spec = arg(c, "spec"), *err = NULL;
	int rc;

	if (spec)
		rc = fault_add_spec(spec, &err);
	else
		rc = fault_add(arg(c, "bid"), arg(c, "kind"), arg(c, "arg"), arg(c, "times"),
			       arg(c, "artifact"), &err);
	if (rc)
		return answer_text(c, r, MHD_HTTP_BAD_REQUEST, "error: %s\n", err);
	return answer_text(c, r, MHD_HTTP_OK, "ok\n");
}

static enum MHD_Result control(struct MHD_Connection *c, struct req *r, const char *what)
{
	if (!strcmp(what, "fault"))
		return control_fault(c, r);
	if (!strcmp(what, "faults")) {
		char *list = fault_list();
		enum MHD_Result ret = answer_text(c, r, MHD_HTTP_OK, "%s", list ? list : "");

		free(list);
		return ret;
	}
	if (!strcmp(what, "reset")) {
		fault_reset();
		return answer_text(c, r, MHD_HTTP_OK, "ok\n");
	}
	if (!strcmp(what, "reset-stats")) {
		stats_reset();
		return answer_text(c, r, MHD_HTTP_OK, "ok\n");
	}
	if (!strcmp(what, "stats"))
		return control_stats(c, r);
	if (!strcmp(what, "idle"))
		return control_idle(c, r);
	if (!strcmp(what, "rescan")) {
		size_t nfiles, nbids;

		if (index_build(&nfiles, &nbids))
			return answer_text(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "rescan failed\n");
		return answer_text(c, r, MHD_HTTP_OK, "files %zu buildids %zu\n", nfiles, nbids);
	}
	if (!strcmp(what, "stop")) {
		kill(getpid(), SIGTERM); /* main waits for it in sigtimedwait */
		return answer_text(c, r, MHD_HTTP_OK, "stopping\n");
	}
	return answer_text(c, r, MHD_HTTP_NOT_FOUND, "unknown control endpoint\n");
}

/* ---- libmicrohttpd callbacks ---- */

static bool is_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

	return sa && sa->sa_family == AF_INET && (ntohl(in->sin_addr.s_addr) >> 24) == 127;
}

static enum MHD_Result accept_local(void *cls, const struct sockaddr *addr, socklen_t len)
{
	return is_loopback(addr) ? MHD_YES : MHD_NO;
}

static void req_free(struct req *r)
{
	if (!r)
		return;
	free(r->url);
	free(r->raw);
	free(r->hdr);
	free(r);
}

/* libmicrohttpd unescapes the path before on_request sees it; this sees the
 * request target as it came, and what it returns is the request's *ctx. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct req *r = calloc(1, sizeof(*r));

	if (r)
		r->raw = strndup(uri, strcspn(uri, "?"));
	if (r && !r->raw) {
		free(r);
		r = NULL;
	}
	return r;
}

/* Completes the request on_uri began (r, or NULL if it could not). */
static struct req *req_start(struct req *r, struct MHD_Connection *c, const char *url,
			     const char *method)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

	if (!r)
		r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->url = strdup(url);
	if (!r->raw)
		r->raw = strdup(url);
	if (!r->url || !r->raw) {
		req_free(r);
		return NULL;
	}
	if (log_header) {
		const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, log_header);

		if (v && !(r->hdr = url_escape(v, false))) {
			req_free(r);
			return NULL;
		}
	}
	r->started = true;
	r->t_ms = wall_ms();
	snprintf(r->method, sizeof(r->method), "%s", method);
	r->sock = ci ? ci->connect_fd : -1;
	r->counted = strncmp(url, "/control/", 9) != 0;
	if (r->counted)
		stats_arrive(url);
	return r;
}

static enum MHD_Result dispatch(struct MHD_Connection *c, struct req *r)
{
	const char *url = r->url;
	bool get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");

	if (!strncmp(url, "/control/", 9))
		return control(c, r, url + 9);
	if (!get)
		return answer_text(c, r, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (!strncmp(url, "/buildid/", 9))
		return buildid(c, r, url + 9);
	if (!strcmp(url, "/metrics"))
		return metrics(c, r);
	if (!strcmp(url, "/"))
		return answer_text(c, r, MHD_HTTP_OK, "dsserver: debuginfod test server\n");
	return answer_text(c, r, MHD_HTTP_NOT_FOUND, "not found\n");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **ctx)
{
	struct req *r = *ctx;

	if (!r || !r->started) {
		/* Headers are in: count the request now, so that a client that
		 * got its answer always finds the request counted. */
		*ctx = req_start(r, c, url, method);
		return *ctx ? MHD_YES : MHD_NO;
	}
	if (*upload_size) {
		*upload_size = 0; /* request bodies are ignored */
		return MHD_YES;
	}
	return dispatch(c, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **ctx,
			 enum MHD_RequestTerminationCode toe)
{
	struct req *r = *ctx;

	if (r && r->started && r->counted) {
		log_request(r, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK || r->raw_done);
		stats_done(r->status, r->sent);
	}
	req_free(r);
	*ctx = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode toe)
{
	if (toe != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	pthread_mutex_lock(&st.lock);
	st.connections++;
	pthread_mutex_unlock(&st.lock);
}

void http_log_header(const char *name)
{
	log_header = name;
}

struct MHD_Daemon *http_start(uint16_t port, int fd, bool verb, uint16_t *bound)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_POLL | (verb ? MHD_USE_ERROR_LOG : 0);
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;

	log_fd = fd;
	verbose = verb;
	d = MHD_start_daemon(flags, port, accept_local, NULL, on_request, NULL,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
			     MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_NOTIFY_COMPLETED,
			     on_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)4000,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120, MHD_OPTION_END);
	if (!d)
		return NULL;
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*bound = info ? info->port : 0;
	return d;
}

void http_stop(struct MHD_Daemon *d)
{
	atomic_store(&stopping, true);
	pthread_mutex_lock(&st.lock);
	pthread_cond_broadcast(&st.idle);
	pthread_mutex_unlock(&st.lock);
	MHD_stop_daemon(d);
	zbody_cache_clear();
	stats_reset();
	free(st.urls);
	st.urls = NULL;
	st.cap = 0;
}
