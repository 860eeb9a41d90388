/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the folded-stack reader of dsostore flamegraph
 * (folded_parse() in tools/cli_folded.c: "FRAME;FRAME;... COUNT" lines).
 *
 * The input is copied into a malloc() of exactly its size (no NUL after
 * it), so a read past its end is an ASan error.  When it parses, the
 * result is checked against the contract:
 *   - every stack has 1..FOLDED_MAX_FRAMES frames and its frame ids are
 *     names of the set; no two stacks are the same; the counts add up to
 *     the total;
 *   - written out (folded_write), no line holds a byte a terminal acts on
 *     (ds_term_escape()); when the input held none, read again it gives
 *     the same text: the writer's lines are the reader's language, and
 *     sorted;
 *   - both orders (folded_sorted) are permutations, and the frame order
 *     keeps every stack after the stacks that are prefixes of it.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check; tools/cli_folded.c comes with it, and the few
 * CLI helpers it names (never called on this path) are stubs here.
 */
#define _GNU_SOURCE
#include "cli_folded.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise: say which, then abort (the replay saves the input). */
#define FAIL(what)                                                        \
	do {                                                              \
		fprintf(stderr, "fuzz_folded: %s (line %d)\n", what, __LINE__); \
		abort();                                                  \
	} while (0)

void cli_error(const char *fmt, ...)
{
	(void)fmt;
}

int cli_recording_open(struct cli_recording *r, const char *path, const struct cli_common *c,
		       bool no_fetch, const struct ds_profile_opts *po, size_t unwind_max)
{
	(void)r, (void)path, (void)c, (void)no_fetch, (void)po, (void)unwind_max;
	abort();
}

int cli_recording_prefetch(struct cli_recording *r, bool progress, bool verbose)
{
	(void)r, (void)progress, (void)verbose;
	abort();
}

void cli_recording_close(struct cli_recording *r)
{
	(void)r;
	abort();
}

int cli_output_open(struct cli_output *o, const char *cmd, const char *opt, const char *path,
		    const char *const *inputs, size_t ninputs, const char *note)
{
	(void)o, (void)cmd, (void)opt, (void)path, (void)inputs, (void)ninputs, (void)note;
	abort();
}

int cli_output_close(struct cli_output *o, bool ok)
{
	(void)o, (void)ok;
	abort();
}

static char *written(const struct folded *f, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);

	if (!m || folded_write(f, m) || fclose(m))
		FAIL("folded_write failed");
	return buf;
}

static void check_order(const struct folded *f)
{
	for (int as_lines = 0; as_lines < 2; as_lines++) {
		size_t *ord = folded_sorted(f, as_lines);
		char *seen = calloc(f->n ? f->n : 1, 1);

		if (!ord || !seen)
			FAIL("out of memory");
		for (size_t i = 0; i < f->n; i++) {
			if (ord[i] >= f->n || seen[ord[i]])
				FAIL("folded_sorted is no permutation");
			seen[ord[i]] = 1;
		}
		for (size_t i = 1; !as_lines && i < f->n; i++) {
			const struct fstack *a = &f->v[ord[i - 1]], *b = &f->v[ord[i]];

			/* b may not be a prefix of the stack before it */
			if (b->n < a->n &&
			    !memcmp(f->pool + a->off, f->pool + b->off, b->n * sizeof(uint32_t)))
				FAIL("a stack sorted after one it is a prefix of");
		}
		free(seen);
		free(ord);
	}
}

/* Whether every line of s is text a terminal can trust: ds_term_escape()
 * leaves it as it is. */
static bool lines_trusted(const uint8_t *s, size_t len)
{
	for (size_t i = 0, b = 0; i <= len; i++) {
		if (i < len && s[i] != '\n')
			continue;
		if (ds_term_escape(NULL, 0, (const char *)s + b, i - b) != i - b)
			return false;
		b = i + 1;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size ? size : 1), *out1, *out2;
	struct folded f, g;
	uint64_t sum = 0;
	size_t len1, len2;
	int rc;

	if (!in)
		return 0;
	memcpy(in, data, size);
	folded_init(&f);
	rc = folded_parse(&f, in, size);
	free(in);
	if (rc) {
		if (rc != -EFBIG && rc != -ENOMEM)
			FAIL("folded_parse: an error it does not promise");
		folded_free(&f);
		return 0;
	}
	for (size_t i = 0; i < f.n; i++) {
		const struct fstack *st = &f.v[i];

		if (!st->n || st->n > FOLDED_MAX_FRAMES || st->off + st->n > f.npool)
			FAIL("a stack of no frames, too many, or outside the pool");
		for (uint32_t k = 0; k < st->n; k++)
			if (f.pool[st->off + k] >= f.nnames)
				FAIL("a frame that is no name");
		for (size_t j = 0; j < i; j++)
			if (f.v[j].n == st->n &&
			    !memcmp(f.pool + f.v[j].off, f.pool + st->off, st->n * sizeof(uint32_t)))
				FAIL("one stack twice");
		sum = sum + st->count < sum ? UINT64_MAX : sum + st->count;
	}
	if (sum != f.total)
		FAIL("the counts do not add up to the total");
	check_order(&f);
	out1 = written(&f, &len1);
	if (!lines_trusted((const uint8_t *)out1, len1))
		FAIL("folded_write wrote a byte a terminal acts on");
	/* Names with such bytes are written escaped, and two names may then
	 * read back as one: the round trip holds for the others. */
	folded_init(&g);
	if (!lines_trusted(data, size)) {
		free(out1);
		folded_free(&g);
		folded_free(&f);
		return 0;
	}
	if (folded_parse(&g, out1, len1) || g.skipped || g.n != f.n || g.total != f.total)
		FAIL("what folded_write wrote reads back otherwise");
	out2 = written(&g, &len2);
	if (len1 != len2 || memcmp(out1, out2, len1))
		FAIL("written, read and written again: not the same text");
	free(out1);
	free(out2);
	folded_free(&g);
	folded_free(&f);
	return 0;
}
