/* SPDX-License-Identifier: MIT */
/*
 * POST /symbolize's request parser and answer writer (tools/serve_symreq.c),
 * without the HTTP layer.
 *
 * Text bodies as llvm-symbolizer reads frames with build IDs ("[CODE]
 * BUILDID:HEX ADDR") and as dsostore's "HEX ADDR", blank lines skipped,
 * build IDs shared; JSON bodies in the request's shape, unknown keys
 * skipped at any depth, modules after frames.  Every bad line or field
 * makes its frame bad_input with the reason the spec of the request
 * gives; a malformed document is a 400 naming the byte (JSON) or line
 * (text); more frames than allowed a 413.  The expected values are the
 * request texts' own numbers, written by hand.  The answer text is
 * compared byte for byte with objects written from docs (llvm-symbolizer
 * --output-style=JSON's keys and order, RFC 8259's escapes).  A
 * million-frame text request is parsed within 64 MiB of heap
 * (mallinfo2(): its records are 16 bytes a frame).
 */
#define _GNU_SOURCE
#include "testutil.h"

#include "serve_symreq.h"

#include <dsostore.h>

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG 1000000

static int parse(struct symreq *rq, const char *body, const char *ct, size_t max,
		 struct symreq_error *e)
{
	return symreq_parse(rq, body, strlen(body), ct, false, max, e);
}

static void bid(const char *hex, struct ds_build_id *out)
{
	t_hex_to_bid(hex, out);
}

static bool frame_is(const struct symreq *rq, size_t i, const char *hex, uint32_t flags,
		     uint64_t addr)
{
	struct ds_build_id b;
	const struct ds_sym_ref *r = &rq->frames[i];

	bid(hex, &b);
	if (i >= rq->n || r->flags != flags || r->addr != addr || r->module >= rq->nids ||
	    !t_same_bid(&rq->ids[r->module], &b)) {
		fprintf(stderr, "frame %zu: module %u flags %#x addr %#" PRIx64 "\n", i, r->module,
			r->flags, r->addr);
		return false;
	}
	return true;
}

static bool bad_is(const struct symreq *rq, size_t i, enum symreq_bad why, uint64_t where)
{
	const struct ds_sym_ref *r = &rq->frames[i];

	if (i >= rq->n || r->flags != SYMREQ_BAD || r->module != why || r->addr != where) {
		fprintf(stderr, "frame %zu: module %u flags %#x addr %" PRIu64 ", not bad %d at %" PRIu64
				"\n",
			i, r->module, r->flags, r->addr, why, where);
		return false;
	}
	return true;
}

static void test_text(void)
{
	struct symreq rq;
	struct symreq_error e;
	const char *body = "BUILDID:abcd 0x10\n"
			   "CODE BUILDID:abcd 0x20\n"
			   "\n"
			   "abcdef01 401000\n"
			   "  \r\n"
			   "\tBUILDID:ABCD   30\r\n"
			   "CODE\tef01\t0x0";

	CHECK_EQ_INT(parse(&rq, body, NULL, 100, &e), 0);
	CHECK_EQ_INT(rq.n, 5);
	CHECK_EQ_INT(rq.nids, 3);
	CHECK(!rq.json);
	CHECK(frame_is(&rq, 0, "abcd", 0, 0x10));
	CHECK(frame_is(&rq, 1, "abcd", 0, 0x20));
	CHECK(frame_is(&rq, 2, "abcdef01", 0, 0x401000));
	CHECK(frame_is(&rq, 3, "abcd", 0, 0x30));
	CHECK(frame_is(&rq, 4, "ef01", 0, 0));
	CHECK_EQ_INT(rq.frames[0].module, rq.frames[3].module);
	symreq_release(&rq);

	/* ?offsets=1, and a Content-Type that is not JSON */
	CHECK_EQ_INT(symreq_parse(&rq, "ab 0x1", 6, "text/plain; charset=utf-8", true, 10, &e), 0);
	CHECK(frame_is(&rq, 0, "ab", DS_SYM_REF_OFFSET, 1));
	symreq_release(&rq);

	/* Bad lines: one bad_input frame each, where they are. */
	static const char bad[] = "DATA BUILDID:ab 0x1\n"	 /* 1 */
				  "FRAME ab 0x1\n"		 /* 2 */
				  "0x1234\n"			 /* 3 */
				  "/usr/bin/true 0x10\n"	 /* 4 */
				  "abc 0x10\n"			 /* 5: odd */
				  "ab 0x1 more\n"		 /* 6 */
				  "ab zz\n"			 /* 7 */
				  "ab 0x12345678901234567\n"	 /* 8: 17 digits */
				  "ab\0 0x1\n"			 /* 9: a NUL */
				  "BUILDID:" "\n"		 /* 10 */
				  "ab 0x5\n";			 /* 11: good */

	CHECK_EQ_INT(symreq_parse(&rq, bad, sizeof(bad) - 1, NULL, false, 100, &e), 0);
	CHECK_EQ_INT(rq.n, 11);
	CHECK(bad_is(&rq, 0, SYMREQ_BAD_DATA, 1));
	CHECK(bad_is(&rq, 1, SYMREQ_BAD_DATA, 2));
	CHECK(bad_is(&rq, 2, SYMREQ_BAD_NO_MODULE, 3));
	CHECK(bad_is(&rq, 3, SYMREQ_BAD_PATH, 4));
	CHECK(bad_is(&rq, 4, SYMREQ_BAD_BUILD_ID, 5));
	CHECK(bad_is(&rq, 5, SYMREQ_BAD_LINE, 6));
	CHECK(bad_is(&rq, 6, SYMREQ_BAD_LINE, 7));
	CHECK(bad_is(&rq, 7, SYMREQ_BAD_LINE, 8));
	CHECK(bad_is(&rq, 8, SYMREQ_BAD_LINE, 9));
	CHECK(bad_is(&rq, 9, SYMREQ_BAD_LINE, 10));
	CHECK(frame_is(&rq, 10, "ab", 0, 5));
	symreq_release(&rq);

	/* The same lines after a good one of their module (the last
	 * module's word is reused, the rest still checked): the same
	 * answers, and a longer word sharing its start is another module. */
	static const char after[] = "ab 0x1\n"			 /* 1: good */
				    "ab 0x1 more\n"		 /* 2 */
				    "ab zz\n"			 /* 3 */
				    "ab 0x12345678901234567\n"	 /* 4 */
				    "ab\0 0x1\n"		 /* 5 */
				    "ab 0x1\0\n"		 /* 6 */
				    "ab\n"			 /* 7: no module */
				    "abcd 0x2\n"		 /* 8: good, another */
				    "ab\t 0x3 \r\n"		 /* 9: good */
				    "BUILDID:ab 4\n"		 /* 10: good */
				    "abc 0x10\n";		 /* 11: odd */

	CHECK_EQ_INT(symreq_parse(&rq, after, sizeof(after) - 1, NULL, false, 100, &e), 0);
	CHECK_EQ_INT(rq.n, 11);
	CHECK_EQ_INT(rq.nids, 2);
	CHECK(frame_is(&rq, 0, "ab", 0, 1));
	for (int k = 1; k < 6; k++)
		CHECK(bad_is(&rq, (size_t)k, SYMREQ_BAD_LINE, (uint64_t)k + 1));
	CHECK(bad_is(&rq, 6, SYMREQ_BAD_NO_MODULE, 7)); /* "ab": an address alone */
	CHECK(frame_is(&rq, 7, "abcd", 0, 2));
	CHECK(frame_is(&rq, 8, "ab", 0, 3));
	CHECK(frame_is(&rq, 9, "ab", 0, 4));
	CHECK(bad_is(&rq, 10, SYMREQ_BAD_BUILD_ID, 11));
	symreq_release(&rq);

	/* A line past 4096 bytes: refused, naming it. */
	char *longb = malloc(10000);

	strcpy(longb, "ab 0x1\n\nab ");
	memset(longb + strlen(longb), '0', 5000);
	strcpy(longb + 11 + 5000, "1\n");
	CHECK_EQ_INT(parse(&rq, longb, NULL, 100, &e), -1);
	CHECK_EQ_INT(e.status, 400);
	CHECK(strstr(e.msg, "line 3:") != NULL);
	CHECK_EQ_INT(rq.n, 0);
	free(longb);

	/* max_frames: blank lines are no frames; the third is one too many. */
	CHECK_EQ_INT(parse(&rq, "ab 1\n\nab 2\n", NULL, 2, &e), 0);
	symreq_release(&rq);
	CHECK_EQ_INT(parse(&rq, "ab 1\nab 2\nDATA ab 3\n", NULL, 2, &e), -1);
	CHECK_EQ_INT(e.status, 413);
	CHECK_EQ_INT(parse(&rq, "", NULL, 2, &e), 0);
	CHECK_EQ_INT(rq.n, 0);
	symreq_release(&rq);
}

static void test_json(void)
{
	struct symreq rq;
	struct symreq_error e;
	const char *ct = "Application/JSON; charset=utf-8";
	const char *body =
		"{\"modules\":[{\"build_id\":\"abcd\"},{\"build_id\":\"ef01\",\"x\":[1,{\"y\":2}]},"
		"{\"build_id\":\"ABCD\"}],"
		"\"frames\":[{\"module\":0,\"vaddr\":\"0x401a2b\"},"
		"{\"module\":1,\"offset\":\"0x1A2B\",\"return_address\":true},"
		"{\"module\":2,\"vaddr\":4096,\"return_address\":false},"
		"{\"unknown\":{\"deep\":[null,true,\"s\",{\"module\":7}]},\"module\":0,"
		"\"vaddr\":18446744073709551615}],"
		"\"extra\":\"x\"}";

	CHECK_EQ_INT(parse(&rq, body, ct, 100, &e), 0);
	CHECK(rq.json);
	CHECK_EQ_INT(rq.n, 4);
	CHECK_EQ_INT(rq.nids, 2);
	CHECK(frame_is(&rq, 0, "abcd", 0, 0x401a2b));
	CHECK(frame_is(&rq, 1, "ef01", DS_SYM_REF_OFFSET | DS_SYM_REF_RETURN, 0x1a2b));
	CHECK(frame_is(&rq, 2, "abcd", 0, 4096));
	CHECK(frame_is(&rq, 3, "abcd", 0, UINT64_MAX));
	symreq_release(&rq);

	/* Modules after the frames that name them. */
	CHECK_EQ_INT(parse(&rq, "{\"frames\":[{\"module\":1,\"vaddr\":\"0x1\"}],"
				"\"modules\":[{\"build_id\":\"aa\"},{\"build_id\":\"bb\"}]}",
			   "application/json", 100, &e),
		     0);
	CHECK(frame_is(&rq, 0, "bb", 0, 1));
	symreq_release(&rq);

	/* Bad frames: each bad_input, at the byte of its '{' (0-based). */
	const char *bad = "{\"modules\":[{\"build_id\":\"aa\"},{\"build_id\":\"xyz\"},{}],"
			  "\"frames\":["
			  "{\"module\":5,\"vaddr\":\"0x1\"},"			 /* 0 */
			  "{\"module\":1,\"vaddr\":\"0x1\"},"			 /* 1 */
			  "{\"module\":2,\"vaddr\":\"0x1\"},"			 /* 2 */
			  "{\"module\":0},"					 /* 3 */
			  "{\"module\":0,\"vaddr\":\"0x1\",\"offset\":\"0x1\"}," /* 4 */
			  "{\"module\":0,\"vaddr\":\"123\"},"			 /* 5 */
			  "{\"module\":0,\"vaddr\":\"0x\"},"			 /* 6 */
			  "{\"module\":0,\"vaddr\":\"0x12345678901234567\"},"	 /* 7 */
			  "{\"module\":0,\"vaddr\":1.5},"			 /* 8 */
			  "{\"module\":0,\"vaddr\":-1},"			 /* 9 */
			  "{\"module\":\"0\",\"vaddr\":1},"			 /* 10 */
			  "{\"vaddr\":1},"					 /* 11 */
			  "{\"module\":0,\"vaddr\":1,\"return_address\":\"yes\"}," /* 12 */
			  "{\"module\":18446744073709551616,\"vaddr\":1},"	 /* 13 */
			  "{\"module\":0,\"vaddr\":[1]},"			 /* 14 */
			  "{\"module\":0,\"vaddr\":18446744073709551616}"	 /* 15 */
			  "]}";

	CHECK_EQ_INT(parse(&rq, bad, "application/json", 100, &e), 0);
	CHECK_EQ_INT(rq.n, 16);
	CHECK_EQ_INT(rq.nids, 1);
	/* (where each frame's object starts, found in the text here) */
	const char *p = strstr(bad, "\"frames\":[") + 10;
	uint64_t at[16];

	for (int i = 0; i < 16; i++) {
		at[i] = (uint64_t)(p - bad);
		p += strcspn(p, "}") + 2; /* no frame holds a nested object */
		if (i == 14)
			p = strstr(bad, "{\"module\":0,\"vaddr\":18446744073709551616}");
	}
	CHECK(bad_is(&rq, 0, SYMREQ_BAD_MODULE_RANGE, SYMREQ_NOWHERE));
	CHECK(bad_is(&rq, 1, SYMREQ_BAD_MODULE_ID, SYMREQ_NOWHERE));
	CHECK(bad_is(&rq, 2, SYMREQ_BAD_MODULE_ID, SYMREQ_NOWHERE));
	CHECK(bad_is(&rq, 3, SYMREQ_BAD_NO_ADDR, at[3]));
	CHECK(bad_is(&rq, 4, SYMREQ_BAD_TWO_ADDRS, at[4]));
	for (int i = 5; i <= 9; i++)
		CHECK(bad_is(&rq, (size_t)i, SYMREQ_BAD_ADDR, at[i]));
	CHECK(bad_is(&rq, 10, SYMREQ_BAD_FIELD, at[10]));
	CHECK(bad_is(&rq, 11, SYMREQ_BAD_NO_MODULE, at[11]));
	CHECK(bad_is(&rq, 12, SYMREQ_BAD_FIELD, at[12]));
	CHECK(bad_is(&rq, 13, SYMREQ_BAD_FIELD, at[13]));
	CHECK(bad_is(&rq, 14, SYMREQ_BAD_ADDR, at[14]));
	CHECK(bad_is(&rq, 15, SYMREQ_BAD_ADDR, at[15]));
	symreq_release(&rq);

	/* Malformed documents: 400, naming the byte after the token at
	 * fault (counted from 0 in the text). */
	static const struct {
		const char *body;
		const char *msg;
	} refuse[] = {
		{ "{\"frames\":5}", "byte 11:" },
		{ "[]", "byte 1:" },
		{ "{\"modules\":{}}", "byte 12:" },
		{ "{\"frames\":[5]}", "byte 12:" },
		{ "{\"modules\":[\"aa\"]}", "byte 16:" },
		{ "{\"frames\":[],\"frames\":[]}", "byte 23:" },
		{ "{\"frames\":[]} x", "byte " },
		{ "{\"frames\":[", "byte 11:" },
		{ "", "byte 0:" },
		{ "{\"frames\":[{\"module\":0,\"vaddr\":\"0x1\"}", "byte 37:" },
		{ "{\"a\":\"\xff\"}", "byte " },
	};

	for (size_t i = 0; i < sizeof(refuse) / sizeof(refuse[0]); i++) {
		e.msg[0] = 0;
		CHECK_EQ_INT(parse(&rq, refuse[i].body, "application/json", 100, &e), -1);
		CHECK_EQ_INT(e.status, 400);
		if (strncmp(e.msg, refuse[i].msg, strlen(refuse[i].msg))) {
			fprintf(stderr, "%s: \"%s\", not \"%s...\"\n", refuse[i].body, e.msg,
				refuse[i].msg);
			t_failures++;
		}
		CHECK_EQ_INT(rq.n, 0);
	}
	/* Nested past 32 in an unknown key: refused at the 33rd '['. */
	char deep[128] = "{\"x\":";

	for (int i = 0; i < 40; i++)
		strcat(deep, "[");
	CHECK_EQ_INT(parse(&rq, deep, "application/json", 100, &e), -1);
	CHECK_EQ_INT(e.status, 400);
	CHECK(!strcmp(e.msg, "byte 37: nested too deep"));

	/* max_frames counts bad frames too */
	CHECK_EQ_INT(parse(&rq, "{\"frames\":[{},{},{}]}", "application/json", 2, &e), -1);
	CHECK_EQ_INT(e.status, 413);
}

/* What symout wrote, compared whole, then cleared. */
static void out_is(struct symout *o, const char *want)
{
	if (o->nomem || o->len != strlen(want) || (o->len && memcmp(o->buf, want, o->len))) {
		fprintf(stderr, "wrote\n%.*s\nnot\n%s\n", (int)o->len, o->buf, want);
		t_failures++;
	}
	o->len = 0;
}

static void test_answers(void)
{
	struct symreq rq;
	struct symreq_error e;
	struct symout o = { 0 };
	const char file[] = "/src/a\"b\\\x01\xff\xc3\xa9.c"; /* a quote, a backslash, ^A, a bad byte, é */
	struct ds_frame fr[2] = {
		{ .function = "inl", .function_start = 0x401a10, .file = "/src/a.h", .line = 3,
		  .column = 9, .inlined = true, .function_len = 3, .file_len = 8 },
		{ .function = "ns::f<int>()", .function_start = 0x401a00, .file = file,
		  .line = 12, .column = 5, .discriminator = 2, .function_len = 12,
		  .file_len = sizeof(file) - 1 },
	};
	struct ds_sym_answer found = { .addr = 0x401a2b, .frames = fr, .nframes = 2,
				       .status = DS_SYM_FOUND },
			     nodi = { .addr = 0x10, .status = DS_SYM_NO_SYMBOLS, .error = -ENOENT,
				      .reason = DS_SYM_REASON_NO_DEBUGINFO,
				      .debuginfo_error = -ENOENT },
			     none = { .addr = 0x20, .status = DS_SYM_NOT_FOUND,
				      .reason = DS_SYM_REASON_NO_SYMBOL };

	CHECK_EQ_INT(parse(&rq, "abcd 0x401a2b\nDATA ab 1\nef01 0x10\nabcd 0x20\n", NULL, 10, &e),
		     0);
	symout_head(&o, &rq);
	out_is(&o, "");
	CHECK_EQ_INT(symout_frame(&o, &rq, 0, &found, 0), SYMREQ_SYMBOLIZED);
	out_is(&o, "{\"Address\":\"0x401a2b\",\"BuildID\":\"abcd\",\"ModuleName\":\"BUILDID:abcd\","
		   "\"Status\":\"symbolized\",\"Symbol\":["
		   "{\"Column\":9,\"Discriminator\":0,\"FileName\":\"/src/a.h\","
		   "\"FunctionName\":\"inl\",\"Line\":3,\"StartAddress\":\"0x401a10\","
		   "\"StartFileName\":\"\",\"StartLine\":0},"
		   "{\"Column\":5,\"Discriminator\":2,"
		   "\"FileName\":\"/src/a\\\"b\\\\\\u0001\\ufffd\xc3\xa9.c\","
		   "\"FunctionName\":\"ns::f<int>()\",\"Line\":12,\"StartAddress\":\"0x401a00\","
		   "\"StartFileName\":\"\",\"StartLine\":0}]}\n");
	CHECK_EQ_INT(symout_frame(&o, &rq, 1, NULL, 0), SYMREQ_BAD_INPUT);
	out_is(&o, "{\"Address\":\"\",\"BuildID\":\"\",\"Error\":{\"Message\":\"line 2: only CODE "
		   "frames are symbolized\"},\"ModuleName\":\"\",\"Status\":\"bad_input\","
		   "\"Symbol\":[]}\n");
	CHECK_EQ_INT(symout_frame(&o, &rq, 2, &nodi, 0), SYMREQ_NO_DEBUGINFO);
	/* (the reason's words: the library's, ds_strerror()) */
	char want[512];

	snprintf(want, sizeof(want),
		 "{\"Address\":\"0x10\",\"BuildID\":\"ef01\",\"Error\":{\"Message\":\"no "
		 "debuginfo: %s\"},\"ModuleName\":\"BUILDID:ef01\","
		 "\"Status\":\"no_debuginfo\",\"Symbol\":[]}\n",
		 ds_strerror(-ENOENT));
	out_is(&o, want);
	CHECK_EQ_INT(symout_frame(&o, &rq, 3, &none, 0), SYMREQ_NO_SYMBOL);
	out_is(&o, "{\"Address\":\"0x20\",\"BuildID\":\"abcd\",\"ModuleName\":\"BUILDID:abcd\","
		   "\"Status\":\"no_symbol\",\"Symbol\":[]}\n");
	CHECK_EQ_INT(symout_frame(&o, &rq, 3, NULL, -ENOMEM), SYMREQ_ERROR);
	snprintf(want, sizeof(want),
		 "{\"Address\":\"0x20\",\"BuildID\":\"abcd\",\"Error\":{\"Message\":\"%s\"},"
		 "\"ModuleName\":\"BUILDID:abcd\",\"Status\":\"error\",\"Symbol\":[]}\n",
		 ds_strerror(-ENOMEM));
	out_is(&o, want);
	symout_tail(&o, &rq);
	out_is(&o, "");
	symreq_release(&rq);

	/* JSON: one document, frames comma-separated. */
	CHECK_EQ_INT(parse(&rq, "{\"modules\":[{\"build_id\":\"abcd\"}],\"frames\":[{\"module\":0,"
				"\"vaddr\":32},{\"module\":3,\"vaddr\":1}]}",
			   "application/json", 10, &e),
		     0);
	symout_head(&o, &rq);
	symout_frame(&o, &rq, 0, &none, 0);
	symout_frame(&o, &rq, 1, NULL, 0);
	symout_tail(&o, &rq);
	out_is(&o, "{\"frames\":[{\"Address\":\"0x20\",\"BuildID\":\"abcd\",\"ModuleName\":"
		   "\"BUILDID:abcd\",\"Status\":\"no_symbol\",\"Symbol\":[]},"
		   "{\"Address\":\"\",\"BuildID\":\"\",\"Error\":{\"Message\":\"frame 1: \\\"module\\\" "
		   "is not an index of \\\"modules\\\"\"},\"ModuleName\":\"\",\"Status\":"
		   "\"bad_input\",\"Symbol\":[]}]}\n");
	symreq_release(&rq);
	symout_release(&o);
}

/* A million frames of a thousand build IDs: the records, not the text. */
static void test_big(void)
{
	size_t cap = (size_t)BIG * 64, len = 0;
	char *body = malloc(cap);
	struct symreq rq;
	struct symreq_error e;
	struct mallinfo2 before, after;

	if (!body)
		exit(2);
	for (size_t i = 0; i < BIG; i++)
		len += (size_t)snprintf(body + len, cap - len, "CODE BUILDID:%040zx 0x%zx\n",
					i % 1000 + 1, 0x400000 + i);
	before = mallinfo2();
	CHECK_EQ_INT(symreq_parse(&rq, body, len, NULL, false, BIG, &e), 0);
	after = mallinfo2();
	CHECK_EQ_INT(rq.n, BIG);
	CHECK_EQ_INT(rq.nids, 1000);
	CHECK(rq.n == BIG && rq.frames[BIG - 1].addr == 0x400000 + BIG - 1);
	fprintf(stderr, "1M frames: %zu bytes of heap over %zu of body\n",
		after.uordblks + after.hblkhd - before.uordblks - before.hblkhd, len);
	CHECK(after.uordblks + after.hblkhd - before.uordblks - before.hblkhd < (64u << 20));
	symreq_release(&rq);
	/* One more: refused at max_frames, not read past it. */
	CHECK_EQ_INT(symreq_parse(&rq, body, len, NULL, false, BIG - 1, &e), -1);
	CHECK_EQ_INT(e.status, 413);
	free(body);
}

/* SYMREQ_MAX_MODULES distinct build IDs are taken, one more is a 413, in
 * text and in JSON. */
static void test_modules(void)
{
	size_t n = SYMREQ_MAX_MODULES + 1, cap = n * 80 + 64, len;
	char *text = malloc(cap), *json = malloc(cap);
	struct symreq rq;
	struct symreq_error e;

	if (!text || !json)
		exit(2);
	for (size_t want = n - 1; want <= n; want++) {
		len = 0;
		for (size_t i = 0; i < want; i++)
			len += (size_t)snprintf(text + len, cap - len, "%040zx 0x1\n", i + 1);
		int rc = symreq_parse(&rq, text, len, NULL, false, 2 * n, &e);

		CHECK_EQ_INT(rc, want < n ? 0 : -1);
		if (!rc) {
			CHECK_EQ_INT(rq.nids, SYMREQ_MAX_MODULES);
			symreq_release(&rq);
		} else {
			CHECK_EQ_INT(e.status, 413);
		}
		len = (size_t)snprintf(json, cap, "{\"modules\":[");
		for (size_t i = 0; i < want; i++)
			len += (size_t)snprintf(json + len, cap - len, "%s{\"build_id\":\"%040zx\"}",
						i ? "," : "", i + 1);
		len += (size_t)snprintf(json + len, cap - len, "],\"frames\":[]}");
		rc = symreq_parse(&rq, json, len, "application/json", false, 2 * n, &e);
		CHECK_EQ_INT(rc, want < n ? 0 : -1);
		if (!rc)
			symreq_release(&rq);
		else
			CHECK_EQ_INT(e.status, 413);
	}
	free(text);
	free(json);
}

int main(void)
{
	test_text();
	test_modules();
	test_json();
	test_answers();
	test_big();
	return t_done("test_serve_symreq");
}
