/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for POST /symbolize's request parser and answer writer
 * (tools/serve_symreq.c): any body a client may send.  The first byte
 * picks the form ('J': a JSON body, anything else: text lines), the rest
 * is the body, copied into a malloc() of exactly its size (no NUL after
 * it).  Checked, from the contract in serve_symreq.h:
 *   - a refusal is 400, 413 or 500 with a message, a 400 naming the line
 *     ("line N:") of a text body or the byte ("byte N:", N within the
 *     body) of a JSON one, and leaves no frames;
 *   - an accepted request: every frame either bad (a reason in range) or
 *     naming a build ID of the table (1..64 bytes, no two equal) with only
 *     the offset and return flags; a text body has one frame per line
 *     that is not blank (spaces, tabs, CRs), at most max_frames (3 for
 *     one input in three);
 *   - a text body taken in pieces (symreq_text_more(), pieces of 1 to 61
 *     bytes) gives the same records, or the same refusal, as the whole;
 *   - the answers written for it, each frame once as found (the body's
 *     own bytes as its function and file names: any bytes), once
 *     without an answer, parse as JSON by yajl (which checks UTF-8 too):
 *     one document, or one per line.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include "serve_symreq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

#define MAX_FRAMES 500

static unsigned long counts[2][3]; /* [json][accepted, 400, 413] */

void fuzz_summary(void)
{
	fprintf(stderr,
		"fuzz_symreq: text %lu accepted, %lu 400, %lu 413; JSON %lu accepted, %lu 400, "
		"%lu 413\n",
		counts[0][0], counts[0][1], counts[0][2], counts[1][0], counts[1][1], counts[1][2]);
}

static _Noreturn void die(const char *what, const struct symreq_error *e)
{
	fprintf(stderr, "fuzz_symreq: %s (%u \"%s\")\n", what, e ? e->status : 0,
		e ? e->msg : "");
	abort();
}

/* Frames a text body has: its lines with something but spaces, tabs, CR. */
static size_t text_lines(const char *s, size_t len)
{
	size_t n = 0;
	bool blank = true;

	for (size_t i = 0; i <= len; i++) {
		if (i == len || s[i] == '\n') {
			n += !blank;
			blank = true;
		} else if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') {
			blank = false;
		}
	}
	return n;
}

static bool json_ok(const char *s, size_t len, bool many)
{
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	bool ok;

	if (!h)
		die("yajl_alloc failed", NULL);
	yajl_config(h, yajl_allow_multiple_values, many);
	ok = yajl_parse(h, (const unsigned char *)s, len) == yajl_status_ok &&
	     yajl_complete_parse(h) == yajl_status_ok;
	yajl_free(h);
	return ok;
}

static void check_answers(const struct symreq *rq, const char *body, size_t len)
{
	struct symout o = { 0 };
	size_t nl = 0;
	/* (file_len and function_len as the batch gives them: the bytes,
	 * NULs included, are what is written) */
	struct ds_frame f = { .function = body, .function_len = (unsigned)(len / 2),
			      .file = body + len / 2, .file_len = (unsigned)(len - len / 2),
			      .line = 7, .function_start = 0x1000 };
	struct ds_sym_answer a = { .frames = &f, .nframes = 1, .status = DS_SYM_FOUND };

	symout_head(&o, rq);
	for (size_t i = 0; i < rq->n; i++) {
		bool isbad = rq->frames[i].flags & SYMREQ_BAD;

		a.addr = rq->frames[i].addr;
		symout_frame(&o, rq, i, isbad || i % 2 ? NULL : &a, -ENOENT);
	}
	symout_tail(&o, rq);
	if (o.nomem)
		die("out of memory writing answers", NULL);
	for (size_t i = 0; i < o.len; i++)
		nl += o.buf[i] == '\n';
	if (!rq->json && nl != rq->n)
		die("NDJSON answers are not one line each", NULL);
	if (o.len && !json_ok(o.buf, o.len, !rq->json))
		die("the answers are not JSON", NULL);
	symout_release(&o);
}

/* A text body taken as it would come over the network, in pieces of
 * sizes the input chooses (symreq_text_more() at each end, then final):
 * the same records, or the same refusal, as symreq_parse() of the whole. */
static void check_pieces(const char *body, size_t len, size_t max, int ret,
			 const struct symreq *whole, const struct symreq_error *werr)
{
	struct symreq rq;
	struct symreq_text st;
	struct symreq_error e;
	size_t avail = 0, step = 1 + (len ? (unsigned char)body[len / 2] % 37 : 0);
	int r = 0;

	symreq_text_start(&rq, &st, len & 1, max);
	while (!r && avail < len) {
		avail = len - avail > step ? avail + step : len;
		step = step * 3 % 61 + 1; /* (sizes from 1 to 61, mixed) */
		r = symreq_text_more(&rq, &st, body, avail, false, &e);
	}
	if (!r)
		r = symreq_text_more(&rq, &st, body, len, true, &e);
	if (r != ret)
		die(ret ? "refused whole, taken in pieces" : "taken whole, refused in pieces", &e);
	if (r) {
		if (e.status != werr->status || strcmp(e.msg, werr->msg))
			die("refused otherwise in pieces", &e);
		if (rq.n || rq.frames || rq.nids)
			die("a refusal in pieces left frames", &e);
		return;
	}
	if (rq.n != whole->n || rq.nids != whole->nids ||
	    (rq.n && memcmp(rq.frames, whole->frames, rq.n * sizeof(*rq.frames))) ||
	    (rq.nids && memcmp(rq.ids, whole->ids, rq.nids * sizeof(*rq.ids))))
		die("other records in pieces", NULL);
	symreq_release(&rq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool json = size && data[0] == 'J';
	size_t len = size ? size - 1 : 0;
	/* (a few frames for one input in three: the 413 is met too) */
	size_t max = len % 3 ? MAX_FRAMES : 3;
	char *body = calloc(1, len ? len : 1);
	struct symreq rq;
	struct symreq_error e;
	int ret;

	if (!body)
		return 0;
	if (len)
		memcpy(body, data + 1, len);
	ret = symreq_parse(&rq, body, len, json ? "application/json" : "text/plain", len & 1,
			   max, &e);
	if (!json)
		check_pieces(body, len, max, ret, &rq, &e);
	if (ret) {
		if (ret != -1 || rq.n || rq.frames || rq.nids)
			die("a refusal left frames", &e);
		if (e.status != 400 && e.status != 413 && e.status != 500)
			die("a refusal's status", &e);
		if (!memchr(e.msg, 0, sizeof(e.msg)) || !e.msg[0])
			die("a refusal without a message", &e);
		if (e.status == 400 && strncmp(e.msg, json ? "byte " : "line ", 5))
			die("a 400 that names no place", &e);
		if (e.status == 400 && json && strtoull(e.msg + 5, NULL, 10) > len)
			die("a 400 naming a byte past the body", &e);
		if (e.status == 413 && !json && text_lines(body, len) <= max)
			die("a 413 of a text within max_frames", &e);
		counts[json][e.status == 413 ? 2 : 1]++;
		free(body);
		return 0;
	}
	counts[json][0]++;
	if (rq.json != json || rq.n > max)
		die("an accepted request's shape", NULL);
	if (!json && rq.n != text_lines(body, len))
		die("not one frame per non-blank line", NULL);
	for (size_t i = 0; i < rq.n; i++) {
		const struct ds_sym_ref *r = &rq.frames[i];

		if (r->flags & SYMREQ_BAD) {
			if (r->flags != SYMREQ_BAD || r->module >= SYMREQ_BAD_COUNT)
				die("a bad frame's reason", NULL);
		} else if (r->module >= rq.nids ||
			   (r->flags & ~(DS_SYM_REF_OFFSET | DS_SYM_REF_RETURN)) ||
			   (!json && (r->flags & DS_SYM_REF_RETURN))) {
			die("a frame's module or flags", NULL);
		}
	}
	for (size_t m = 0; m < rq.nids; m++) {
		if (!rq.ids[m].size || rq.ids[m].size > DS_BUILD_ID_MAX)
			die("a build ID's size", NULL);
		for (size_t k = 0; k < m && rq.nids < 64; k++)
			if (ds_build_id_equal(&rq.ids[k], &rq.ids[m]))
				die("a build ID twice in the table", NULL);
	}
	check_answers(&rq, body, len);
	symreq_release(&rq);
	free(body);
	return 0;
}
