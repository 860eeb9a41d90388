/* SPDX-License-Identifier: MIT */
/* The bottom room (see util.h): error text, logging, strings, arrays. */
#define _GNU_SOURCE
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Header-only: nothing of libxxhash at run time. */
#define XXH_INLINE_ALL
#include <xxhash.h>

DS_API const char *ds_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "success";
	case ENODATA:
		return "no GNU build ID";
	case ENOEXEC:
		return "not a valid ELF file";
	case ENOENT:
		return "not found";
	case EBADMSG:
		return "contents do not match";
	case EINVAL:
		return "invalid argument";
	case EMSGSIZE: /* lib/fetch.c: a server's answer */
		return "response headers too large";
	default:
		/* strerror() of glibc returns a static, immutable string for
		 * every known code; unknown ones get a generic text. */
		return err < 4096 ? strerror(err) : "unknown error";
	}
}

void ds__logf(const struct ds_log *lg, enum ds_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!lg || !lg->fn || level > lg->level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lg->fn(lg->user, level, msg);
}

void ds__strbuf_addf(struct ds_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int need;

	if (!sb)
		return;
	va_start(ap, fmt);
	need = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (need < 0)
		return;
	if (sb->len + need + 1 > sb->cap) {
		size_t cap = (sb->len + need + 1) * 2;
		char *nb = realloc(sb->buf, cap);

		if (!nb)
			return;
		sb->buf = nb;
		sb->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	sb->len += need;
}

void ds__strbuf_release(struct ds_strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void *ds__grow(void *v, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return v;
	ncap = *cap ? 2 * *cap : 16;
	nv = reallocarray(v, ncap, elem);
	if (nv)
		*cap = ncap;
	return nv;
}

uint32_t ds__blob_sum(const void *data, size_t size)
{
	return (uint32_t)XXH3_64bits(data, size);
}
