/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the symbolize request-line parser (ds_sym_parse_line).
 *
 * The input is one line, not NUL-terminated: it is copied into a malloc()
 * of exactly its size, and each key buffer is exactly keylen bytes, so a
 * read past len or a write past keylen is an ASan error.  Every answer is
 * checked three ways:
 *   - against a model of the grammar in the header written here, from the
 *     contract, not from the library's code: words split on space, tab,
 *     CR, LF; a NUL anywhere is an error; one or two words; the last is
 *     the address (0x optional, 1 to 16 hex digits); a first word with no
 *     '/' that is an even number (2..128) of hex digits is a build ID,
 *     anything else a path; the key and its NUL must fit in keylen;
 *   - for itself: kind in range, the key NUL-terminated inside keylen, the
 *     build ID the key's bytes;
 *   - by a reparse of the line rebuilt from the result ("KEY 0xADDR" or
 *     "0xADDR"), which must give the same answer.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include <dsostore.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

/* 0 and 1 leave no room for any key; 5 fits "abcd"; 41 a SHA-1 build ID
 * in hex, 129 the longest one; 4096 a path. */
static const size_t keylens[] = {0, 1, 2, 5, 41, 129, 4096};

static unsigned long counts[5]; /* by kind; [4]: -EINVAL */

void fuzz_summary(void)
{
	fprintf(stderr,
		"fuzz_symline: %lu empty, %lu address, %lu build-ID, %lu path, %lu -EINVAL "
		"(over %zu key lengths each)\n",
		counts[DS_SYM_LINE_EMPTY], counts[DS_SYM_LINE_ADDR], counts[DS_SYM_LINE_BUILD_ID],
		counts[DS_SYM_LINE_PATH], counts[4], sizeof(keylens) / sizeof(keylens[0]));
}

static void die(const char *what, const char *line, size_t len, size_t keylen, int got, int want)
{
	fprintf(stderr, "fuzz_symline: %s (keylen %zu: returned %d, model %d) on %zu bytes: \"",
		what, keylen, got, want, len);
	for (size_t i = 0; i < len; i++)
		fprintf(stderr,
			(unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7e ? "\\x%02x"
										       : "%c",
			(unsigned char)line[i]);
	fprintf(stderr, "\"\n");
	abort();
}

/* ---------------------------------------------------------------- model */

struct model {
	int kind;
	const char *key; /* into the line */
	size_t keylen;
	uint64_t addr;
};

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (hexval(s[i]) < 0)
			return 0;
	return 1;
}

static int model_addr(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (n < 1 || n > 16 || !all_hex(s, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		v = v << 4 | (uint64_t)hexval(s[i]);
	*out = v;
	return 1;
}

static struct model model_parse(const char *line, size_t len, size_t keylen)
{
	struct model m = {.kind = -EINVAL};
	const char *word[2];
	size_t wlen[2], n = 0;

	if (memchr(line, 0, len))
		return m;
	for (size_t i = 0; i < len;) {
		size_t start;

		if (is_space(line[i])) {
			i++;
			continue;
		}
		if (n == 2)
			return m; /* a third word */
		for (start = i; i < len && !is_space(line[i]); i++)
			;
		word[n] = line + start;
		wlen[n++] = i - start;
	}
	if (!n) {
		m.kind = DS_SYM_LINE_EMPTY;
		return m;
	}
	if (!model_addr(word[n - 1], wlen[n - 1], &m.addr))
		return m;
	if (n == 1) {
		m.kind = DS_SYM_LINE_ADDR;
		return m;
	}
	if (wlen[0] + 1 > keylen)
		return m;
	m.key = word[0];
	m.keylen = wlen[0];
	if (!memchr(word[0], '/', wlen[0]) && wlen[0] % 2 == 0 && wlen[0] >= 2 &&
	    wlen[0] <= 2 * DS_BUILD_ID_MAX && all_hex(word[0], wlen[0]))
		m.kind = DS_SYM_LINE_BUILD_ID;
	else
		m.kind = DS_SYM_LINE_PATH;
	return m;
}

/* --------------------------------------------------------------- checks */

struct answer {
	int kind;
	char *key;
	struct ds_build_id bid;
	uint64_t addr;
};

/* Parse with a key buffer of exactly keylen bytes (none for 0). */
static void parse(const char *line, size_t len, size_t keylen, struct answer *a)
{
	memset(a, 0, sizeof(*a));
	a->key = keylen ? malloc(keylen) : NULL;
	if (keylen && !a->key)
		abort();
	if (a->key)
		memset(a->key, 0x5a, keylen);
	a->kind = ds_sym_parse_line(line, len, a->key, keylen, &a->bid, &a->addr);
}

/* The build ID is the key's hex, byte for byte. */
static int bid_matches_key(const struct ds_build_id *bid, const char *key, size_t n)
{
	if (bid->size * 2u != n)
		return 0;
	for (size_t i = 0; i < bid->size; i++)
		if (bid->data[i] != (hexval(key[2 * i]) << 4 | hexval(key[2 * i + 1])))
			return 0;
	return 1;
}

static void check_keyed(const char *line, size_t len, size_t keylen, const struct answer *a,
			const struct model *m)
{
	size_t n = strnlen(a->key, keylen);

	if (n >= keylen)
		die("key not NUL-terminated within keylen", line, len, keylen, a->kind, m->kind);
	if (n != m->keylen || memcmp(a->key, m->key, n))
		die("key is not the first word", line, len, keylen, a->kind, m->kind);
	if (a->kind == DS_SYM_LINE_BUILD_ID && !bid_matches_key(&a->bid, a->key, n))
		die("build ID is not the key's bytes", line, len, keylen, a->kind, m->kind);
}

/* "KEY 0xADDR" (or "0xADDR") from the answer parses to the same answer. */
static void check_reparse(const char *line, size_t len, size_t keylen, const struct answer *a)
{
	struct answer b;
	char *text, *exact;
	int n;

	if (a->kind == DS_SYM_LINE_ADDR)
		n = asprintf(&text, "0x%" PRIx64, a->addr);
	else
		n = asprintf(&text, "%s\t0x%" PRIx64 "\n", a->key, a->addr);
	if (n < 0)
		abort();
	exact = malloc((size_t)n ? (size_t)n : 1);
	if (!exact)
		abort();
	memcpy(exact, text, (size_t)n);
	parse(exact, (size_t)n, keylen, &b);
	if (b.kind != a->kind || b.addr != a->addr ||
	    (a->key && a->kind != DS_SYM_LINE_ADDR && strcmp(a->key, b.key)) ||
	    (a->kind == DS_SYM_LINE_BUILD_ID && !ds_build_id_equal(&a->bid, &b.bid)))
		die("reparse differs", line, len, keylen, b.kind, a->kind);
	free(b.key);
	free(exact);
	free(text);
}

static void check_one(const char *line, size_t len, size_t keylen)
{
	struct model m = model_parse(line, len, keylen);
	struct answer a;

	parse(line, len, keylen, &a);
	if (a.kind != -EINVAL && (a.kind < DS_SYM_LINE_EMPTY || a.kind > DS_SYM_LINE_PATH))
		die("kind out of range", line, len, keylen, a.kind, m.kind);
	if (a.kind != m.kind)
		die("kind differs from the model", line, len, keylen, a.kind, m.kind);
	counts[a.kind < 0 ? 4 : a.kind]++;
	if (a.kind == DS_SYM_LINE_ADDR || a.kind >= DS_SYM_LINE_BUILD_ID) {
		if (a.addr != m.addr)
			die("address differs from the model", line, len, keylen, a.kind, m.kind);
		if (a.kind >= DS_SYM_LINE_BUILD_ID)
			check_keyed(line, len, keylen, &a, &m);
		check_reparse(line, len, keylen, &a);
	}
	free(a.key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size ? size : 1);

	if (!line)
		return 0;
	if (size)
		memcpy(line, data, size);
	for (size_t i = 0; i < sizeof(keylens) / sizeof(keylens[0]); i++)
		check_one(line, size, keylens[i]);
	free(line);
	return 0;
}
