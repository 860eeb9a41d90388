/* POST /symbolize's request and answer text (tools/serve_symreq.c), apart
 * from the HTTP layer (tools/serve_sym.c) so that fuzz/fuzz_symreq.c and
 * tests/unit/test_serve_symreq.c reach them without libmicrohttpd.
 *
 * A request is held as compact records, whatever its size: per frame a
 * struct ds_sym_ref (16 bytes), per distinct build ID one table entry.
 * Nothing else of the body is kept: a JSON body is read by yajl's
 * callbacks as it is lexed (no document tree). */
#ifndef DS_SERVE_SYMREQ_H
#define DS_SERVE_SYMREQ_H

#include "dsostore.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A frame the request got wrong (bad_input): in its flags, with the
 * reason (enum symreq_bad) in module and where it is (the line of a text
 * body, the byte offset of its object in a JSON one) in addr. */
#define SYMREQ_BAD (1u << 31)
/* A bad JSON frame whose place is not kept (its module was checked after
 * the document was read): its answer names the frame's index instead. */
#define SYMREQ_NOWHERE UINT64_MAX
/* Build IDs (modules) of one request: each becomes a DSO of the node's
 * store and a search (a download) of its debuginfo; a request over it is
 * refused whole (413).  A process maps some hundreds. */
#define SYMREQ_MAX_MODULES 10000

enum symreq_bad {
	SYMREQ_BAD_LINE, /* a text line that is no frame */
	SYMREQ_BAD_DATA, /* a DATA or FRAME line */
	SYMREQ_BAD_NO_MODULE, /* an address alone, a frame without "module" */
	SYMREQ_BAD_PATH, /* a path where a build ID goes */
	SYMREQ_BAD_BUILD_ID, /* not 2..128 hex digits */
	SYMREQ_BAD_MODULE_RANGE, /* "module" past "modules" */
	SYMREQ_BAD_MODULE_ID, /* a module whose build_id is missing or bad */
	SYMREQ_BAD_NO_ADDR, /* neither vaddr nor offset */
	SYMREQ_BAD_TWO_ADDRS, /* both */
	SYMREQ_BAD_ADDR, /* not an address */
	SYMREQ_BAD_FIELD, /* a known field with a value of the wrong type */
	SYMREQ_BAD_COUNT
};

struct symreq {
	struct ds_sym_ref *frames; /* in request order */
	size_t n, cap;
	struct ds_build_id *ids; /* distinct, in order of first use */
	size_t nids, ids_cap;
	uint32_t *slots; /* open hash of ids: index + 1, 0 empty */
	size_t nslots; /* a power of two, or 0 */
	bool json; /* the body was JSON: answer one JSON document */
};

/* Why a request is refused: the HTTP status, and a message naming the
 * line (text) or byte offset (JSON) where that is the reason. */
struct symreq_error {
	unsigned int status; /* 400, 413 (more than max_frames), 500 (no memory) */
	char msg[160];
};

/* Parse body[0..len) into rq (zeroed first), as JSON when content_type
 * is application/json (parameters after ';' allowed), else as text lines
 * (text/plain, none, or what curl -d sends).  offsets: the text's
 * addresses are file offsets (?offsets=1).  0, or -1 with *err filled
 * (rq then holds nothing). */
int symreq_parse(struct symreq *rq, const char *body, size_t len, const char *content_type,
		 bool offsets, size_t max_frames, struct symreq_error *err);
void symreq_release(struct symreq *rq);
/* Whether content_type says JSON (symreq_parse()'s choice). */
bool symreq_is_json(const char *content_type);

/* A text body parsed as it comes (dsostore serve parses a large one on a
 * thread of its own while the rest arrives), to the same records as
 * symreq_parse() of the whole: symreq_text_start(), then
 * symreq_text_more() as the body grows, each call taking the lines whole
 * in body[0..avail) not taken yet, the last call with final (avail the
 * whole body).  The body stays where it is, its bytes unchanged, until
 * the last call: the module words of recent lines (last[]) point into
 * it. */
/* The module word of a recent good line and its table index: a
 * profile's frames come in runs of one module, or interleave a few (a
 * stack of an executable and its libraries), whose hex need not be parsed
 * and looked up again for each.  SYMREQ_LAST_MODULES of them, the oldest
 * replaced: with one, frames alternating between two modules (as
 * bench_serve.sh's do) parsed and looked up every build ID. */
#define SYMREQ_LAST_MODULES 4
struct symreq_last {
	const char *word;
	size_t len;
	uint32_t module;
};
struct symreq_text {
	size_t at; /* the first byte not taken */
	size_t lineno; /* lines taken */
	bool offsets;
	size_t max_frames;
	struct symreq_last last[SYMREQ_LAST_MODULES];
	unsigned int next; /* the one replaced next */
};
void symreq_text_start(struct symreq *rq, struct symreq_text *st, bool offsets,
		       size_t max_frames);
/* 0, or -1 with *err filled: rq then holds nothing, and is not given to
 * another call. */
int symreq_text_more(struct symreq *rq, struct symreq_text *st, const char *body, size_t avail,
		     bool final, struct symreq_error *err);

/* ---- the answer */

enum symreq_status {
	SYMREQ_SYMBOLIZED,
	SYMREQ_NO_SYMBOL,
	SYMREQ_NO_DEBUGINFO,
	SYMREQ_BAD_INPUT,
	SYMREQ_ERROR,
};

/* Text appended to a growing buffer; nomem once a growth failed (the
 * text is then cut: the caller ends the response). */
struct symout {
	char *buf;
	size_t len, cap;
	bool nomem;
	/* The last frames' modules and their build IDs in hex (hex_len 0:
	 * none), the oldest replaced: formatted once per run of frames of a
	 * few modules taken in turn, not for each frame. */
#define SYMOUT_HEX 4
	uint32_t hex_module[SYMOUT_HEX];
	size_t hex_len[SYMOUT_HEX];
	char hex[SYMOUT_HEX][2 * DS_BUILD_ID_MAX + 1];
	unsigned int hex_next;
};

/* Before the first frame, between frames and after the last: the JSON
 * document's frame, nothing more for NDJSON. */
void symout_head(struct symout *o, const struct symreq *rq);
void symout_tail(struct symout *o, const struct symreq *rq);
/* Frame i of rq as its object (with a newline after it for NDJSON; a
 * comma before it, but the first, in JSON), a its answer (NULL for a bad
 * frame; err: why there is none, for a good frame the batch could not
 * answer).  Returns its status. */
enum symreq_status symout_frame(struct symout *o, const struct symreq *rq, size_t i,
				const struct ds_sym_answer *a, int err);
void symout_release(struct symout *o);

#endif
