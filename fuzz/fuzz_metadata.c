/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the metadata answer parser (ds_metadata_parse(),
 * lib/debuginfod/metadata.c: a debuginfod server's /metadata body, the
 * server's to choose) and the "glob" matcher beside it.
 *
 * Parser: an accepted answer, written again by ds_metadata_json(), must
 * parse to the same results (each entry's JSON, fields and "complete"),
 * and its entries carry type and build ID only as strings the answer
 * held; a refused one leaves the set empty and incomplete, and only
 * -EBADMSG or -ENOMEM refuse it.
 * Glob: the input up to its first NUL is a pattern, the rest a path; when
 * both are short and of the characters a b / * ? [ ] ! - only, the matcher must
 * agree with glibc's fnmatch(FNM_PATHNAME), the oracle.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include "debuginfod.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

static unsigned long accepted, results, globs, glob_matches;

void fuzz_summary(void)
{
	fprintf(stderr, "fuzz_metadata: %lu answers accepted, %lu results, %lu globs (%lu matched)\n",
		accepted, results, globs, glob_matches);
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void check_glob(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	char pat[65], path[65];
	size_t plen, slen;

	if (!nul)
		return;
	plen = (size_t)(nul - data);
	slen = size - plen - 1;
	if (plen > 64 || slen > 64)
		return;
	memcpy(pat, data, plen);
	pat[plen] = 0;
	memcpy(path, nul + 1, slen);
	path[slen] = 0;
	if (strlen(path) != slen || strspn(pat, "ab/*?[]!-") != plen ||
	    strspn(path, "ab/*?[]!-") != slen)
		return;
	globs++;
	if (ds__metadata_glob(pat, path) != !fnmatch(pat, path, FNM_PATHNAME)) {
		fprintf(stderr, "glob '%s' against '%s': %d, fnmatch says %d\n", pat, path,
			ds__metadata_glob(pat, path), !fnmatch(pat, path, FNM_PATHNAME));
		abort();
	}
	glob_matches += ds__metadata_glob(pat, path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly its size: the parser must not read past it. */
	char *text = malloc(size ? size : 1);
	struct ds_metadata *m = ds_metadata_new(), *again = ds_metadata_new();
	char *json;
	size_t len;
	int err;

	if (!text || !m || !again)
		abort();
	memcpy(text, data, size);
	err = ds_metadata_parse(m, text, size);
	if (err) {
		if ((err != -EBADMSG && err != -ENOMEM) || m->n || m->complete)
			abort();
	} else {
		accepted++;
		results += m->n;
		if (!(json = ds_metadata_json(m, &len)))
			abort();
		if (ds_metadata_parse(again, json, len) || again->n != m->n ||
		    again->complete != m->complete)
			abort();
		for (size_t i = 0; i < m->n; i++) {
			const struct ds_metadata_entry *a = &m->entries[i], *b = &again->entries[i];

			if (!a->json || strcmp(a->json, b->json) || !same_str(a->type, b->type) ||
			    !same_str(a->buildid, b->buildid) || !same_str(a->file, b->file) ||
			    !same_str(a->archive, b->archive))
				abort();
			/* Each given once. */
			for (size_t k = 0; k < i; k++)
				if (!strcmp(m->entries[k].json, a->json))
					abort();
		}
		free(json);
	}
	ds_metadata_free(m);
	ds_metadata_free(again);
	free(text);
	check_glob(data, size);
	return 0;
}
