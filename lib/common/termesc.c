/* SPDX-License-Identifier: MIT */
/*
 * Text a terminal can trust (ds_term_escape(), ds_term_write()): every
 * string that came from an input (a recorded comm, a DSO path, a symbol, a
 * JIT map's name, a server's source file) is passed through here before it
 * is printed as text, so that no escape sequence, control character or
 * reordering of the line reaches the terminal.
 *
 * The rule (docs/output.md):
 *   - printable ASCII and the tab are themselves;
 *   - the other C0 controls (0x00-0x1f, the newline too) and DEL (0x7f)
 *     are "\xNN" (two lower-case hex digits);
 *   - valid UTF-8 (RFC 3629: no overlong forms, surrogates or code points
 *     past U+10FFFF) is itself, except the C1 controls U+0080-U+009F and
 *     the bidirectional embeddings, overrides and isolates U+202A-U+202E,
 *     U+2066-U+2069 ("Trojan Source"), which are "\uNNNN";
 *   - every byte that is not part of valid UTF-8 is "\xNN": so a lone 0x9b,
 *     which many terminals take as CSI, is "\x9b".
 * The backslash itself is not escaped: the escaped text is for eyes, not to
 * be parsed back, and names with backslashes print as perf prints them.
 * Every escape is longer than what it replaces, which gives callers a cheap
 * test: the escaped length equals the input's exactly when nothing changed.
 */
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Whether byte c may need escaping: a control, DEL or any non-ASCII byte.
 * The common case (plain ASCII names) never leaves the fast loop. */
static inline int term_special(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c >= 0x7f;
}

/* How many bytes from s[i] on (up to len) are plain: no term_special().
 * Eight at a time while no byte of a word is below 0x20, DEL or above
 * (bit tricks on the word: a byte b < 0x20 has b - 0x20 borrow into its
 * top bit, DEL is a zero byte of b ^ 0x7f, 0x80 and above have the top
 * bit); a word with one (a tab included) goes byte by byte. */
static inline size_t term_plain(const unsigned char *u, size_t i, size_t len)
{
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;

	while (len - i >= 8) {
		uint64_t w, del;

		memcpy(&w, u + i, 8);
		del = w ^ (0x7f * ones);
		if (((w - 0x20 * ones) | w | (del - ones)) & high)
			break;
		i += 8;
	}
	while (i < len && !term_special(u[i]))
		i++;
	return i;
}

/* The length of the valid UTF-8 sequence at s (at most n bytes, s[0] >=
 * 0x80), 0 if none; its code point in *cp. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0; /* a continuation byte alone, 0xc0, 0xc1, 0xf5-0xff */
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	*cp = c;
	return len;
}

static int term_bad_cp(uint32_t cp)
{
	return cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* One unit of the slow path at s[0..n) (s[0] special): *adv bytes of the
 * input it covers; its escape, NUL-terminated, in esc (12 bytes), or
 * esc empty when the bytes stand for themselves. */
static void term_unit(const unsigned char *s, size_t n, size_t *adv, char esc[12])
{
	static const char hex[] = "0123456789abcdef";
	uint32_t cp;
	size_t len;

	esc[0] = 0;
	if (s[0] < 0x80) {
		*adv = 1;
		goto byte;
	}
	len = utf8_seq(s, n, &cp);
	if (!len) {
		*adv = 1;
		goto byte;
	}
	*adv = len;
	if (term_bad_cp(cp))
		snprintf(esc, 12, "\\u%04x", (unsigned)cp);
	return;
byte:
	esc[0] = '\\';
	esc[1] = 'x';
	esc[2] = hex[s[0] >> 4];
	esc[3] = hex[s[0] & 15];
	esc[4] = 0;
}

size_t ds__term_plain(const char *s, size_t len)
{
	return term_plain((const unsigned char *)s, 0, len);
}

size_t ds_term_escape(char *out, size_t size, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t need = 0, i = 0;

	for (;;) {
		size_t start = i, adv;
		char esc[12];

		i = term_plain(u, i, len);
		if (i > start) {
			if (need < size)
				memcpy(out + need, u + start,
				       i - start < size - need ? i - start : size - need);
			need += i - start;
		}
		if (i >= len)
			break;
		term_unit(u + i, len - i, &adv, esc);
		if (!esc[0]) { /* valid UTF-8 that stands for itself */
			for (size_t k = 0; k < adv; k++, need++)
				if (need < size)
					out[need] = (char)u[i + k];
		} else {
			for (size_t k = 0; esc[k]; k++, need++)
				if (need < size)
					out[need] = esc[k];
		}
		i += adv;
	}
	if (size)
		out[need < size ? need : size - 1] = 0;
	return need;
}

int ds_term_write(FILE *f, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	for (;;) {
		size_t start = i, adv;
		char esc[12];

		i = term_plain(u, i, len);
		if (i > start && fwrite(u + start, 1, i - start, f) != i - start)
			return -EIO;
		if (i >= len)
			break;
		term_unit(u + i, len - i, &adv, esc);
		if (esc[0] ? fputs(esc, f) < 0 : fwrite(u + i, 1, adv, f) != adv)
			return -EIO;
		i += adv;
	}
	return 0;
}

int ds_term_puts(FILE *f, const char *s)
{
	return s ? ds_term_write(f, s, strlen(s)) : 0;
}
