/* Terminal-safe text (ds_term_escape(), ds_term_write(), ds_term_puts();
 * lib/common/termesc.c), against the rule as docs/output.md states it,
 * worked out here from first principles: each class of byte and code
 * point, the edges of each class, invalid UTF-8 of every kind (overlong,
 * surrogate, past U+10FFFF, cut short, stray continuation), snprintf()'s
 * contract of the buffer, and the writers agreeing with the buffer form.
 * Every code point U+0000-U+10FFFF is encoded here (not by the library)
 * and checked. */
#define _GNU_SOURCE
#include "testutil.h"

#include <dsostore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* in (len bytes) must come out as want; the return value is its length. */
static void expect(const char *in, size_t len, const char *want, int line)
{
	char buf[256], *mem = NULL;
	size_t n = ds_term_escape(buf, sizeof(buf), in, len), mlen = 0;
	FILE *f = open_memstream(&mem, &mlen);

	if (n != strlen(want) || strcmp(buf, want)) {
		fprintf(stderr, "line %d: escaped as \"%s\" (%zu), expected \"%s\"\n", line, buf, n,
			want);
		t_failures++;
	}
	/* the length alone (no buffer) is the same */
	CHECK_EQ_INT(ds_term_escape(NULL, 0, in, len), strlen(want));
	/* nothing changed exactly when the length is the input's */
	CHECK((n == len) == (len == strlen(want) && !memcmp(in, want, len)));
	if (!f || ds_term_write(f, in, len) || fclose(f)) {
		fprintf(stderr, "line %d: ds_term_write failed\n", line);
		t_failures++;
	} else if (mlen != strlen(want) || memcmp(mem, want, mlen)) {
		fprintf(stderr, "line %d: ds_term_write wrote \"%.*s\"\n", line, (int)mlen, mem);
		t_failures++;
	}
	free(mem);
}

#define EXPECT(lit, want) expect(lit, sizeof(lit) - 1, want, __LINE__)

/* cp as UTF-8 (RFC 3629), by hand; its length. */
static size_t encode(uint32_t cp, char *o)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static void classes(void)
{
	EXPECT("", "");
	EXPECT("main", "main");
	EXPECT("std::vector<int>::at(unsigned long) const", "std::vector<int>::at(unsigned long) const");
	EXPECT("a;b c", "a;b c"); /* folded's structure is no control */
	EXPECT("C:\\dir", "C:\\dir"); /* the backslash is itself */
	/* C0: the tab alone stays; the newline is escaped like the others */
	EXPECT("\t", "\t");
	EXPECT("a\nb", "a\\x0ab");
	EXPECT("\r", "\\x0d");
	EXPECT("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m");
	EXPECT("\x01", "\\x01");
	EXPECT("\x1f", "\\x1f");
	expect("a\0b", 3, "a\\x00b", __LINE__); /* a NUL inside a length */
	/* the edges of printable ASCII, DEL */
	EXPECT(" ", " ");
	EXPECT("~", "~");
	EXPECT("\x7f", "\\x7f");
	/* C1 as UTF-8: U+0080-U+009F; U+00A0 (no-break space) is text */
	EXPECT("\xc2\x80", "\\u0080");
	EXPECT("\xc2\x9b" "2J", "\\u009b2J");
	EXPECT("\xc2\x9f", "\\u009f");
	EXPECT("\xc2\xa0", "\xc2\xa0");
	/* C1 as a raw byte, which is never valid UTF-8 on its own */
	EXPECT("\x9b" "31m", "\\x9b31m");
	EXPECT("\x80", "\\x80");
	EXPECT("\x9f", "\\x9f");
	/* bidi controls and their neighbours */
	EXPECT("\xe2\x80\xa9", "\xe2\x80\xa9"); /* U+2029 */
	EXPECT("\xe2\x80\xaa", "\\u202a");
	EXPECT("\xe2\x80\xae" "txt.exe", "\\u202etxt.exe");
	EXPECT("\xe2\x80\xaf", "\xe2\x80\xaf"); /* U+202F */
	EXPECT("\xe2\x81\xa5", "\xe2\x81\xa5"); /* U+2065 */
	EXPECT("\xe2\x81\xa6", "\\u2066");
	EXPECT("\xe2\x81\xa9", "\\u2069");
	EXPECT("\xe2\x81\xaa", "\xe2\x81\xaa"); /* U+206A */
	/* other UTF-8 is itself, at the edges of each length */
	EXPECT("caf\xc3\xa9", "caf\xc3\xa9");
	EXPECT("\xdf\xbf", "\xdf\xbf"); /* U+07FF */
	EXPECT("\xe0\xa0\x80", "\xe0\xa0\x80"); /* U+0800 */
	EXPECT("\xef\xbf\xbf", "\xef\xbf\xbf"); /* U+FFFF */
	EXPECT("\xf0\x90\x80\x80", "\xf0\x90\x80\x80"); /* U+10000 */
	EXPECT("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
	/* invalid UTF-8: each byte of it as \xNN */
	EXPECT("\xc0\x80", "\\xc0\\x80"); /* overlong NUL */
	EXPECT("\xc1\xbf", "\\xc1\\xbf");
	EXPECT("\xe0\x80\xaf", "\\xe0\\x80\\xaf"); /* overlong '/' */
	EXPECT("\xf0\x8f\xbf\xbf", "\\xf0\\x8f\\xbf\\xbf"); /* overlong U+FFFF */
	EXPECT("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* surrogate U+D800 */
	EXPECT("\xed\x9f\xbf", "\xed\x9f\xbf"); /* U+D7FF is fine */
	EXPECT("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* U+110000 */
	EXPECT("\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80");
	EXPECT("\xff\xfe", "\\xff\\xfe");
	EXPECT("\xe2\x80", "\\xe2\\x80"); /* cut short at the end */
	EXPECT("\xe2\x80" "A", "\\xe2\\x80A"); /* cut short by ASCII */
	EXPECT("\xc3\xc3\xa9", "\\xc3\xc3\xa9"); /* a lead, then a whole one */
	EXPECT("\xe2\x1b", "\\xe2\\x1b");
	expect("\xe2\x80\xae", 2, "\\xe2\\x80", __LINE__); /* the length bounds it */
}

/* snprintf()'s contract: at most size - 1 bytes and a NUL, the whole
 * length returned. */
static void buffer(void)
{
	char buf[16];

	memset(buf, 'Z', sizeof(buf));
	CHECK_EQ_INT(ds_term_escape(buf, 5, "\x1b[1m", 4), 7);
	CHECK(!strcmp(buf, "\\x1b"));
	CHECK(buf[5] == 'Z');
	memset(buf, 'Z', sizeof(buf));
	CHECK_EQ_INT(ds_term_escape(buf, 3, "\x1b", 1), 4);
	CHECK(!strcmp(buf, "\\x")); /* cut inside an escape */
	CHECK_EQ_INT(ds_term_escape(buf, 1, "abc", 3), 3);
	CHECK(buf[0] == 0);
	memset(buf, 'Z', sizeof(buf));
	CHECK_EQ_INT(ds_term_escape(buf, 0, "abc", 3), 3);
	CHECK(buf[0] == 'Z');
	CHECK_EQ_INT(ds_term_escape(buf, 4, "abcdef", 6), 6);
	CHECK(!strcmp(buf, "abc"));
	CHECK_EQ_INT(ds_term_escape(buf, 4, "caf\xc3\xa9", 5), 5);
	CHECK(!memcmp(buf, "caf", 4)); /* cut inside a sequence: bytes, as snprintf */
	/* ds_term_puts: a C string; NULL writes nothing */
	{
		char *mem = NULL;
		size_t mlen = 0;
		FILE *f = open_memstream(&mem, &mlen);

		CHECK(f);
		CHECK_EQ_INT(ds_term_puts(f, NULL), 0);
		CHECK_EQ_INT(ds_term_puts(f, "x\x9b" "y\n"), 0);
		fclose(f);
		CHECK(mlen == 10 && !memcmp(mem, "x\\x9by\\x0a", 10));
		free(mem);
	}
}

/* Every code point, encoded here: escaped as \uNNNN exactly when it is a
 * control (C0 but the tab: \xNN; DEL: \x7f; C1: \u00NN) or a bidi
 * control; itself otherwise.  Surrogates are not encodable: their bytes
 * are invalid UTF-8, each as \xNN. */
static void every_code_point(void)
{
	unsigned bad = 0;

	for (uint32_t cp = 0; cp <= 0x10ffff; cp++) {
		char in[8], want[32], got[32];
		size_t n = encode(cp, in), g;

		if (cp >= 0xd800 && cp <= 0xdfff)
			snprintf(want, sizeof(want), "\\x%02x\\x%02x\\x%02x", (unsigned char)in[0],
				 (unsigned char)in[1], (unsigned char)in[2]);
		else if ((cp < 0x20 && cp != '\t') || cp == 0x7f)
			snprintf(want, sizeof(want), "\\x%02x", (unsigned)cp);
		else if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
			 (cp >= 0x2066 && cp <= 0x2069))
			snprintf(want, sizeof(want), "\\u%04x", (unsigned)cp);
		else {
			memcpy(want, in, n);
			want[n] = 0;
		}
		g = ds_term_escape(got, sizeof(got), in, n);
		if (g != strlen(want) || strcmp(got, want)) {
			if (bad++ < 10)
				fprintf(stderr, "U+%04X: escaped as \"%s\", expected \"%s\"\n",
					(unsigned)cp, got, want);
			t_failures++;
		}
	}
	CHECK_EQ_INT(bad, 0);
}

/* Every single byte on its own: printable ASCII and the tab stay, all
 * else (a byte >= 0x80 alone is never valid UTF-8) is \xNN. */
static void every_byte(void)
{
	for (unsigned b = 0; b < 256; b++) {
		char in = (char)b, want[8], got[8];

		if ((b >= 0x20 && b < 0x7f) || b == '\t')
			snprintf(want, sizeof(want), "%c", b);
		else
			snprintf(want, sizeof(want), "\\x%02x", b);
		ds_term_escape(got, sizeof(got), &in, 1);
		if (strcmp(got, want)) {
			fprintf(stderr, "byte 0x%02x: \"%s\", expected \"%s\"\n", b, got, want);
			t_failures++;
		}
	}
}

/* Each byte at each place of a longer plain string: the word-at-a-time
 * scan must see it wherever it sits in a word, and in the tail. */
static void every_byte_every_place(void)
{
	for (unsigned b = 0; b < 256; b++) {
		for (size_t at = 0; at < 27; at++) {
			char in[27], want[40], got[40];
			size_t n = 0;

			memset(in, 'a' + (int)(at % 26), sizeof(in));
			in[at] = (char)b;
			for (size_t i = 0; i < sizeof(in); i++) {
				unsigned c = (unsigned char)in[i];

				if ((c >= 0x20 && c < 0x7f) || c == '\t')
					want[n++] = (char)c;
				else
					n += (size_t)snprintf(want + n, sizeof(want) - n, "\\x%02x", c);
			}
			want[n] = 0;
			ds_term_escape(got, sizeof(got), in, sizeof(in));
			if (strcmp(got, want)) {
				fprintf(stderr, "byte 0x%02x at %zu: \"%s\", expected \"%s\"\n", b, at,
					got, want);
				t_failures++;
			}
		}
	}
}

int main(void)
{
	classes();
	buffer();
	every_byte();
	every_byte_every_place();
	every_code_point();
	return t_done("test_termesc");
}
