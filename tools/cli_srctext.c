/* Source text for annotate: see cli_srctext.h. */
#define _GNU_SOURCE
#include "cli_srctext.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int index_lines(struct srctext *t)
{
	size_t n = 0, k = 1;

	for (size_t i = 0; i < t->len; i++)
		n += t->text[i] == '\n';
	if (t->len && t->text[t->len - 1] != '\n')
		n++; /* a last line without its newline */
	t->line_at = reallocarray(NULL, n + 1, sizeof(*t->line_at));
	if (!t->line_at)
		return -ENOMEM;
	t->line_at[0] = 0;
	for (size_t i = 0; i + 1 < t->len; i++)
		if (t->text[i] == '\n')
			t->line_at[k++] = i + 1;
	t->line_at[n] = t->len;
	t->nlines = n;
	return 0;
}

/* Takes buf (malloc()ed, len + 1 bytes). */
static int adopt(struct srctext *t, char *buf, size_t len)
{
	struct srctext n = { .text = buf, .len = len };
	int err;

	buf[len] = 0;
	err = index_lines(&n);
	if (err) {
		free(buf);
		return err;
	}
	*t = n;
	return 0;
}

int srctext_set(struct srctext *t, const char *buf, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	return adopt(t, copy, len);
}

int srctext_read(struct srctext *t, const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		err = -EFBIG;
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	/* The file may change under us: what the size said, no more. */
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out;
		}
		if (!r)
			break;
		got += (size_t)r;
	}
	err = adopt(t, buf, got);
	buf = NULL;
out:
	free(buf);
	close(fd);
	return err;
}

void srctext_release(struct srctext *t)
{
	free(t->text);
	free(t->line_at);
	*t = (struct srctext){ 0 };
}

const char *srctext_line(const struct srctext *t, unsigned n, size_t *len)
{
	size_t b, e;

	if (!t->text || !n || n > t->nlines)
		return NULL;
	b = t->line_at[n - 1];
	e = t->line_at[n];
	if (e > b && t->text[e - 1] == '\n' && --e > b && t->text[e - 1] == '\r')
		e--;
	*len = e - b;
	return t->text + b;
}

size_t srctext_utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void srctext_put_json(FILE *f, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	putc('"', f);
	for (size_t i = 0; i < len;) {
		size_t n = srctext_utf8_len(u + i, len - i);

		if (!n) {
			fputs("\\ufffd", f);
			n = 1;
		} else if (n > 1) {
			fwrite(u + i, 1, n, f);
		} else if (u[i] == '"' || u[i] == '\\') {
			fprintf(f, "\\%c", u[i]);
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			fprintf(f, "\\u%04x", u[i]);
		} else {
			putc(u[i], f);
		}
		i += n;
	}
	putc('"', f);
}
