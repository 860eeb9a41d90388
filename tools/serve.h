/* dsostore serve: a debuginfod server (a node of the federation) that
 * also symbolizes for a fleet.  The HTTP layer only: what it serves comes
 * from library calls (ds_dirindex, ds_find/ds_fetch, ds_source_names,
 * ds_symbolize_build_ids).  tools/cmd_serve.c: the daemon, the request
 * routing, /buildid, /metrics, the workers; tools/serve_sym.c: /symbolize.
 * docs/serve.md says what a user sees. */
#ifndef DS_SERVE_H
#define DS_SERVE_H

#include "dsostore.h"

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* libmicrohttpd's functions, from the library loaded at run time
 * (tools/serve_mhd.c): the MHD_ names below are this table's.  A function
 * not in it is one to add there, in both places. */
struct serve_mhd {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_quiesce_daemon) *quiesce_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_fd_at_offset64) *create_response_from_fd_at_offset64;
	__typeof__(MHD_create_response_from_callback) *create_response_from_callback;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
};
extern struct serve_mhd serve_mhd;
/* Load it: 0, or -1 with err saying why. */
int serve_mhd_load(char *err, size_t len);

#ifndef SERVE_MHD_TABLE
#define MHD_start_daemon serve_mhd.start_daemon
#define MHD_stop_daemon serve_mhd.stop_daemon
#define MHD_quiesce_daemon serve_mhd.quiesce_daemon
#define MHD_get_daemon_info serve_mhd.get_daemon_info
#define MHD_get_connection_info serve_mhd.get_connection_info
#define MHD_lookup_connection_value serve_mhd.lookup_connection_value
#define MHD_queue_response serve_mhd.queue_response
#define MHD_create_response_from_buffer serve_mhd.create_response_from_buffer
#define MHD_create_response_from_fd_at_offset64 serve_mhd.create_response_from_fd_at_offset64
#define MHD_create_response_from_callback serve_mhd.create_response_from_callback
#define MHD_add_response_header serve_mhd.add_response_header
#define MHD_destroy_response serve_mhd.destroy_response
#define MHD_suspend_connection serve_mhd.suspend_connection
#define MHD_resume_connection serve_mhd.resume_connection
#endif

/* The node's counters, for /metrics (each a Prometheus counter unless
 * said).  Names and labels: tools/cmd_serve.c, metric_names. */
enum serve_metric {
	SM_UPSTREAM_REQUESTS, /* transfers to upstream servers (the client's) */
	SM_UPSTREAM_VERIFIED, /* downloads verified and cached */
	SM_UPSTREAM_REJECTED, /* downloads refused (wrong build ID, short...) */
	SM_UPSTREAM_JOINED, /* requests that waited for a download in flight */
	SM_SYM_REQUESTS, /* POST /symbolize requests answered */
	SM_SYM_FRAMES, /* frames answered by /symbolize */
	SM_SYM_FOUND, /* of those, symbolized */
	SM_SYM_NO_SYMBOL, /* nothing known at the address */
	SM_SYM_NO_DEBUGINFO, /* no debuginfo (perhaps named from ELF symbols) */
	SM_SYM_BAD, /* bad input */
	SM_SYM_ERROR, /* another failure */
	SM_COUNT
};

struct serve {
	/* Configuration (cmd_serve.c's options). */
	size_t max_body; /* bytes of a POST body */
	size_t max_frames; /* frames of one /symbolize request */
	unsigned int forwarded_ttl_limit;
	unsigned int sym_threads; /* producers of one long /symbolize answer */
	int verbose;

	struct ds_context *ctx; /* cache, upstreams (urls), miss TTL */
	struct ds_store *store; /* /symbolize's DSOs (keep_dsos, mem_budget) */
	struct ds_dirindex *dirs; /* -F directories; NULL without */
	bool upstreams; /* the node has upstream servers (/metadata asks them) */

	_Atomic uint64_t metrics[SM_COUNT];
};

static inline void serve_count(struct serve *sv, enum serve_metric m, uint64_t n)
{
	atomic_fetch_add_explicit(&sv->metrics[m], n, memory_order_relaxed);
}

/* tools/serve_common.c.  A log line on stderr: printf-style, one line,
 * escaped as the CLI's messages are. */
void serve_log(struct serve *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An error answer: status and a one-line message as its text/plain body
 * (the message also logged).  NULL only when out of memory. */
struct MHD_Response *serve_error(struct serve *sv, unsigned int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct symreq;
struct symreq_error;

/* POST /symbolize of the records rq (tools/serve_symreq.h: parsed by the
 * caller, which may then let the body go; taken over, released when the
 * answer is done, and *rq zeroed).  Called from a worker thread, which
 * may block (the batch's debuginfo is found here, upstream included).
 * Returns the response to queue and sets *status (200; 500).  A 200
 * response may stream (MHD_create_response_from_callback), symbolizing
 * as it goes, within a bounded buffer: a request of max_frames frames
 * holds O(frames) small records, never all its answers at once.  A
 * longer answer is written by sv->sym_threads threads of its own while
 * conn sends it, suspending and resuming conn from the content reader
 * when it waits for them. */
struct MHD_Response *serve_symbolize(struct serve *sv, struct MHD_Connection *conn,
				     struct symreq *rq, unsigned int *status);

/* A large text body of POST /symbolize parsed on a thread of its own
 * while the rest of it arrives, so that its records are ready (or nearly)
 * when its last byte is: symparse_start() once the body's buffer is
 * allocated whole (it must stay where it is until symparse_free()),
 * symparse_avail() as bytes are appended to it, symparse_end() once it is
 * whole.  symparse_take() (after symparse_end()) waits for the thread
 * and gives its records, as symreq_parse() of the whole body would: 0, or
 * -1 with *err filled.  symparse_free() (after symparse_take(), or
 * instead of it for a body abandoned: the thread stops at its next piece)
 * waits for the thread and frees what is left.  NULL: no thread could
 * start (the body is parsed whole after, as any other). */
struct symparse;
struct symparse *symparse_start(const char *body, bool offsets, size_t max_frames);
void symparse_avail(struct symparse *p, size_t avail);
void symparse_end(struct symparse *p);
int symparse_take(struct symparse *p, struct symreq *rq, struct symreq_error *err);
void symparse_free(struct symparse *p);

#endif
