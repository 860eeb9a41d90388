/* SPDX-License-Identifier: MIT */
/*
 * Metadata answers (lib/debuginfod/metadata.c) without a server: the
 * "glob" matcher against glibc's fnmatch(FNM_PATHNAME) over every short
 * pattern and name of a small alphabet (the oracle), and the parser on
 * answers as debuginfod 0.192 writes them and on ones it must refuse.
 */
#define _GNU_SOURCE
#include "testutil.h"

#include "debuginfod.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every string of up to max characters of alpha, in turn: fn(s). */
static void each(const char *alpha, int max, void (*fn)(const char *s, void *u), void *u)
{
	size_t na = strlen(alpha);
	char s[8];

	for (int len = 0; len <= max; len++) {
		size_t total = 1;

		for (int i = 0; i < len; i++)
			total *= na;
		for (size_t k = 0; k < total; k++) {
			size_t v = k;

			for (int i = 0; i < len; i++, v /= na)
				s[i] = alpha[v % na];
			s[len] = 0;
			fn(s, u);
		}
	}
}

static unsigned long compared, disagreed;

static void against(const char *name, void *u)
{
	const char *pat = u;
	bool ours = ds__metadata_glob(pat, name), libc = !fnmatch(pat, name, FNM_PATHNAME);

	compared++;
	if (ours != libc && disagreed++ < 10)
		fprintf(stderr, "glob '%s' against '%s': %d, fnmatch(FNM_PATHNAME) says %d\n", pat,
			name, ours, libc);
}

static void pattern(const char *pat, void *u)
{
	each("ab/]", 4, against, (void *)pat);
}

static void test_glob(void)
{
	each("ab/*?[]!", 4, pattern, NULL);
	CHECK(compared > 1500000);
	fprintf(stderr, "glob: %lu pairs compared with fnmatch()\n", compared);
	CHECK_EQ_INT(disagreed, 0);
	/* What the server's users write. */
	CHECK(ds__metadata_glob("/usr/lib/*.so.*", "/usr/lib/libc.so.6"));
	CHECK(!ds__metadata_glob("/usr/*", "/usr/lib/libc.so.6"));
	CHECK(ds__metadata_glob("/usr/*/libc.so.[0-9]", "/usr/lib/libc.so.6"));
	CHECK(ds__metadata_glob("/a\\*b", "/a*b"));
	CHECK(!ds__metadata_glob("/a\\*b", "/axb"));
	/* Where it differs, as metadata.c says: no character classes. */
	CHECK(ds__metadata_glob("[[:alpha:]]", "a]"));
	CHECK(!ds__metadata_glob("[[:alpha:]]", "b"));
}

static struct ds_metadata *parsed(const char *text, int want_err)
{
	struct ds_metadata *m = ds_metadata_new();

	CHECK(m != NULL);
	CHECK_EQ_INT(ds_metadata_parse(m, text, strlen(text)), want_err);
	return m;
}

static void test_parse(void)
{
	/* debuginfod 0.192's answer, byte for byte (json-c's spacing and
	 * escaped slashes). */
	static const char answer[] =
		"{ \"results\": [ { \"type\": \"debuginfo\", \"buildid\": \"5c26f3ed\", \"file\": "
		"\"\\/s\\/p.debug\" }, { \"type\": \"executable\", \"buildid\": \"5c26f3ed\", "
		"\"file\": \"\\/s\\/p\", \"archive\": \"\\/r\\/p.rpm\" } ], \"complete\": true }";
	static const char *const bad[] = {
		"",
		"[]",
		"{\"results\":[]}",
		"{\"complete\":true}",
		"{\"results\":{},\"complete\":true}",
		"{\"results\":[[]],\"complete\":true}",
		"{\"results\":[1],\"complete\":true}",
		"{\"results\":[],\"complete\":\"yes\"}",
		"{\"results\":[],\"complete\":true,\"complete\":false}",
		"{\"results\":[],\"results\":[],\"complete\":true}",
		"{\"results\":[],\"complete\":true} {}",
		"{\"results\":[{\"file\":\"/a\\u0000b\"}],\"complete\":true}",
		"{\"results\":[{\"x\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}],\"complete\":true}",
		"{\"results\":[{\"file\":\"\xff\"}],\"complete\":true}",
	};
	struct ds_metadata *m = parsed(answer, 0);
	char *json;

	CHECK_EQ_INT(m->n, 2);
	CHECK(m->complete);
	if (m->n == 2) {
		CHECK(!strcmp(m->entries[0].type, "debuginfo"));
		CHECK(!strcmp(m->entries[0].file, "/s/p.debug"));
		CHECK(m->entries[0].archive == NULL);
		CHECK(!strcmp(m->entries[1].archive, "/r/p.rpm"));
		CHECK(!strcmp(m->entries[1].json, "{\"type\":\"executable\",\"buildid\":\"5c26f3ed\","
						  "\"file\":\"/s/p\",\"archive\":\"/r/p.rpm\"}"));
	}
	/* The same answer again (a second server): nothing added.  Then
	 * one that says it is partial: the set is. */
	CHECK_EQ_INT(ds_metadata_parse(m, answer, strlen(answer)), 0);
	CHECK_EQ_INT(m->n, 2);
	CHECK_EQ_INT(ds_metadata_parse(m, "{\"results\":[],\"complete\":false}", 31), 0);
	CHECK(!m->complete);
	ds_metadata_free(m);

	/* Unknown fields, nested, are kept in the entry's JSON. */
	m = parsed("{\"other\":{\"a\":[1]},\"results\":[{\"buildid\":\"ab\",\"n\":[1,{\"k\":null}]}],"
		   "\"complete\":true}",
		   0);
	CHECK_EQ_INT(m->n, 1);
	if (m->n == 1)
		CHECK(!strcmp(m->entries[0].json, "{\"buildid\":\"ab\",\"n\":[1,{\"k\":null}]}"));
	ds_metadata_free(m);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m = parsed(bad[i], -EBADMSG);
		CHECK_EQ_INT(m->n, 0);
		CHECK(!m->complete);
		if (m->n || m->complete)
			fprintf(stderr, "accepted: %s\n", bad[i]);
		ds_metadata_free(m);
	}

	/* An empty body; one result past 2^20 (not 2 GB of "{}" held). */
	m = ds_metadata_new();
	CHECK_EQ_INT(ds_metadata_parse(m, "", 0), -EBADMSG);
	CHECK(!m->complete);
	ds_metadata_free(m);
	for (size_t n = (1u << 20); n <= (1u << 20) + 1; n++) {
		char *big = malloc(3 * n + 64);
		size_t len;

		CHECK(big != NULL);
		if (!big)
			break;
		len = (size_t)sprintf(big, "{\"results\":[");
		for (size_t i = 0; i < n; i++, len += 3)
			memcpy(big + len, i + 1 < n ? "{}," : "{}]", 3);
		len += (size_t)sprintf(big + len, ",\"complete\":true}");
		m = ds_metadata_new();
		/* 2^20: accepted, one result (the same JSON each time). */
		CHECK_EQ_INT(ds_metadata_parse(m, big, len), n == (1u << 20) ? 0 : -EBADMSG);
		CHECK_EQ_INT(m->n, n == (1u << 20) ? 1 : 0);
		ds_metadata_free(m);
		free(big);
	}

	/* As a server writes it: debuginfod's order of the fields. */
	m = ds_metadata_new();
	CHECK_EQ_INT(ds_metadata_add(m, "executable", "ab", "/x \"y\"", NULL), 0);
	CHECK_EQ_INT(ds_metadata_add(m, "executable", "ab", "/x \"y\"", NULL), 0);
	CHECK_EQ_INT(ds_metadata_add(m, "debuginfo", "ab", "/x", "/a.rpm"), 0);
	CHECK_EQ_INT(ds_metadata_add(m, "debuginfo", "ab", "/\xff", NULL), -EINVAL);
	json = ds_metadata_json(m, NULL);
	CHECK(json && !strcmp(json, "{\"results\":[{\"type\":\"executable\",\"buildid\":\"ab\","
				    "\"file\":\"/x \\\"y\\\"\"},{\"type\":\"debuginfo\",\"buildid\":"
				    "\"ab\",\"file\":\"/x\",\"archive\":\"/a.rpm\"}],\"complete\":true}"));
	free(json);
	ds_metadata_free(m);
}

int main(void)
{
	test_glob();
	test_parse();
	return t_failures ? 1 : 0;
}
