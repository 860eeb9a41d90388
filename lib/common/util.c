/* SPDX-License-Identifier: MIT */
/* The bottom of the library (see util.h): error text, logging, strings, arrays. */
#define _GNU_SOURCE
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
	case EKEYREJECTED: /* lib/debuginfod/ima.c: ima:enforcing */
		return "no valid IMA signature";
	case EMSGSIZE: /* lib/debuginfod/transfer.c: a server's answer */
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

int ds__write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ds__open_regular(const char *path)
{
	struct stat st;
	int fd, flags;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
	}
	/* Blocking again: for a regular file it changes nothing today, but
	 * a library handed the fd must not meet EAGAIN. */
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0 && (flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

int ds__read_whole(const char *path, size_t hint, size_t max, char **out, size_t *len)
{
	size_t cap = hint < 4096 ? 4096 : hint, n = 0;
	int fd = ds__open_regular(path), err = 0;
	char *buf = NULL;

	if (fd < 0)
		return fd;
	if (cap > max)
		cap = max;
	if (!(buf = malloc(cap))) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *t;

			if (cap >= max) {
				err = -EFBIG;
				goto out;
			}
			cap = cap > max / 2 ? max : cap * 2;
			if (!(t = realloc(buf, cap))) {
				err = -ENOMEM;
				goto out;
			}
			buf = t;
		}
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	buf[n] = 0;
out:
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = n;
	return 0;
}

size_t ds__pread_upto(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	return done;
}

void ds__populate(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t page = 4096, from = ((uintptr_t)p + page - 1) & ~(page - 1),
		  end = ((uintptr_t)p + len) & ~(page - 1);

	if (end > from)
		(void)madvise((void *)from, end - from, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
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

struct ds__sum *ds__sum_new(void)
{
	XXH3_state_t *st = XXH3_createState();

	if (st && XXH3_64bits_reset(st) != XXH_OK) {
		XXH3_freeState(st);
		st = NULL;
	}
	return (struct ds__sum *)st;
}

void ds__sum_add(struct ds__sum *s, const void *data, size_t size)
{
	if (size)
		XXH3_64bits_update((XXH3_state_t *)s, data, size);
}

uint32_t ds__sum_end(struct ds__sum *s)
{
	uint32_t sum = (uint32_t)XXH3_64bits_digest((XXH3_state_t *)s);

	XXH3_freeState((XXH3_state_t *)s);
	return sum;
}

uint32_t ds__chunked_sum(const void *data, size_t size, uint32_t *sums)
{
	const unsigned char *b = data;
	XXH3_state_t st;

	if (!size)
		return 0; /* (nothing: no sum, as a saved index has it) */
	XXH3_64bits_reset(&st);
	for (size_t k = 0, off = 0; off < size; k++, off += DS__SUM_CHUNK) {
		uint32_t s = ds__blob_sum(b + off, size - off < DS__SUM_CHUNK ? size - off
									 : DS__SUM_CHUNK);

		if (sums)
			sums[k] = s;
		XXH3_64bits_update(&st, &s, sizeof(s));
	}
	return (uint32_t)XXH3_64bits_digest(&st);
}

/* ---- hashing and the clock, for the tables of the store */

uint64_t ds__mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

uint64_t ds__hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a, then mixed */

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return ds__mix64(h);
}

/* Build IDs are hashes already (sha1, md5, uuid): their first bytes do;
 * short ones, set by hand with --build-id=0x..., go through FNV. */
uint64_t ds__hash_bid(const struct ds_build_id *bid)
{
	uint64_t h;

	if (bid->size < 8)
		return ds__hash_bytes(bid->data, bid->size);
	memcpy(&h, bid->data, 8);
	return ds__mix64(h ^ bid->size);
}

int64_t ds__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
