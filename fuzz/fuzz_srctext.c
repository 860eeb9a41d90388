/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for annotate's source text (tools/cli_srctext.c): the line
 * index of a file's bytes and the two writers of its lines, to a terminal
 * and into JSON.  The bytes are what a debuginfod server sent, so any.
 * Checked, from the contract in cli_srctext.h rather than from the code:
 *   - the lines cover the text: each starts where the previous one's
 *     terminator ("\n", or "\r\n" with the CR cut) ended, the last ends
 *     at the end (with or without a newline), none holds a newline, and
 *     there are as many as newlines plus one for a last unterminated line;
 *   - the terminal form of each line (ds_term_write(), the library's
 *     escaping) is valid UTF-8 by iconv(3) with no code point a terminal
 *     acts on: no C0 control but the tab, no DEL, no C1 control, no bidi
 *     control; a line that is valid UTF-8 without them is itself, any
 *     other is longer;
 *   - the JSON form is a quoted string without a raw control character,
 *     valid UTF-8 by iconv(3) (glibc's decoder, not ours), and when the
 *     line is itself valid UTF-8 with nothing to escape, the line as it is.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include "cli_srctext.h"
#include "dsostore.h"

#include <errno.h>
#include <iconv.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

static unsigned long inputs, lines, utf8_lines;

void fuzz_summary(void)
{
	fprintf(stderr, "fuzz_srctext: %lu inputs, %lu lines (%lu of them valid UTF-8)\n", inputs,
		lines, utf8_lines);
}

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "fuzz_srctext: %s\n", what);
	abort();
}

/* Whether len bytes are valid UTF-8, as glibc's iconv decodes it; with
 * hostile, whether a code point among them is one a terminal acts on
 * (C0 but the tab, DEL, C1, the bidi controls U+202A-U+202E and
 * U+2066-U+2069). */
static bool utf8_scan(const char *s, size_t len, bool *hostile)
{
	static iconv_t cd = (iconv_t)-1;
	uint32_t out[1024];
	char *in = (char *)s;
	size_t left = len;

	if (cd == (iconv_t)-1 && (cd = iconv_open("UTF-32LE", "UTF-8")) == (iconv_t)-1)
		die("iconv_open(UTF-32LE, UTF-8) failed");
	iconv(cd, NULL, NULL, NULL, NULL);
	if (hostile)
		*hostile = false;
	while (left) {
		char *o = (char *)out;
		size_t ol = sizeof(out);
		bool bad = iconv(cd, &in, &left, &o, &ol) == (size_t)-1 && errno != E2BIG;

		for (uint32_t *c = out; hostile && c < (uint32_t *)o; c++)
			*hostile |= (*c < 0x20 && *c != '\t') || (*c >= 0x7f && *c <= 0x9f) ||
				    (*c >= 0x202a && *c <= 0x202e) ||
				    (*c >= 0x2066 && *c <= 0x2069);
		if (bad)
			return false;
	}
	return true;
}

static bool valid_utf8(const char *s, size_t len)
{
	return utf8_scan(s, len, NULL);
}

static char *render(void (*put)(FILE *, const char *, size_t), const char *s, size_t n,
		    size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		die("open_memstream failed");
	put(f, s, n);
	if (fclose(f))
		die("fclose of a memstream failed");
	return buf;
}

static void term_write(FILE *f, const char *s, size_t n)
{
	if (ds_term_write(f, s, n))
		die("ds_term_write failed on a memstream");
}

static void check_line(const char *s, size_t n)
{
	size_t clen, jlen;
	char *clean = render(term_write, s, n, &clen);
	char *json = render(srctext_put_json, s, n, &jlen);
	bool plain, hostile, clean_hostile;

	plain = utf8_scan(s, n, &hostile);
	if (!utf8_scan(clean, clen, &clean_hostile))
		die("the terminal form is not valid UTF-8");
	if (clean_hostile)
		die("a control character reaches the terminal form");
	if (plain && !hostile && (clen != n || memcmp(clean, s, n)))
		die("a line with nothing to escape is not itself on a terminal");
	if ((!plain || hostile) && clen <= n)
		die("a line with bytes to escape is not longer on a terminal");
	if (jlen < 2 || json[0] != '"' || json[jlen - 1] != '"')
		die("the JSON form is not a quoted string");
	for (size_t i = 0; i < jlen; i++)
		if ((unsigned char)json[i] < 0x20)
			die("a raw control character in the JSON form");
	if (!valid_utf8(json, jlen))
		die("the JSON form is not valid UTF-8");
	for (size_t i = 0; plain && i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
			plain = false;
	}
	utf8_lines += valid_utf8(s, n);
	if (plain && (jlen != n + 2 || memcmp(json + 1, s, n)))
		die("a line with nothing to escape is not itself in JSON");
	free(clean);
	free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct srctext t;
	size_t at = 0, newlines = 0;
	const char *base;

	inputs++;
	if (srctext_set(&t, (const char *)data, size))
		die("srctext_set failed (out of memory?)");
	base = t.text;
	for (size_t i = 0; i < size; i++)
		newlines += data[i] == '\n';
	if (t.nlines != newlines + (size && data[size - 1] != '\n'))
		die("not one line per newline (and one for an unterminated last line)");
	if (memcmp(t.text, data, size) || t.text[size])
		die("the text is not the bytes given, NUL-terminated");
	for (unsigned n = 1; n <= t.nlines; n++) {
		size_t len;
		const char *l = srctext_line(&t, n, &len);

		if (!l || l != base + at || at + len > size)
			die("a line does not start where the previous one ended");
		if (memchr(l, '\n', len))
			die("a line holds a newline");
		at += len;
		if (at < size && data[at] == '\r' && at + 1 < size && data[at + 1] == '\n')
			at++;
		else if (at < size && data[at] == '\r' && at + 1 == size)
			die("a CR at the very end was cut without a newline after it");
		if (at < size && data[at] != '\n')
			die("a line ends before its newline");
		at += at < size;
		lines++;
		check_line(l, len);
	}
	if (at != size)
		die("the lines do not cover the text");
	{
		size_t len;

		if (srctext_line(&t, 0, &len) || srctext_line(&t, (unsigned)t.nlines + 1, &len))
			die("a line 0, or one past the last");
	}
	srctext_release(&t);
	return 0;
}
