/* Compressed bodies of dsserver: the gzip fault and the gzip/deflate bombs.
 *
 * A bomb decodes to a file followed by zero bytes, up to gigabytes, so
 * neither the decoded data nor (for large N) even the whole compressed
 * stream is kept.  The stream is built from pieces, each a fresh raw
 * deflate stream ended by a sync flush: such a piece decodes the same
 * wherever it stands, and every ZERO_PIECE zero bytes compress to the same
 * piece.  So a body is
 *
 *	header, piece(file), piece(zeros) x nrep, last piece(rest), trailer
 *
 * and only the piece of zeros is repeated, when the body is read.  Building
 * one costs a compression of the file and of at most 2 x ZERO_PIECE zeros;
 * the last one built is kept for the next request that wants the same. */
#define _GNU_SOURCE
#include "dsserver.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define READ_BLOCK (64 * 1024)
#define ZERO_PIECE (4u << 20)
#define ZFILE_MAX  (256u << 20) /* largest file compressed */
/* Largest compressed piece: deflate adds a few bytes per 16 KiB stored. */
#define PIECE_MAX (ZFILE_MAX + (ZFILE_MAX >> 4))

struct zbody {
	unsigned refs; /* under cache.lock */
	/* the cache key: the file (as it was), the range, N and the format */
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t st_size;
	uint64_t off, fsize, n;
	enum zformat fmt;

	unsigned char *head, *rep, *tail;
	size_t head_len, rep_len, tail_len;
	uint64_t nrep;
};

static struct {
	pthread_mutex_t lock;
	struct zbody *last;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const unsigned char zeros[READ_BLOCK];

/* A growing output buffer; its bound keeps a runaway build from eating
 * the machine. */
struct zbuf {
	unsigned char *p;
	size_t len, cap;
};

static int zbuf_reserve(struct zbuf *b, size_t more)
{
	size_t need = b->len + more, cap = b->cap ? b->cap : 4096;
	unsigned char *p;

	if (need <= b->cap)
		return 0;
	if (need > PIECE_MAX)
		return -1;
	while (cap < need)
		cap *= 2;
	if (cap > PIECE_MAX)
		cap = PIECE_MAX;
	p = realloc(b->p, cap);
	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

static int zbuf_put(struct zbuf *b, const void *data, size_t n)
{
	if (zbuf_reserve(b, n))
		return -1;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

/* Feeds n bytes to deflate and keeps its output; with Z_SYNC_FLUSH or
 * Z_FINISH, until all of it is out. */
static int zrun(z_stream *zs, const void *in, size_t n, int flush, struct zbuf *out)
{
	zs->next_in = (Bytef *)in;
	zs->avail_in = n;
	for (;;) {
		int rc;

		if (zbuf_reserve(out, READ_BLOCK))
			return -1;
		zs->next_out = out->p + out->len;
		zs->avail_out = out->cap - out->len;
		rc = deflate(zs, flush);
		out->len = zs->next_out - out->p;
		if (rc == Z_STREAM_ERROR)
			return -1;
		if (flush == Z_FINISH ? rc == Z_STREAM_END : zs->avail_out != 0)
			return 0;
	}
}

/* One piece: len bytes of fd from off, or zero bytes if fd < 0, as a
 * fresh raw deflate stream; *check (CRC-32 or Adler-32) follows the file's
 * bytes.  Z_FINISH makes it the last piece. */
static int zpiece(z_stream *zs, int fd, uint64_t off, uint64_t len, int flush, enum zformat fmt,
		  uLong *check, struct zbuf *out)
{
	unsigned char *buf = fd >= 0 ? malloc(READ_BLOCK) : NULL;
	int rc = -1;

	if ((fd >= 0 && !buf) || deflateReset(zs) != Z_OK)
		goto out;
	while (len) {
		size_t n = len < READ_BLOCK ? len : READ_BLOCK;
		const unsigned char *in = zeros;

		if (fd >= 0) {
			if (pread(fd, buf, n, off) != (ssize_t)n)
				goto out;
			*check = fmt == ZF_GZIP ? crc32(*check, buf, n) : adler32(*check, buf, n);
			in = buf;
		}
		if (zrun(zs, in, n, Z_NO_FLUSH, out))
			goto out;
		off += n;
		len -= n;
	}
	rc = zrun(zs, NULL, 0, flush, out);
out:
	free(buf);
	return rc;
}

static uLong check_combine(enum zformat fmt, uLong a, uLong b, uint64_t blen)
{
	return fmt == ZF_GZIP ? crc32_combine64(a, b, (z_off64_t)blen)
			      : adler32_combine64(a, b, (z_off64_t)blen);
}

/* check, extended by n zero bytes: by doubling, so a terabyte of zeros
 * costs two combinations per bit of n, not a pass over it. */
static uLong check_zeros(enum zformat fmt, uLong check, uint64_t n)
{
	uLong pow = fmt == ZF_GZIP ? crc32(crc32(0, NULL, 0), zeros, 1)
				   : adler32(adler32(0, NULL, 0), zeros, 1);

	for (uint64_t len = 1; n; len *= 2, n >>= 1) {
		if (n & 1)
			check = check_combine(fmt, check, pow, len);
		if (n > 1)
			pow = check_combine(fmt, pow, pow, len);
	}
	return check;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put_be32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (24 - 8 * i);
}

static void zbody_free(struct zbody *z)
{
	if (!z)
		return;
	free(z->head);
	free(z->rep);
	free(z->tail);
	free(z);
}

static int zbody_build(struct zbody *z, int fd)
{
	/* gzip (RFC 1952): deflate, no flags, no mtime, Unix; zlib (RFC
	 * 1950): deflate with a 32 KiB window, default level. */
	static const unsigned char gzip_head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
	static const unsigned char zlib_head[2] = {0x78, 0x9c};
	uint64_t total = z->n > z->fsize ? z->n : z->fsize, nzeros = total - z->fsize;
	struct zbuf head = {0}, rep = {0}, tail = {0};
	unsigned char trailer[8];
	z_stream zs = {0};
	uLong check = z->fmt == ZF_GZIP ? crc32(0, NULL, 0) : adler32(0, NULL, 0), unused = 0;
	int rc = -1;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -1;
	if (z->fmt == ZF_GZIP ? zbuf_put(&head, gzip_head, sizeof(gzip_head))
			      : zbuf_put(&head, zlib_head, sizeof(zlib_head)))
		goto out;
	if (zpiece(&zs, fd, z->off, z->fsize, Z_SYNC_FLUSH, z->fmt, &check, &head))
		goto out;
	z->nrep = nzeros / ZERO_PIECE;
	if (z->nrep && zpiece(&zs, -1, 0, ZERO_PIECE, Z_SYNC_FLUSH, z->fmt, &unused, &rep))
		goto out;
	if (zpiece(&zs, -1, 0, nzeros % ZERO_PIECE, Z_FINISH, z->fmt, &unused, &tail))
		goto out;
	check = check_zeros(z->fmt, check, nzeros);
	if (z->fmt == ZF_GZIP) {
		put_le32(trailer, check);
		put_le32(trailer + 4, (uint32_t)total); /* ISIZE: the size mod 2^32 */
		rc = zbuf_put(&tail, trailer, 8);
	} else {
		put_be32(trailer, check);
		rc = zbuf_put(&tail, trailer, 4);
	}
out:
	deflateEnd(&zs);
	z->head = head.p;
	z->head_len = head.len;
	z->rep = rep.p;
	z->rep_len = rep.len;
	z->tail = tail.p;
	z->tail_len = tail.len;
	return rc;
}

static bool same_key(const struct zbody *a, const struct zbody *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec && a->st_size == b->st_size &&
	       a->off == b->off && a->fsize == b->fsize && a->n == b->n && a->fmt == b->fmt;
}

struct zbody *zbody_get(int fd, const struct stat *sb, uint64_t off, uint64_t fsize, uint64_t n,
			enum zformat fmt)
{
	struct zbody key = {.dev = sb->st_dev,
			    .ino = sb->st_ino,
			    .mtime = sb->st_mtim,
			    .st_size = sb->st_size,
			    .off = off,
			    .fsize = fsize,
			    .n = n,
			    .fmt = fmt};
	struct zbody *z;

	if (fsize > ZFILE_MAX)
		return NULL;
	pthread_mutex_lock(&cache.lock);
	z = cache.last;
	if (z && same_key(z, &key))
		z->refs++;
	else
		z = NULL;
	pthread_mutex_unlock(&cache.lock);
	if (z)
		return z;

	/* Built outside the lock: two requests that miss at once both build,
	 * which costs time, not correctness. */
	z = malloc(sizeof(*z));
	if (!z)
		return NULL;
	*z = key;
	if (zbody_build(z, fd)) {
		zbody_free(z);
		return NULL;
	}
	z->refs = 2; /* the caller's and the cache's */
	pthread_mutex_lock(&cache.lock);
	if (cache.last && !--cache.last->refs)
		zbody_free(cache.last);
	cache.last = z;
	pthread_mutex_unlock(&cache.lock);
	return z;
}

void zbody_put(struct zbody *z)
{
	bool last;

	if (!z)
		return;
	pthread_mutex_lock(&cache.lock);
	last = !--z->refs;
	pthread_mutex_unlock(&cache.lock);
	if (last)
		zbody_free(z);
}

void zbody_cache_clear(void)
{
	pthread_mutex_lock(&cache.lock);
	if (cache.last && !--cache.last->refs)
		zbody_free(cache.last);
	cache.last = NULL;
	pthread_mutex_unlock(&cache.lock);
}

uint64_t zbody_size(const struct zbody *z)
{
	return z->head_len + z->nrep * z->rep_len + z->tail_len;
}

size_t zbody_read(const struct zbody *z, uint64_t pos, void *buf, size_t max)
{
	uint64_t reps = z->nrep * z->rep_len;
	size_t done = 0;

	while (done < max) {
		const unsigned char *src;
		uint64_t avail, in;

		if (pos < z->head_len) {
			src = z->head + pos;
			avail = z->head_len - pos;
		} else if (pos - z->head_len < reps) {
			in = (pos - z->head_len) % z->rep_len;
			src = z->rep + in;
			avail = z->rep_len - in;
		} else if ((in = pos - z->head_len - reps) < z->tail_len) {
			src = z->tail + in;
			avail = z->tail_len - in;
		} else {
			break;
		}
		if (avail > max - done)
			avail = max - done;
		memcpy((unsigned char *)buf + done, src, avail);
		done += avail;
		pos += avail;
	}
	return done;
}
