/* Source text for annotate (tools/cli_srctext.c): a file read whole with its
 * lines indexed, and the writer that keeps untrusted text (a debuginfod
 * server's) valid in JSON.  Apart from the
 * command so that fuzz/fuzz_srctext.c can reach it. */
#ifndef DS_SRCTEXT_H
#define DS_SRCTEXT_H

#include <stddef.h>
#include <stdio.h>

struct srctext {
	char *text; /* NUL-terminated (NULs inside are text too) */
	size_t len;
	size_t *line_at; /* line_at[k]: where line k + 1 starts; [nlines]: len */
	size_t nlines;
};

/* Read the regular file at path, at most max bytes, whole.  0, or a
 * negative errno (-EFBIG over max, -EISDIR, -EINVAL not a regular file);
 * *t is untouched on failure. */
int srctext_read(struct srctext *t, const char *path, size_t max);
/* len bytes at buf as the text (copied).  0 or -ENOMEM. */
int srctext_set(struct srctext *t, const char *buf, size_t len);
void srctext_release(struct srctext *t);
/* Line n (1-based) without its newline (and a CR before it), *len bytes;
 * NULL past the last line or for n 0. */
const char *srctext_line(const struct srctext *t, unsigned n, size_t *len);

/* (On a terminal a line goes through ds_term_write(), as all text.) */
/* len bytes to f as a JSON string: escaped as JSON needs, every byte
 * that is not part of valid UTF-8 (RFC 3629) as U+FFFD. */
void srctext_put_json(FILE *f, const char *s, size_t len);
/* The length of the valid UTF-8 sequence at s (at most n > 0 bytes), 0 if
 * there is none: no overlong forms, surrogates or code points beyond
 * U+10FFFF. */
size_t srctext_utf8_len(const unsigned char *s, size_t n);

#endif
